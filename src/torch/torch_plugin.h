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
