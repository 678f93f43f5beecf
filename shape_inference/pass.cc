#include "pass.h"

#include <algorithm>

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
void InferContext::assume(const Dim& lhs, const Dim& rhs, const std::string& why) {
  if (!result_) return;
  for (const auto& a : result_->assumptions)
    if (a.lhs == lhs && a.rhs == rhs) return;  // once per model, at its first node
  result_->assumptions.push_back(Assumption{lhs, rhs, node_.name, why});
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

static void infer_range(Graph& g, size_t first, size_t last, InferResult& res) {
  const OpRegistry& reg = OpRegistry::instance();
  for (size_t k = first; k < last && k < g.nodes.size(); ++k) {
    Node& node = g.nodes[k];
    const OpRecord* rec = reg.find(node.domain, node.op, node.opset);
    if (!rec) {
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
      if (o >= 0) fill_from_declared(g.values[o]);
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

InferResult infer_shapes(Model& model) {
  Graph& g = model.graph;
  link_parents(g);
  InferResult res;
  for (int i : g.inputs) check_input_dims(g.values[i]);
  infer_graph(g, res);
  return res;
}

InferResult infer_shapes(Model& model, const Pins& pins) {
  std::vector<std::string> warnings = apply_pins(model, pins);
  InferResult res = infer_shapes(model);
  res.warnings.insert(res.warnings.begin(), warnings.begin(), warnings.end());
  return res;
}

}  // namespace flopwise
