// include/flopwise/aten_call.h — one aten call as a profiler recorded it (a PyTorch trace's cpu_op with
// record_shapes=True): what the trace reader (flopwise/torch_trace.h) hands the TorchScript plugin, whose
// aten table lowers it into the IR to be costed by the same rules as a .pt's ops. No LibTorch types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flopwise/ir.h"

namespace flopwise {

struct AtenCall {
  std::string op;  // "aten::conv2d"
  // "Input type" per argument: a dtype ("float", "c10::Half", "long int"), "Scalar", "ScalarList",
  // "TensorList", or "" (not recorded: None, a string, a device, ...).
  std::vector<std::string> types;
  // "Input Dims" per argument: one shape for a tensor, one per tensor for a TensorList, none otherwise.
  std::vector<std::vector<std::vector<int64_t>>> dims;
  std::vector<std::string> concrete;  // "Concrete Inputs": scalars and lists as text ("[2, 2]", "1.", "True")
};

// The IR type of a recorded tensor type ("float", "c10::Half", "c10::BFloat16", "long int", "bool", ...);
// Undefined for anything else ("Scalar", "", "TensorList").
DType trace_dtype(const std::string& recorded);

}  // namespace flopwise
