// include/flopwise/pins.h — what a user fixes about a model before it is analysed: input shapes and dtypes
// (--input), values of symbolic dims (--dim), contents of shape-like inputs (--value). Their parsers, and
// their application to the IR, which happens before (and apart from) the shape pass.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "flopwise/ir.h"

namespace flopwise {

struct InputPin {
  std::string name;  // empty: applies to the next graph input in order
  std::optional<Shape> shape;
  std::optional<DType> dtype;
};

struct Pins {
  std::vector<InputPin> inputs;                        // --input NAME:1x3x224x224[:dtype]
  std::vector<std::pair<std::string, int64_t>> dims;   // --dim batch=8
  std::map<std::string, std::vector<int64_t>> values;  // --value NAME=4,2
  std::string program;  // --program NAME: which program of a .pt2 archive that holds several
  bool empty() const { return inputs.empty() && dims.empty() && values.empty(); }
};
using InferOptions = Pins;  // the name the shape pass's callers knew it by

// Sets pinned inputs' shapes, dtypes and contents, then binds --dim values everywhere a symbol can stand
// (shapes, contents, declared types, subgraphs). Returns warnings (a pin that changes an input's rank).
// Throws UsageError for a pin naming no input of the model.
std::vector<std::string> apply_pins(Model& model, const Pins& pins);

// The symbols of the model's input dims (the top graph's, when given a subgraph): the names --dim binds
// directly, and the only names a declared shape may bring in.
std::set<std::string> input_symbols(const Graph& g);

// Parsers for the CLI's pin syntax; throw UsageError with the offending text.
InputPin parse_input_pin(const std::string& text);                       // NAME:1x3x224x224[:dtype]
std::pair<std::string, int64_t> parse_dim_pin(const std::string& text);  // batch=8
std::pair<std::string, std::vector<int64_t>> parse_value_pin(const std::string& text);  // NAME=4,2
// The pins of --input, --dim and --value texts, each parsed as above.
Pins parse_pins(const std::vector<std::string>& inputs, const std::vector<std::string>& dims,
                const std::vector<std::string>& values);

}  // namespace flopwise
