// shape_inference/infer.cc — flopwise/infer.h: the shape-inference pass over a model and its subgraphs, and
// the contexts (InferContext, CostContext) an op's shape and cost rules read.
#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include "flopwise/errors.h"
#include "flopwise/ops.h"
#include "infer_graph.h"

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
  out.reserve(d->size());
  if (d->is_float) {  // only integral, finite values in int64's range: a NaN or 1e300 is no index or size
    for (double f : d->floats) {
      auto x = exact_int64(f);
      if (!x) return std::nullopt;
      out.push_back(*x);
    }
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
  out.reserve(d->ints.size());
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
  if (s.rank_known && s.rank() > static_cast<size_t>(limits().max_rank)) {
    warn("output rank " + std::to_string(s.rank()) + " is above the limit " +
         std::to_string(limits().max_rank) + " (FLOPWISE_MAX_RANK): unknown rank");
    s = Shape::unknown_rank();
  }
  v->shape = std::move(s);
}
void InferContext::set_output_dtype(size_t i, DType t) {
  Value* v = output(i);
  if (v && t != DType::Undefined) v->dtype = t;
}
void InferContext::set_output_data(size_t i, ConstData d) {
  Value* v = output(i);
  if (!v || static_cast<int64_t>(d.size()) > limits().max_const_elements) return;
  v->data = std::move(d);
}
void InferContext::warn(const std::string& msg) {
  if (warnings_) warnings_->push_back(node_.op + " node '" + node_.name + "': " + msg);
}
void InferContext::assume(const Dim& lhs, const Dim& rhs, const std::string& why) {
  if (!result_) return;
  for (const auto& a : result_->assumptions)
    if (a.lhs == lhs && a.rhs == rhs) return;  // once per model, at its first node
  result_->assumptions.push_back(Assumption{lhs, rhs, node_.name, why});
}
Dim InferContext::data_dependent(size_t out, const Dim& lo, const Dim& hi) {
  if (hi.is_known() && (hi.value() == 0 || (lo.is_known() && lo.value() == hi.value()))) return hi;
  if (!result_ || !has_output(out)) return Dim::unknown();
  const int value = node_.outputs[out];
  auto& syms = result_->symbols;
  for (const auto& s : syms)  // the node inferred again: the symbol (or number) its first inference made
    if (s.graph == &graph_ && s.output == value) return s.value ? Dim(*s.value) : Dim::symbol(s.name);
  std::string stem = node_.attr_s("flopwise_symbol", "");
  if (stem.empty())
    for (char ch : node_.op) stem += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const std::set<std::string> taken =
      input_symbols(graph_);  // a model's own dim named `nonzero_1` stays its own
  size_t ordinal = 1;
  for (const auto& s : syms) ordinal += s.name.rfind(stem + "_", 0) == 0;
  std::string name;
  do name = stem + "_" + std::to_string(ordinal++);
  while (taken.count(name) ||
         std::any_of(syms.begin(), syms.end(), [&](const DataDepSymbol& s) { return s.name == name; }));
  DataDepSymbol sym;
  sym.name = name;
  sym.node = node_.name;
  sym.op = node_.attr_s("flopwise_source", node_.domain.empty() ? node_.op : node_.domain + "::" + node_.op);
  sym.scope = node_.scope_name();
  sym.lo = lo;
  sym.hi = hi;
  sym.graph = &graph_;
  sym.output = value;
  for (const auto& [n, v] : result_->symbol_values)
    if (n == name) sym.value = v;
  syms.push_back(sym);
  return sym.value ? Dim(*sym.value) : Dim::symbol(name);
}
std::string DataDepSymbol::bounds_text() const {
  return (lo.is_unknown() ? std::string() : lo.str() + " <= ") + name +
         (hi.is_unknown() ? "" : " <= " + hi.str());
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
Count CostContext::out_numel(size_t i) const {
  return numel_memo ? numel_memo->of(out_shape(i)) : out_shape(i).numel_count();
}
Dim CostContext::out_numel_dim(size_t i) const {
  return numel_memo ? numel_memo->numel(out_shape(i)) : out_shape(i).numel();
}
Count CostContext::in_numel(size_t i) const {
  return numel_memo ? numel_memo->of(in_shape(i)) : in_shape(i).numel_count();
}

// ---- the pass -----------------------------------------------------------------------------------
static std::string op_key(const Node& n) {
  return n.domain.empty() || n.domain == "ai.onnx" ? n.op : n.domain + "::" + n.op;
}

static bool only_symbols_of(const Dim& d, const std::set<std::string>& syms) {
  for (const auto& s : d.symbols())
    if (!syms.count(s)) return false;
  return true;
}

namespace {
// The top graph's input symbols, made on first use: most declared dims equal the inferred ones and need
// no look-up (a .pt2 program declares every value's shape).
class LazyInputSymbols {
 public:
  explicit LazyInputSymbols(const Graph& g) : g_(g) {}
  const std::set<std::string>& get() {
    if (!syms_) syms_ = input_symbols(g_);
    return *syms_;
  }

 private:
  const Graph& g_;
  std::optional<std::set<std::string>> syms_;
};
}  // namespace

// A declared type is a hint: it fills what inference left unknown, with known dims and expressions of the
// input dims only (an exporter's placeholder `unk__12` never becomes a symbol). A declared name that is no
// input dim, where inference proved an expression (`past_plus_seq` where it found `past + seq`), becomes an
// alias. A declared dim that contradicts a proved one is a conflict: the inferred dim is kept.
static void fill_from_declared(Value& v, LazyInputSymbols& syms, bool graph_output, InferResult& res) {
  if (!v.declared) return;
  const auto& [dt, ds] = *v.declared;
  if (v.dtype == DType::Undefined) v.dtype = dt;
  if (!ds.rank_known) return;
  if (!v.shape.rank_known) v.shape = Shape::unknown_of_rank(ds.rank());
  if (v.shape.rank() != ds.rank()) {
    res.declared_conflicts.push_back(v.name);
    return;
  }
  bool conflict = false;
  for (size_t i = 0; i < ds.rank(); ++i) {
    const Dim& want = ds.dims[i];
    Dim& have = v.shape.dims[i];
    if (want.is_unknown() || (!have.is_unknown() && have.same_as(want))) continue;
    const bool foreign = want.is_symbolic() && !only_symbols_of(want, syms.get());
    if (have.is_unknown()) {
      if (!foreign) have = want;
      continue;
    }
    if (!foreign) {
      conflict = true;
      continue;
    }
    // A name of the model's own on a graph output (where a user reads it): an alias of what inference
    // proved when that is an expression of the input dims. Exporters' generated names on intermediate
    // values and placeholders are nothing to show.
    const auto& t = want.terms();
    if (!graph_output || !have.is_symbolic() || t.size() != 1 || t[0].second != 1 || t[0].first.size() != 1)
      continue;
    const std::string& name = t[0].first[0];
    if (name.rfind("unk__", 0) == 0) continue;  // tf2onnx's and converters' placeholders: nothing to name
    bool seen = false;
    for (auto& a : res.aliases)
      if (a.name == name) {
        seen = true;
        if (!a.value.same_as(have)) conflict = true;
      }
    if (!seen) res.aliases.push_back(DimAlias{name, have, v.name});
  }
  if (conflict) res.declared_conflicts.push_back(v.name);
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

static void infer_range(Graph& g, size_t first, size_t last, InferResult& res) {
  const OpRegistry& reg = OpRegistry::instance();
  LazyInputSymbols syms(g);
  std::vector<bool> is_output;  // the top graph's outputs, built when a declared type first needs it
  auto graph_output = [&](int o) {
    if (g.parent) return false;
    if (is_output.empty()) {
      is_output.assign(g.values.size(), false);
      for (int x : g.outputs)
        if (x >= 0 && static_cast<size_t>(x) < is_output.size()) is_output[static_cast<size_t>(x)] = true;
    }
    return static_cast<size_t>(o) < is_output.size() && is_output[static_cast<size_t>(o)];
  };
  for (size_t k = first; k < last && k < g.nodes.size(); ++k) {
    Node& node = g.nodes[k];
    const OpRecord* rec = reg.find(node.domain, node.op, node.opset);
    // A rule reads its inputs by reference while it sets its outputs: a value that is both (an importer
    // that let a self-loop through) is never handed to one.
    bool self_loop = false;
    for (int o : node.outputs)
      self_loop =
          self_loop || (o >= 0 && std::find(node.inputs.begin(), node.inputs.end(), o) != node.inputs.end());
    if (self_loop) {
      res.warnings.push_back(node.op + " node '" + node.name + "' reads its own output: not inferred");
    } else if (!rec) {
      res.unsupported[op_key(node)].push_back(node.name);
    } else {
      InferContext ctx(g, node, &res.warnings);
      ctx.set_result(&res);
      try {
        rec->infer(ctx);
      } catch (const ShapeError& e) {
        res.warnings.push_back(std::string("shape contradiction: ") + e.what());
      }
    }
    for (int o : node.outputs)
      if (o >= 0 && g.values[o].declared) fill_from_declared(g.values[o], syms, graph_output(o), res);
  }
}

void infer_graph(Graph& g, InferResult& res) {
  bind_outer(g);
  infer_range(g, 0, g.nodes.size(), res);
}

void infer_node_range(Graph& g, size_t first, size_t last, InferResult& res) {
  infer_range(g, first, last, res);
}

static void check_input_dims(const Value& v) {
  if (!v.shape.rank_known) return;
  for (const auto& d : v.shape.dims)
    if (d.is_known() && d.value() < 0)
      throw InputError("input '" + v.name + "' has negative dim " + std::to_string(d.value()) + " in shape " +
                       v.shape.str());
}

// Subgraphs point at their enclosing graph; moving a Model moves its top graph, so relink first.
static void link_parents(Graph& g) {
  for (auto& n : g.nodes)
    for (auto& sg : n.subgraphs) {
      sg->parent = &g;
      link_parents(*sg);
    }
}

// Small initializers whose contents live in external data (a graph-only copy saved with size_threshold=0),
// read by a node whose outputs stayed unknown: their values were needed (a Reshape target, Resize sizes).
static void warn_external_values(const Graph& g, InferResult& res) {
  std::string list;
  size_t count = 0;
  std::vector<bool> listed(g.values.size(), false);
  for (const Node& n : g.nodes) {
    bool unknown_out = false;
    for (int o : n.outputs) {
      if (o < 0) continue;
      const Shape& s = g.values[static_cast<size_t>(o)].shape;
      unknown_out = unknown_out || !s.rank_known;
      for (const auto& d : s.dims) unknown_out = unknown_out || d.is_unknown();
    }
    if (!unknown_out) continue;
    for (int i : n.inputs) {
      if (i < 0 || listed[static_cast<size_t>(i)]) continue;
      const Value& v = g.values[static_cast<size_t>(i)];
      if (!v.external || v.data) continue;
      const Count numel = v.shape.numel_count();
      const bool value_like = is_integer(v.dtype) || n.op == "Resize" || n.op == "Upsample";
      if (!numel.known || numel.v > limits().max_const_elements || !value_like) continue;
      listed[static_cast<size_t>(i)] = true;
      if (++count <= 5) list += (list.empty() ? "'" : ", '") + v.name + "' (read by '" + n.name + "')";
    }
  }
  if (!count) return;
  if (count > 5) list += " and " + std::to_string(count - 5) + " more";
  res.warnings.push_back("shapes depend on the values of " + std::to_string(count) +
                         " initializer(s) stored in the external-data file, which flopwise never reads: " +
                         list + "; supply them with --value NAME=V,V,...");
}

InferResult infer_shapes(Model& model) { return infer_shapes_with_symbols(model, {}); }

InferResult infer_shapes_with_symbols(Model& model,
                                      const std::vector<std::pair<std::string, int64_t>>& symbol_values) {
  Graph& g = model.graph;
  link_parents(g);
  InferResult res;
  res.symbol_values = symbol_values;
  for (int i : g.inputs) check_input_dims(g.values[i]);
  infer_graph(g, res);
  warn_external_values(g, res);
  if (!res.declared_conflicts.empty()) {
    std::string names;
    const size_t shown = std::min<size_t>(res.declared_conflicts.size(), 3);
    for (size_t i = 0; i < shown; ++i) names += (i ? ", '" : "'") + res.declared_conflicts[i] + "'";
    if (res.declared_conflicts.size() > shown)
      names += " and " + std::to_string(res.declared_conflicts.size() - shown) + " more";
    res.warnings.push_back("declared shapes disagree with the inferred ones for " + names +
                           ": the inferred shapes are kept (see --format json nodes)");
  }
  return res;
}

InferResult infer_shapes(Model& model, const Pins& pins) {
  std::vector<std::string> warnings = apply_pins(model, pins);
  InferResult res = infer_shapes(model);
  res.warnings.insert(res.warnings.begin(), warnings.begin(), warnings.end());
  return res;
}

}  // namespace flopwise
