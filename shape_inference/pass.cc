#include "pass.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "flopwise/errors.h"
#include "flopwise/ops.h"

namespace flopwise {

namespace {
const Shape& unknown_shape() {
  static const Shape s;
  return s;
}
}  // namespace

// ---- InferContext -------------------------------------------------------------------------------
const Shape& InferContext::in_shape(size_t i) const {
  const Value* v = input(i);
  return v ? v->shape : unknown_shape();
}
DType InferContext::in_dtype(size_t i) const {
  const Value* v = input(i);
  return v ? v->dtype : DType::Undefined;
}
const ConstData* InferContext::in_data(size_t i) const {
  const Value* v = input(i);
  return v && v->data ? &*v->data : nullptr;
}
std::optional<std::vector<int64_t>> InferContext::in_ints(size_t i) const {
  const ConstData* d = in_data(i);
  if (!d) return std::nullopt;
  std::vector<int64_t> out;
  if (d->is_float) {
    for (double f : d->floats) out.push_back(static_cast<int64_t>(f));
    return out;
  }
  for (const auto& x : d->ints) {
    if (!x.is_known()) return std::nullopt;
    out.push_back(x.value());
  }
  return out;
}
std::optional<std::vector<double>> InferContext::in_floats(size_t i) const {
  const ConstData* d = in_data(i);
  if (!d) return std::nullopt;
  if (d->is_float) return d->floats;
  std::vector<double> out;
  for (const auto& x : d->ints) {
    if (!x.is_known()) return std::nullopt;
    out.push_back(static_cast<double>(x.value()));
  }
  return out;
}
void InferContext::set_output(size_t i, DType t, Shape s) {
  Value* v = output(i);
  if (!v) return;
  if (t != DType::Undefined) v->dtype = t;
  v->shape = std::move(s);
}
void InferContext::set_output_dtype(size_t i, DType t) {
  Value* v = output(i);
  if (v && t != DType::Undefined) v->dtype = t;
}
void InferContext::set_output_data(size_t i, ConstData d) {
  Value* v = output(i);
  if (!v || static_cast<int64_t>(d.size()) > kMaxConstElements) return;
  v->data = std::move(d);
}
void InferContext::warn(const std::string& msg) {
  if (warnings_) warnings_->push_back(node_.op + " node '" + node_.name + "': " + msg);
}
void InferContext::fail(const std::string& msg) const {
  throw ShapeError(node_.op + " node '" + node_.name + "': " + msg);
}

// ---- CostContext --------------------------------------------------------------------------------
const Shape& CostContext::in_shape(size_t i) const {
  return has_input(i) ? graph.values[node.inputs[i]].shape : unknown_shape();
}
const Shape& CostContext::out_shape(size_t i) const {
  return i < node.outputs.size() && node.outputs[i] >= 0 ? graph.values[node.outputs[i]].shape
                                                         : unknown_shape();
}
DType CostContext::in_dtype(size_t i) const {
  return has_input(i) ? graph.values[node.inputs[i]].dtype : DType::Undefined;
}
const ConstData* CostContext::in_data(size_t i) const {
  if (!has_input(i)) return nullptr;
  const auto& v = graph.values[node.inputs[i]];
  return v.data ? &*v.data : nullptr;
}
Count CostContext::out_numel(size_t i) const { return out_shape(i).numel_count(); }
Count CostContext::in_numel(size_t i) const { return in_shape(i).numel_count(); }

// ---- the pass -----------------------------------------------------------------------------------
static std::string op_key(const Node& n) {
  return n.domain.empty() || n.domain == "ai.onnx" ? n.op : n.domain + "::" + n.op;
}

// Fills dims that inference left unknown from what the model declares; never overrides.
static void fill_from_declared(Value& v) {
  if (!v.declared) return;
  const auto& [dt, ds] = *v.declared;
  if (v.dtype == DType::Undefined) v.dtype = dt;
  if (!ds.rank_known) return;
  if (!v.shape.rank_known) {
    v.shape = ds;
    return;
  }
  if (v.shape.rank() != ds.rank()) return;
  for (size_t i = 0; i < ds.rank(); ++i)
    if (v.shape.dims[i].is_unknown()) v.shape.dims[i] = ds.dims[i];
}

static void bind_outer(Graph& g) {
  for (auto& v : g.values) {
    if (!v.is_outer) continue;
    for (const Graph* p = g.parent; p; p = p->parent) {
      int idx = p->find(v.name);
      if (idx < 0) continue;
      const Value& src = p->values[idx];
      v.dtype = src.dtype;
      v.shape = src.shape;
      v.data = src.data;
      break;
    }
  }
}

static void infer_range(Graph& g, size_t first, size_t last, const InferOptions& opts, InferResult& res) {
  const OpRegistry& reg = OpRegistry::instance();
  for (size_t k = first; k < last && k < g.nodes.size(); ++k) {
    Node& node = g.nodes[k];
    const OpRecord* rec = reg.find(node.domain, node.op, node.opset);
    if (!rec) {
      res.unsupported[op_key(node)].push_back(node.name);
    } else {
      InferContext ctx(g, node, opts, &res.warnings);
      ctx.set_result(&res);
      try {
        rec->infer(ctx);
      } catch (const ShapeError& e) {
        res.warnings.push_back(std::string("shape contradiction: ") + e.what());
      }
    }
    for (int o : node.outputs)
      if (o >= 0) fill_from_declared(g.values[o]);
  }
}

void infer_graph(Graph& g, const InferOptions& opts, InferResult& res) {
  bind_outer(g);
  infer_range(g, 0, g.nodes.size(), opts, res);
}

void infer_node_range(Graph& g, size_t first, size_t last, InferResult& res) {
  static const InferOptions none;
  infer_range(g, first, last, none, res);
}

static void check_input_dims(const Value& v) {
  if (!v.shape.rank_known) return;
  for (const auto& d : v.shape.dims)
    if (d.is_known() && d.value() < 0)
      throw InputError("input '" + v.name + "' has negative dim " + std::to_string(d.value()) + " in shape " +
                       v.shape.str());
}

// Binds --dim values everywhere a symbol can stand: shapes, contents, declared types, subgraphs.
static void substitute_dims(Graph& g, const std::vector<std::pair<std::string, int64_t>>& dims) {
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

// Subgraphs point at their enclosing graph; moving a Model moves its top graph, so relink first.
static void link_parents(Graph& g) {
  for (auto& n : g.nodes)
    for (auto& sg : n.subgraphs) {
      sg->parent = &g;
      link_parents(*sg);
    }
}

InferResult infer_shapes(Model& model, const InferOptions& opts) {
  Graph& g = model.graph;
  link_parents(g);
  InferResult res;
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
        res.warnings.push_back("input '" + v.name + "' declared with rank " + std::to_string(v.shape.rank()) +
                               ", pinned as " + pin.shape->str());
      v.shape = *pin.shape;
    }
    if (pin.dtype) v.dtype = *pin.dtype;
  }
  for (const auto& [name, vals] : opts.values) {
    int idx = g.find(name);
    if (idx < 0 || !g.values[idx].is_input)
      throw UsageError("--value names '" + name + "', which is not an input of the model (inputs: " + names +
                       ")");
    Value& v = g.values[idx];
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
  for (int i : g.inputs) check_input_dims(g.values[i]);
  infer_graph(g, opts, res);
  return res;
}

// ---- pin parsers ----------------------------------------------------------------------------------
static int64_t parse_int(const std::string& s, const std::string& what) {
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno == ERANGE)
    throw UsageError(what + ": '" + s + "' is not an integer");
  return v;
}

InputPin parse_input_pin(const std::string& text) {
  InputPin pin;
  std::vector<std::string> parts;
  std::stringstream ss(text);
  for (std::string p; std::getline(ss, p, ':');) parts.push_back(p);
  if (parts.empty() || parts.size() > 3)
    throw UsageError("--input '" + text + "': expected NAME:SHAPE[:DTYPE]");
  // NAME:SHAPE[:DTYPE], or SHAPE[:DTYPE] for inputs in order.
  size_t k = 0;
  auto looks_like_shape = [](const std::string& s) {
    return !s.empty() && (std::isdigit((unsigned char)s[0]) || s[0] == '?' || s == "*" || s == "scalar");
  };
  if (!looks_like_shape(parts[0]) && parts.size() >= 2) pin.name = parts[k++];
  if (k < parts.size()) {
    auto s = parse_shape(parts[k]);
    if (!s)
      throw UsageError("--input '" + text + "': bad shape '" + parts[k] + "' (expected e.g. 1x3x224x224)");
    for (const auto& d : s->dims)
      if (d.is_known() && d.value() < 0) throw UsageError("--input '" + text + "': negative dim");
    pin.shape = *s;
    ++k;
  }
  if (k < parts.size()) {
    pin.dtype = parse_dtype(parts[k]);
    if (!pin.dtype) throw UsageError("--input '" + text + "': unknown dtype '" + parts[k] + "'");
    ++k;
  }
  if (k != parts.size()) throw UsageError("--input '" + text + "': expected NAME:SHAPE[:DTYPE]");
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
