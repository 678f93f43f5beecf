// shape_inference/infer_graph.h — the pass over one graph, for control-flow ops that infer their bodies.
#pragma once

#include "flopwise/infer.h"

namespace flopwise {

// Infers every node of `g` in order. Outer-scope references take their type and contents from the
// enclosing graphs by name before the first node runs.
void infer_graph(Graph& g, InferResult& res);

}  // namespace flopwise
