// include/flopwise/onnx_import.h — ONNX importer: .onnx (protobuf) into the common IR.
// Owns: reading ModelProto, opset normalisation, scope recovery from node names and metadata.
// Never reads weight bytes, never opens external data files. Protobuf stays inside src/import/.
#pragma once

#include <string>

#include "flopwise/ir.h"

namespace flopwise {

// Throws InputError (missing file, not ONNX, truncated, malformed) with a one-line reason.
Model import_onnx_file(const std::string& path);
Model import_onnx_bytes(const std::string& bytes, const std::string& path_for_messages);

// Scope path from an exporter node name: "/layer1/layer1.0/conv1/Conv" -> {"layer1", "layer1.0",
// "layer1.0.conv1"}. Empty for names without a path.
std::vector<std::string> scope_from_node_name(const std::string& node_name);

}  // namespace flopwise
