// src/import/onnx_normalize.h — rewrites older ONNX op versions into the newest layout.
#pragma once

#include "flopwise/ir.h"

namespace flopwise {

// Called for each node before its outputs are added; may add constant values to `g`.
void normalize_onnx_node(Node& n, Graph& g);

}  // namespace flopwise
