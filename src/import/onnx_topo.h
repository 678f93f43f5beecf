// src/import/onnx_topo.h — a graph's nodes put in dependency order when its file lists them unsorted.
#pragma once

#include <string>
#include <vector>

#include "flopwise/ir.h"

namespace flopwise::onnx_detail {

// Nodes in dependency order. Files are meant to be sorted (the checker rejects others), but fp16
// converters and hand edits write unsorted ones that ONNX Runtime runs: sorted here, stably (nodes
// keep their file order where the data allows), once, with a warning. A cycle is an error naming it.
// `path` names the file in the cycle's error; the warning goes to `warnings`.
void sort_nodes(Graph& g, const std::string& path, std::vector<std::string>* warnings);

}  // namespace flopwise::onnx_detail
