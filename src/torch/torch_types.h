// src/torch/torch_types.h — the one correspondence between torch's scalar types and the IR's dtypes,
// and the small string helpers the TorchScript importer's files share. Sees LibTorch (c10) headers:
// include only from src/torch/ and the LibTorch test probe.
#pragma once

#include <c10/core/ScalarType.h>

#include <optional>
#include <sstream>
#include <string>

#include "flopwise/ir.h"

namespace flopwise {

constexpr std::pair<c10::ScalarType, DType> kScalarTypes[] = {
    {c10::ScalarType::Float, DType::Float32}, {c10::ScalarType::Double, DType::Float64},
    {c10::ScalarType::Half, DType::Float16},  {c10::ScalarType::BFloat16, DType::BFloat16},
    {c10::ScalarType::Long, DType::Int64},    {c10::ScalarType::Int, DType::Int32},
    {c10::ScalarType::Short, DType::Int16},   {c10::ScalarType::Char, DType::Int8},
    {c10::ScalarType::Byte, DType::UInt8},    {c10::ScalarType::Bool, DType::Bool},
};

inline std::optional<DType> dtype_of_scalar_type(int64_t st) {
  for (const auto& [torch_type, dtype] : kScalarTypes)
    if (static_cast<int64_t>(torch_type) == st) return dtype;
  return std::nullopt;
}

// Float for types torch has no match for (zero inputs for a shape run only).
inline c10::ScalarType scalar_type_of(DType t) {
  for (const auto& [torch_type, dtype] : kScalarTypes)
    if (dtype == t) return torch_type;
  return c10::ScalarType::Float;
}

// The first non-blank line of a (multi-line) LibTorch message.
inline std::string first_line(const std::string& s) {
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
  return s;
}

// "__torch__.torchvision.models.resnet.___torch_mangle_3.BasicBlock" -> "BasicBlock".
inline std::string clean_class(const std::string& q) {
  auto dot = q.rfind('.');
  return dot == std::string::npos ? q : q.substr(dot + 1);
}

}  // namespace flopwise
