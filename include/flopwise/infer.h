// include/flopwise/infer.h — the shape-inference pass (implemented in shape_inference/).
// Owns: propagating dtypes, shapes and small constant contents through a Graph, in node order,
// into subgraphs of If/Loop/Scan. It never reads weights and never guesses: unknown stays unknown.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "flopwise/ir.h"
#include "flopwise/pins.h"

namespace flopwise {

// A case the shape pass could not decide for every value of the symbols, decided as a valid model needs
// it: `lhs <= rhs` (e.g. seq <= 128 where a sequence is added to a slice of a 128-row position table).
// The formulas hold where it holds; a sweep flags the points where it does not.
struct Assumption {
  Dim lhs, rhs;
  std::string node;  // where it was needed
  std::string why;
  std::string text() const { return lhs.str() + " <= " + rhs.str(); }
};

// A dim name the model declares on a value (value_info, a graph output: `past_plus_seq`) that inference
// proved equal to an expression of the input dims (`past + seq`). Either name can be bound with --dim.
struct DimAlias {
  std::string name;
  Dim value;
  std::string where;  // the first value declaring it
  std::string text() const { return name + " = " + value.str(); }
};

// A size the model computes from tensor contents: NonZero's count, a boolean mask's selection (Compress,
// x[mask], masked_select), Unique's distinct values. Where the contents are not known it is a fresh symbol,
// named after its op and numbered in node order (`nonzero_1`, `masked_select_2`), with the bounds the op
// implies (a NonZero of N elements: 0..N); everything downstream is a formula in it, --dim binds it and
// --sweep sweeps it. Known contents (constants, --value) fold it to a number, and no symbol is made.
struct DataDepSymbol {
  std::string name;   // "nonzero_1"
  std::string node;   // the node that made it
  std::string op;     // its op: "NonZero", or the source's ("aten::masked_select")
  std::string scope;  // that node's module scope ("" for the root)
  Dim lo, hi;         // lo <= name <= hi, expressions of the model's dims (Unknown: no bound known)
  std::optional<int64_t> value;     // bound with --dim: the pass used this number for it
  const Graph* graph = nullptr;     // where the node is, and its output that holds the size: the same node
  int output = -1;                  // inferred again (an incremental pass, a loop body) keeps its symbol
  std::string bounds_text() const;  // "0 <= nonzero_1 <= 4096"
};

struct InferResult {
  // Input to the pass: values --dim gives data-dependent sizes by name (the pass uses the number).
  std::vector<std::pair<std::string, int64_t>> symbol_values;
  std::vector<DataDepSymbol> symbols;  // the data-dependent sizes made, in node order
  std::vector<std::string> warnings;
  std::vector<Assumption> assumptions;
  std::vector<DimAlias> aliases;  // in the order first met
  // Declared shapes that disagree with what inference proved (the inferred one is kept): value names.
  std::vector<std::string> declared_conflicts;
  // Ops with no shape function: op type ("domain::Op" outside the default domain) -> node names.
  std::map<std::string, std::vector<std::string>> unsupported;
};

// Infers every node of the model as its inputs stand (pins already applied: flopwise/pins.h). Throws
// InputError for a negative dim in the model's inputs.
InferResult infer_shapes(Model& model);
// The same, with the given numbers for data-dependent sizes (DataDepSymbol, by name) where the pass meets
// them.
InferResult infer_shapes_with_symbols(Model& model,
                                      const std::vector<std::pair<std::string, int64_t>>& symbol_values);
// apply_pins, then infer_shapes (the pins' warnings first): what analyse() does after loading.
InferResult infer_shapes(Model& model, const Pins& pins);

// Infers nodes [first, last) of a top-level graph in order, the inputs' shapes already set: for an
// importer that needs shape facts while it builds the graph (TorchScript control flow that tests a rank
// or a size). Idempotent: the full pass (infer_shapes) still runs over the finished graph.
void infer_node_range(Graph& g, size_t first, size_t last, InferResult& res);

}  // namespace flopwise
