// src/cli/torch_loader.h — opens a TorchScript model through the plugin libflopwise_torch.so, loaded
// (dlopen) only now, so that the ONNX path never loads LibTorch.
#pragma once

#include <string>

#include "flopwise/infer.h"
#include "flopwise/ir.h"

namespace flopwise {

// Where the plugin is looked for: $FLOPWISE_TORCH_PLUGIN, then next to the flopwise executable, then
// ../lib/flopwise/ relative to it. Empty when none exists.
std::string find_torch_plugin();

// Imports a .pt; throws InputError (no plugin: names the package to install; unreadable or not
// TorchScript) or UsageError (an input without shape) with one line.
Model load_torchscript(const std::string& path, const InferOptions& pins);

}  // namespace flopwise
