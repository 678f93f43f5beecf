// src/ir/aten_call.cc — the element types a PyTorch trace records (flopwise/aten_call.h): the names
// c10's TypeMeta gives each ScalarType.
#include "flopwise/aten_call.h"

#include <utility>

namespace flopwise {

DType trace_dtype(const std::string& recorded) {
  static const std::pair<const char*, DType> kNames[] = {
      {"float", DType::Float32},
      {"double", DType::Float64},
      {"c10::Half", DType::Float16},
      {"c10::BFloat16", DType::BFloat16},
      {"c10::Float8_e4m3fn", DType::Float8E4M3FN},
      {"c10::Float8_e5m2", DType::Float8E5M2},
      {"c10::Float8_e4m3fnuz", DType::Float8E4M3FNUZ},
      {"c10::Float8_e5m2fnuz", DType::Float8E5M2FNUZ},
      {"long int", DType::Int64},
      {"long", DType::Int64},
      {"int", DType::Int32},
      {"short int", DType::Int16},
      {"short", DType::Int16},
      {"signed char", DType::Int8},
      {"unsigned char", DType::UInt8},
      {"bool", DType::Bool},
      {"c10::complex<float>", DType::Complex64},
      {"c10::complex<double>", DType::Complex128},
      {"unsigned short", DType::UInt16},
      {"unsigned int", DType::UInt32},
      {"unsigned long", DType::UInt64},
  };
  for (const auto& [name, t] : kNames)
    if (recorded == name) return t;
  return DType::Undefined;
}

}  // namespace flopwise
