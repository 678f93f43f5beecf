// src/cli/load.h — opens a model file of any supported format into the IR.
#pragma once

#include <fstream>
#include <ostream>
#include <string>

#include "flopwise/infer.h"
#include "flopwise/ir.h"

namespace flopwise {

enum class ModelFormat { Onnx, TorchScript, ReportJson, Unknown };

// From the file's first bytes (zip magic: TorchScript; '{': a saved JSON report), else its extension.
ModelFormat detect_format(const std::string& path);

// Loads an .onnx or TorchScript model; throws InputError (unreadable, unsupported format) with one line.
// `pins` gives TorchScript inputs their shapes (ONNX models carry their own; pins apply later).
Model load_model(const std::string& path, const InferOptions& pins);

// Where a command writes its report: `path` opened into `file` (-o FILE), or stdout when empty. Throws
// UsageError when the file cannot be written.
std::ostream& output_stream(const std::string& path, std::ofstream& file);

// The directory of the running executable (where the TorchScript plugin and flopwise-runtime sit).
std::string exe_dir();

}  // namespace flopwise
