// src/torch/torch_plugin.h — the C entry points of the TorchScript plugin (libflopwise_torch.so).
// Owns: the boundary between the CLI (or a test) and the LibTorch importer. No LibTorch types here: the
// CLI includes this header and dlopens the plugin only when a .pt is opened. C++ types cross the
// boundary (same compiler, same build), errors come back as a code and one line of text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "flopwise/infer.h"
#include "flopwise/ir.h"

// Return codes of the entry points.
enum FlopwiseTorchStatus : int {
  kTorchOk = 0,
  kTorchInputError = 1,  // unreadable, not a zip, not TorchScript, unknown (custom) operator
  kTorchUsageError = 2,  // an input without shape (scripted module and no --input)
};

// Imports the TorchScript module at `path` into `out` (format "torchscript"): the forward graph inlined,
// each node's scope and class from its inlined call stack, parameters as initializers (each tensor once),
// input shapes from `pins` or the file's recorded example inputs. On error writes one line into `err`.
extern "C" int flopwise_torch_import(const char* path, const flopwise::InferOptions* pins,
                                     flopwise::Model* out, char* err, size_t errlen);
using FlopwiseTorchImportFn = int (*)(const char*, const flopwise::InferOptions*, flopwise::Model*, char*,
                                      size_t);

namespace flopwise {
struct AtenCall;
}

// Lowers each recorded aten call (a PyTorch trace's cpu_op, flopwise/aten_call.h) into a Model of its own
// through the aten table: its tensor arguments are graph inputs of the recorded shapes and types, its scalars
// and lists constants. (*out)[i] is call i's model, or has no nodes and (*why)[i] says why (no schema matches
// the recorded arguments, not an aten op, ...). Never throws; returns kTorchOk.
extern "C" int flopwise_torch_lower_calls(const std::vector<flopwise::AtenCall>* calls,
                                          std::vector<flopwise::Model>* out, std::vector<std::string>* why);
using FlopwiseTorchLowerCallsFn = int (*)(const std::vector<flopwise::AtenCall>*,
                                          std::vector<flopwise::Model>*, std::vector<std::string>*);
