// src/ir/pins.cc — pins: the user's facts about a model's inputs (--input, --dim, --value), parsed and
// applied to the IR before the shape pass.
#include "flopwise/pins.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "flopwise/errors.h"

namespace flopwise {

namespace {

// Binds --dim values everywhere a symbol can stand: shapes, contents, declared types, subgraphs.
void substitute_dims(Graph& g, const std::vector<std::pair<std::string, int64_t>>& dims) {
  for (auto& v : g.values) {
    for (auto& d : v.shape.dims) d = d.substitute(dims);
    if (v.data && !v.data->is_float)
      for (auto& d : v.data->ints) d = d.substitute(dims);
    if (v.declared)
      for (auto& d : v.declared->second.dims) d = d.substitute(dims);
  }
  for (auto& n : g.nodes)
    for (auto& sg : n.subgraphs) substitute_dims(*sg, dims);
}

}  // namespace

std::set<std::string> input_symbols(const Graph& g) {
  const Graph* top = &g;
  while (top->parent) top = top->parent;
  std::set<std::string> syms;
  for (int i : top->inputs)
    for (const auto& d : top->values[static_cast<size_t>(i)].shape.dims)
      for (auto& s : d.symbols()) syms.insert(std::move(s));
  return syms;
}

std::vector<std::string> apply_pins(Model& model, const Pins& opts) {
  Graph& g = model.graph;
  std::vector<std::string> warnings;
  std::string names;
  for (int i : g.inputs) names += (names.empty() ? "" : ", ") + g.values[i].name;
  size_t next_positional = 0;
  for (const auto& pin : opts.inputs) {
    int idx = -1;
    if (pin.name.empty()) {
      if (next_positional >= g.inputs.size())
        throw UsageError("more --input shapes than the model's " + std::to_string(g.inputs.size()) +
                         " inputs");
      idx = g.inputs[next_positional++];
    } else {
      idx = g.find(pin.name);
      if (idx < 0 || !(g.values[idx].is_input || g.values[idx].is_initializer))
        throw UsageError("--input names '" + pin.name +
                         "', which is not an input of the model (inputs: " + names + ")");
    }
    Value& v = g.values[idx];
    if (pin.shape) {
      if (v.shape.rank_known && pin.shape->rank_known && v.shape.rank() != pin.shape->rank())
        warnings.push_back("input '" + v.name + "' declared with rank " + std::to_string(v.shape.rank()) +
                           ", pinned as " + pin.shape->str());
      v.shape = *pin.shape;
    }
    if (pin.dtype) v.dtype = *pin.dtype;
  }
  for (const auto& [name, vals] : opts.values) {
    int idx = g.find(name);
    // An input, or an initializer whose contents live in external data (never read): a graph-only copy.
    const bool external =
        idx >= 0 && g.values[idx].is_initializer && g.values[idx].external && !g.values[idx].data;
    if (idx < 0 || !(g.values[idx].is_input || external))
      throw UsageError("--value names '" + name + "', which is not an input of the model (inputs: " + names +
                       ") nor an initializer stored in external data");
    Value& v = g.values[idx];
    if (external) {
      const Count numel = v.shape.numel_count();
      if (numel.known && numel.v != static_cast<int64_t>(vals.size()))
        throw UsageError("--value " + name + ": " + std::to_string(vals.size()) +
                         " values for an initializer of shape " + v.shape.str());
    }
    ConstData d;
    for (auto x : vals) d.ints.push_back(Dim(x));
    if (is_float(v.dtype)) {
      d.is_float = true;
      for (auto x : vals) d.floats.push_back(static_cast<double>(x));
      d.ints.clear();
    }
    if (!v.shape.rank_known || !v.shape.fully_known())
      v.shape = v.shape.rank_known && v.shape.rank() == 0 && vals.size() == 1
                    ? Shape::scalar()
                    : Shape({Dim(static_cast<int64_t>(vals.size()))});
    v.data = std::move(d);
  }
  if (!opts.dims.empty()) {
    substitute_dims(g, opts.dims);
  }
  return warnings;
}

// ---- pin parsers ----------------------------------------------------------------------------------
namespace {
int64_t parse_int(const std::string& s, const std::string& what) {
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno == ERANGE)
    throw UsageError(what + ": '" + s + "' is not an integer");
  return v;
}
}  // namespace

Pins parse_pins(const std::vector<std::string>& inputs, const std::vector<std::string>& dims,
                const std::vector<std::string>& values) {
  Pins p;
  for (const auto& s : inputs) p.inputs.push_back(parse_input_pin(s));
  for (const auto& s : dims) p.dims.push_back(parse_dim_pin(s));
  for (const auto& s : values) p.values.insert(parse_value_pin(s));
  return p;
}

InputPin parse_input_pin(const std::string& text) {
  // [NAME:]SHAPE[:DTYPE], read from the right: the last field is a dtype when it names one, the field
  // before it the shape, and everything before that the name, colons and all (tf2onnx's "input:0",
  // PyTorch's "onnx::Flatten_0").
  InputPin pin;
  std::vector<std::string> parts;
  for (size_t pos = 0;;) {
    size_t c = text.find(':', pos);
    parts.push_back(text.substr(pos, c == std::string::npos ? std::string::npos : c - pos));
    if (c == std::string::npos) break;
    pos = c + 1;
  }
  size_t end = parts.size();
  if (end >= 2 && parse_dtype(parts.back())) {
    pin.dtype = parse_dtype(parts.back());
    --end;
  } else if (end >= 2) {  // "float8", "int4": a dtype misspelt or not supported, not a shape
    static const char* kinds[] = {"float", "int",  "uint",    "bfloat", "double",
                                  "half",  "bool", "complex", "string"};
    for (const char* k : kinds)
      if (parts.back().rfind(k, 0) == 0)
        throw UsageError("--input '" + text + "': unknown dtype '" + parts.back() + "'");
  }
  const std::string& shape = parts[end - 1];
  for (size_t i = 0; i + 1 < end; ++i) pin.name += (i ? ":" : "") + parts[i];
  if (end >= 2 && pin.name.empty()) throw UsageError("--input '" + text + "': empty input name");
  auto s = parse_shape(shape);
  if (!s)
    throw UsageError(
        "--input '" + text + "': bad shape '" + shape +
        "' (expected [NAME:]SHAPE[:DTYPE], e.g. input:1x3x224x224, 'input:0:1x3xHxW:float16', or with "
        "commas 1,3,H,W: a dim name with an 'x' in it needs the comma form, batch,max_len)");
  for (const auto& d : s->dims)
    if (d.is_known() && d.value() < 0) throw UsageError("--input '" + text + "': negative dim");
  pin.shape = *s;
  return pin;
}

std::pair<std::string, int64_t> parse_dim_pin(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw UsageError("--dim '" + text + "': expected NAME=VALUE");
  int64_t v = parse_int(text.substr(eq + 1), "--dim " + text.substr(0, eq));
  if (v < 0) throw UsageError("--dim '" + text + "': negative value");
  return {text.substr(0, eq), v};
}

std::pair<std::string, std::vector<int64_t>> parse_value_pin(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw UsageError("--value '" + text + "': expected NAME=V1,V2,...");
  std::vector<int64_t> vals;
  std::stringstream ss(text.substr(eq + 1));
  for (std::string p; std::getline(ss, p, ',');)
    vals.push_back(parse_int(p, "--value " + text.substr(0, eq)));
  return {text.substr(0, eq), vals};
}

}  // namespace flopwise
