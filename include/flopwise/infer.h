// flopwise/infer.h — the shape-inference pass (implemented in shape_inference/).
// Owns: propagating dtypes, shapes and small constant contents through a Graph, in node order,
// into subgraphs of If/Loop/Scan. It never reads weights and never guesses: unknown stays unknown.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "flopwise/ir.h"

namespace flopwise {

struct InputPin {
  std::string name;  // empty: applies to the next graph input in order
  std::optional<Shape> shape;
  std::optional<DType> dtype;
};

struct InferOptions {
  std::vector<InputPin> inputs;                        // --input NAME:1x3x224x224[:dtype]
  std::vector<std::pair<std::string, int64_t>> dims;   // --dim batch=8
  std::map<std::string, std::vector<int64_t>> values;  // --value NAME=4,2
};

struct InferResult {
  std::vector<std::string> warnings;
  // Ops with no shape function: op type ("domain::Op" outside the default domain) -> node names.
  std::map<std::string, std::vector<std::string>> unsupported;
};

// Applies pins, then infers every node. Throws UsageError for a pin naming no input, InputError for
// a negative dim in the model's inputs, ShapeError for a provable contradiction.
InferResult infer_shapes(Model& model, const InferOptions& opts);

// Infers nodes [first, last) of a top-level graph in order, the inputs' shapes already set: for an
// importer that needs shape facts while it builds the graph (TorchScript control flow that tests a rank
// or a size). Idempotent: the full pass (infer_shapes) still runs over the finished graph.
void infer_node_range(Graph& g, size_t first, size_t last, InferResult& res);

// Parsers for the CLI's pin syntax; throw UsageError with the offending text.
InputPin parse_input_pin(const std::string& text);                       // NAME:1x3x224x224[:dtype]
std::pair<std::string, int64_t> parse_dim_pin(const std::string& text);  // batch=8
std::pair<std::string, std::vector<int64_t>> parse_value_pin(const std::string& text);  // NAME=4,2

}  // namespace flopwise
