// shape_inference/ops/controlflow.cc — control-flow family: If, Loop, Scan. Shape rules infer the subgraphs
// (infer_graph) with their inputs typed from the node's inputs; costs are per-run subgraph costs times the
// number of runs.
//   If:   the branch taken when `cond` is known, else the branch with more FLOPs (an upper bound).
//   Loop: trip count * body, when the trip count is provable (M known, and the loop condition
//         provably stays true); unknown otherwise.
//   Scan: sequence length * body.
#include <algorithm>
#include <memory>
#include <vector>

#include "../helpers.h"
#include "../infer_graph.h"

namespace flopwise {

namespace {

// ---- subgraph plumbing ----
const Graph* subgraph(const Node& n, const char* attr) {
  auto it = n.attrs.find(attr);
  if (it == n.attrs.end() || it->second.graphs.empty()) return nullptr;
  int i = it->second.graphs[0];
  return i >= 0 && static_cast<size_t>(i) < n.subgraphs.size() ? n.subgraphs[i].get() : nullptr;
}
Graph* subgraph(Node& n, const char* attr) {
  return const_cast<Graph*>(subgraph(static_cast<const Node&>(n), attr));
}

// Forgets what an earlier inference left on node outputs (a stale contents value would survive a
// re-run otherwise). Inputs, initializers and outer references keep theirs.
void reset_inferred(Graph& g) {
  for (auto& v : g.values) {
    if (v.producer < 0) continue;
    v.dtype = DType::Undefined;
    v.shape = Shape();
    v.data.reset();
  }
}

void infer_subgraph(InferContext& c, Graph& g) {
  reset_inferred(g);
  if (InferResult* res = c.result()) {
    infer_graph(g, *res);
    return;
  }
  InferResult local;
  infer_graph(g, local);
  for (const auto& w : local.warnings) c.warn(w);
  for (const auto& [op, names] : local.unsupported) c.warn("subgraph op " + op + " is not supported");
}

// Types a subgraph input from what flows into it; keeps the subgraph's own declaration when the
// outer shape is less known.
void bind_input(Graph& g, size_t k, DType t, const Shape& s, const ConstData* data = nullptr) {
  if (k >= g.inputs.size()) return;
  Value& v = g.values[g.inputs[k]];
  if (t != DType::Undefined) v.dtype = t;
  if (s.rank_known || !v.shape.rank_known) v.shape = s;
  v.data.reset();
  if (data) v.data = *data;
}

const Value* graph_output(const Graph& g, size_t k) {
  if (k >= g.outputs.size() || g.outputs[k] < 0) return nullptr;
  return &g.values[g.outputs[k]];
}

// The least shape both describe: same rank, and per dim the common value or unknown.
Shape join_shapes(const Shape& a, const Shape& b) {
  if (!a.rank_known || !b.rank_known || a.rank() != b.rank()) return Shape::unknown_rank();
  std::vector<Dim> out;
  for (size_t i = 0; i < a.rank(); ++i) out.push_back(a.dims[i].same_as(b.dims[i]) ? a.dims[i] : Dim());
  return Shape(out);
}

// Known scalar boolean/integer contents of a value, or nullopt.
std::optional<int64_t> scalar_int(const Value* v) {
  if (!v || !v->data || v->data->size() != 1) return std::nullopt;
  if (v->data->is_float) return static_cast<int64_t>(v->data->floats[0] != 0);
  return v->data->ints[0].maybe_value();
}
const Value* node_input(const Graph& g, const Node& n, size_t i) {
  return i < n.inputs.size() && n.inputs[i] >= 0 ? &g.values[n.inputs[i]] : nullptr;
}

// ---- If ----
void infer_if(InferContext& c) {
  Node& n = c.mutable_node();
  Graph* then_g = subgraph(n, "then_branch");
  Graph* else_g = subgraph(n, "else_branch");
  auto cond = scalar_int(c.input(0));
  Graph* taken = cond ? (*cond ? then_g : else_g) : nullptr;
  if (taken) {
    infer_subgraph(c, *taken);
    for (size_t i = 0; i < c.num_outputs(); ++i) {
      const Value* o = graph_output(*taken, i);
      if (!o) continue;
      c.set_output(i, o->dtype, o->shape);
      if (o->data) c.set_output_data(i, *o->data);
    }
    return;
  }
  if (then_g) infer_subgraph(c, *then_g);
  if (else_g) infer_subgraph(c, *else_g);
  for (size_t i = 0; i < c.num_outputs(); ++i) {
    const Value* a = then_g ? graph_output(*then_g, i) : nullptr;
    const Value* b = else_g ? graph_output(*else_g, i) : nullptr;
    if (!a || !b) continue;
    DType t = a->dtype != DType::Undefined ? a->dtype : b->dtype;
    if (a->dtype != DType::Undefined && b->dtype != DType::Undefined && a->dtype != b->dtype)
      c.fail("output " + std::to_string(i) + " is " + dtype_name(a->dtype) + " in then_branch but " +
             dtype_name(b->dtype) + " in else_branch");
    c.set_output(i, t, join_shapes(a->shape, b->shape));
  }
}

OpCost cost_if(const CostContext& c) {
  const Graph* then_g = subgraph(c.node, "then_branch");
  const Graph* else_g = subgraph(c.node, "else_branch");
  if (!c.subgraph_cost || !then_g || !else_g) return cost_unknown(c);
  auto cond = scalar_int(node_input(c.graph, c.node, 0));
  if (cond) return c.subgraph_cost(*cond ? *then_g : *else_g);
  // Not known which runs: the costlier branch, decided for every value of the symbols where that is
  // provable (sizes are >= 0), else each count the max of the two (an exact atom).
  OpCost a = c.subgraph_cost(*then_g), b = c.subgraph_cost(*else_g);
  if (!a.flops.exact() || !b.flops.exact() || !a.macs.exact() || !b.macs.exact())
    return OpCost{Count::unknown(), Count::unknown()};
  if (auto o = Dim::compare(a.flops.as_dim(), b.flops.as_dim())) return *o >= 0 ? a : b;
  return OpCost{Count::of(Dim::max(a.macs.as_dim(), b.macs.as_dim())),
                Count::of(Dim::max(a.flops.as_dim(), b.flops.as_dim()))};
}

// ---- Loop ----
// Inputs: M (trip limit, optional), cond (optional), v_initial... Body inputs: iteration number,
// cond, carried...; body outputs: cond, carried..., scan elements. Node outputs: final carried
// values, then scan outputs stacked along a new leading axis of length trip count.
//
// The trip count is M when the loop cannot stop early: no initial cond, or one known true, and a
// body condition that the body computes as true when given true (so it stays true every iteration).
Dim loop_trip_count(const Graph& g, const Node& n) {
  const Graph* body = subgraph(n, "body");
  const Value* m = node_input(g, n, 0);
  const Value* cond = node_input(g, n, 1);
  std::optional<int64_t> cond0 = cond ? scalar_int(cond) : std::optional<int64_t>(1);
  if (cond0 && *cond0 == 0) return Dim(0);
  if (!m || !m->data || m->data->is_float || m->data->size() != 1 || !body) return Dim();
  if (!cond0) return Dim();
  auto cond_out = scalar_int(graph_output(*body, 0));
  if (!cond_out || *cond_out == 0) return Dim();
  Dim trip = m->data->ints[0];
  if (trip.is_known() && trip.value() < 0) return Dim(0);
  return trip;
}

// Infers a body whose first `first_state` inputs are bound already and whose states (body inputs
// first_state.. and outputs out_state..) start at `states`; a state whose shape the body changes is
// widened to the join and the body inferred once more. Returns the states' final shapes.
std::vector<Shape> infer_with_states(InferContext& c, Graph& body, size_t first_state, size_t out_state,
                                     std::vector<Shape> states, const std::vector<DType>& dtypes) {
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < states.size(); ++i) bind_input(body, first_state + i, dtypes[i], states[i]);
    infer_subgraph(c, body);
    bool widened = false;
    for (size_t i = 0; i < states.size(); ++i) {
      const Value* o = graph_output(body, out_state + i);
      Shape j = o ? join_shapes(states[i], o->shape) : Shape::unknown_rank();
      if (!(j == states[i])) {
        states[i] = j;
        widened = true;
      }
    }
    if (!widened) break;
  }
  return states;
}

void infer_loop(InferContext& c) {
  Node& n = c.mutable_node();
  Graph* body = subgraph(n, "body");
  const size_t n_carried = c.num_inputs() > 2 ? c.num_inputs() - 2 : 0;
  std::vector<Shape> states;
  std::vector<DType> dtypes;
  for (size_t i = 0; i < n_carried; ++i) {
    states.push_back(c.in_shape(2 + i));
    dtypes.push_back(c.in_dtype(2 + i));
  }
  if (c.has_input(0)) {
    const Shape& ms = c.in_shape(0);
    if (ms.rank_known && ms.rank() != 0 &&
        !(ms.rank() == 1 && ms.dims[0].is_known() && ms.dims[0].value() == 1))
      c.fail("trip count M must be a scalar, got " + ms.str());
  }
  if (!body) {
    for (size_t i = 0; i < n_carried; ++i) c.set_output(i, dtypes[i], Shape::unknown_rank());
    return;
  }
  bind_input(*body, 0, DType::Int64, Shape::scalar());
  // The body's cond input: true when the loop starts true (see loop_trip_count).
  auto cond0 = c.has_input(1) ? scalar_int(c.input(1)) : std::optional<int64_t>(1);
  ConstData yes;
  yes.ints = {Dim(1)};
  bind_input(*body, 1, DType::Bool, Shape::scalar(), cond0 && *cond0 ? &yes : nullptr);
  states = infer_with_states(c, *body, 2, 1, states, dtypes);
  for (size_t i = 0; i < n_carried && i < c.num_outputs(); ++i) {
    const Value* o = graph_output(*body, 1 + i);
    DType t = dtypes[i] != DType::Undefined ? dtypes[i] : (o ? o->dtype : DType::Undefined);
    c.set_output(i, t, states[i]);
  }
  Dim trip = loop_trip_count(c.graph(), n);
  for (size_t k = n_carried; k < c.num_outputs(); ++k) {
    const Value* o = graph_output(*body, 1 + k);
    if (!o) continue;
    if (!o->shape.rank_known) {
      c.set_output(k, o->dtype, Shape::unknown_rank());
      continue;
    }
    std::vector<Dim> dims{trip};
    dims.insert(dims.end(), o->shape.dims.begin(), o->shape.dims.end());
    c.set_output(k, o->dtype, Shape(dims));
  }
}

OpCost times(const Dim& runs, const OpCost& one) {
  Count k = Count::of(runs);
  OpCost r{k * one.macs, k * one.flops};
  if (one.body) {
    auto body = std::make_shared<std::vector<BodyWork>>(*one.body);
    for (BodyWork& w : *body) {
      w.macs = k * w.macs;
      w.flops = k * w.flops;
      w.bytes = k * w.bytes;
    }
    r.body = std::move(body);
  }
  return r;
}

OpCost cost_loop(const CostContext& c) {
  const Graph* body = subgraph(c.node, "body");
  if (!c.subgraph_cost || !body) return cost_unknown(c);
  Dim trip = loop_trip_count(c.graph, c.node);
  if (trip.is_known() && trip.value() == 0) return OpCost{};
  return times(trip, c.subgraph_cost(*body));
}

// ---- Scan (opset 9+) ----
// Inputs: N initial states, then M scan inputs (M = num_scan_inputs), each scanned along
// scan_input_axes[j] (default 0). Body inputs: N states, M slices (scan axis removed). Body outputs:
// N states, K scan elements; node outputs stack each element along scan_output_axes[k] (default 0).
struct ScanDecoded {
  size_t n_states = 0, n_scan_in = 0;
  std::vector<int64_t> in_axes;  // per scan input, normalised when the rank is known
  Dim seq_len;
};

ScanDecoded decode_scan(const Node& n, const std::vector<const Shape*>& inputs, InferContext* c) {
  ScanDecoded d;
  d.n_scan_in = static_cast<size_t>(std::max<int64_t>(n.attr_i("num_scan_inputs", 0), 0));
  d.n_scan_in = std::min(d.n_scan_in, inputs.size());
  d.n_states = inputs.size() - d.n_scan_in;
  d.in_axes = n.attr_ints("scan_input_axes");
  d.in_axes.resize(d.n_scan_in, 0);
  bool first = true;
  for (size_t j = 0; j < d.n_scan_in; ++j) {
    const Shape& s = *inputs[d.n_states + j];
    if (!s.rank_known) {
      first = false;
      continue;
    }
    int64_t r = static_cast<int64_t>(s.rank());
    int64_t a = d.in_axes[j];
    if (a < -r || a >= r) {
      if (c)
        c->fail("scan_input_axes[" + std::to_string(j) + "] = " + std::to_string(a) +
                " out of range for rank " + std::to_string(r));
      d.seq_len = Dim();
      return d;
    }
    d.in_axes[j] = a < 0 ? a + r : a;
    const Dim& len = s.dims[d.in_axes[j]];
    if (first) {
      d.seq_len = len;
      first = false;
    } else if (c) {
      d.seq_len = merge_dim(*c, d.seq_len, len, "scan inputs' sequence lengths differ");
    } else {
      d.seq_len = d.seq_len.same_as(len) ? d.seq_len : Dim();
    }
  }
  return d;
}

void infer_scan(InferContext& c) {
  Node& n = c.mutable_node();
  Graph* body = subgraph(n, "body");
  std::vector<const Shape*> in_shapes;
  for (size_t i = 0; i < c.num_inputs(); ++i) in_shapes.push_back(&c.in_shape(i));
  ScanDecoded d = decode_scan(n, in_shapes, &c);
  std::vector<Shape> states;
  std::vector<DType> dtypes;
  for (size_t i = 0; i < d.n_states; ++i) {
    states.push_back(c.in_shape(i));
    dtypes.push_back(c.in_dtype(i));
  }
  if (!body) {
    for (size_t i = 0; i < d.n_states; ++i) c.set_output(i, dtypes[i], states[i]);
    return;
  }
  for (size_t j = 0; j < d.n_scan_in; ++j) {
    const Shape& s = c.in_shape(d.n_states + j);
    Shape slice = Shape::unknown_rank();
    if (s.rank_known) {
      std::vector<Dim> dims = s.dims;
      dims.erase(dims.begin() + d.in_axes[j]);
      slice = Shape(dims);
    }
    bind_input(*body, d.n_states + j, c.in_dtype(d.n_states + j), slice);
  }
  states = infer_with_states(c, *body, 0, 0, states, dtypes);
  for (size_t i = 0; i < d.n_states && i < c.num_outputs(); ++i) {
    const Value* o = graph_output(*body, i);
    c.set_output(i, dtypes[i] != DType::Undefined ? dtypes[i] : (o ? o->dtype : DType::Undefined), states[i]);
  }
  auto out_axes = n.attr_ints("scan_output_axes");
  for (size_t k = d.n_states; k < c.num_outputs(); ++k) {
    const Value* o = graph_output(*body, k);
    if (!o) continue;
    if (!o->shape.rank_known) {
      c.set_output(k, o->dtype, Shape::unknown_rank());
      continue;
    }
    size_t ki = k - d.n_states;
    int64_t r = static_cast<int64_t>(o->shape.rank()) + 1;
    int64_t a = normalize_axis(c, ki < out_axes.size() ? out_axes[ki] : 0, r);
    std::vector<Dim> dims = o->shape.dims;
    dims.insert(dims.begin() + a, d.seq_len);
    c.set_output(k, o->dtype, Shape(dims));
  }
}

OpCost cost_scan(const CostContext& c) {
  const Graph* body = subgraph(c.node, "body");
  if (!c.subgraph_cost || !body) return cost_unknown(c);
  std::vector<const Shape*> in_shapes;
  for (size_t i = 0; i < c.node.inputs.size(); ++i) in_shapes.push_back(&c.in_shape(i));
  ScanDecoded d = decode_scan(c.node, in_shapes, nullptr);
  if (d.seq_len.is_known() && d.seq_len.value() == 0) return OpCost{};
  return times(d.seq_len, c.subgraph_cost(*body));
}

// ---- Scan-8 ----
// Inputs: sequence_lens (optional), N initial states [batch, ...], M scan inputs [batch, seq, ...].
// The body sees one batch element: states without the batch axis, slices without batch and seq.
// Outputs: states [batch, ...], scan outputs [batch, seq, ...]. Cost: batch * seq * body (an upper
// bound when sequence_lens shortens some sequences).
struct Scan8Decoded {
  size_t n_states = 0, n_scan_in = 0;
  Dim batch, seq_len;
};

Scan8Decoded decode_scan8(const Node& n, const std::vector<const Shape*>& inputs, InferContext* c) {
  Scan8Decoded d;
  size_t n_data = inputs.empty() ? 0 : inputs.size() - 1;  // after sequence_lens
  d.n_scan_in =
      std::min<size_t>(static_cast<size_t>(std::max<int64_t>(n.attr_i("num_scan_inputs", 0), 0)), n_data);
  d.n_states = n_data - d.n_scan_in;
  bool first_b = true, first_s = true;
  auto join = [&](Dim& into, bool& first, const Dim& x, const char* what) {
    if (first) {
      into = x;
      first = false;
    } else if (c) {
      into = merge_dim(*c, into, x, what);
    } else {
      into = into.same_as(x) ? into : Dim();
    }
  };
  for (size_t i = 1; i < inputs.size(); ++i) {
    const Shape& s = *inputs[i];
    if (!s.rank_known) continue;
    bool scan = i > d.n_states;
    if (s.rank() < (scan ? 2u : 1u)) {
      if (c)
        c->fail("input " + std::to_string(i) + " needs a batch" + (scan ? " and a sequence axis" : " axis") +
                ", got " + s.str());
      continue;
    }
    join(d.batch, first_b, s.dims[0], "batch sizes differ");
    if (scan) join(d.seq_len, first_s, s.dims[1], "scan inputs' sequence lengths differ");
  }
  return d;
}

Shape drop_leading(const Shape& s, size_t k) {
  if (!s.rank_known || s.rank() < k) return Shape::unknown_rank();
  return Shape(std::vector<Dim>(s.dims.begin() + static_cast<std::ptrdiff_t>(k), s.dims.end()));
}

void infer_scan8(InferContext& c) {
  Node& n = c.mutable_node();
  Graph* body = subgraph(n, "body");
  std::vector<const Shape*> in_shapes;
  for (size_t i = 0; i < c.num_inputs(); ++i) in_shapes.push_back(&c.in_shape(i));
  Scan8Decoded d = decode_scan8(n, in_shapes, &c);
  std::vector<Shape> states;
  std::vector<DType> dtypes;
  for (size_t i = 0; i < d.n_states; ++i) {
    states.push_back(drop_leading(c.in_shape(1 + i), 1));
    dtypes.push_back(c.in_dtype(1 + i));
  }
  if (!body) {
    for (size_t i = 0; i < d.n_states; ++i) c.set_output(i, dtypes[i], c.in_shape(1 + i));
    return;
  }
  for (size_t j = 0; j < d.n_scan_in; ++j) {
    size_t i = 1 + d.n_states + j;
    bind_input(*body, d.n_states + j, c.in_dtype(i), drop_leading(c.in_shape(i), 2));
  }
  states = infer_with_states(c, *body, 0, 0, states, dtypes);
  for (size_t k = 0; k < c.num_outputs(); ++k) {
    const Value* o = graph_output(*body, k);
    if (!o) continue;
    bool is_state = k < d.n_states;
    const Shape& inner = is_state ? states[k] : o->shape;
    DType t = is_state && dtypes[k] != DType::Undefined ? dtypes[k] : o->dtype;
    if (!inner.rank_known) {
      c.set_output(k, t, Shape::unknown_rank());
      continue;
    }
    std::vector<Dim> dims{d.batch};
    if (!is_state) dims.push_back(d.seq_len);
    dims.insert(dims.end(), inner.dims.begin(), inner.dims.end());
    c.set_output(k, t, Shape(dims));
  }
}

OpCost cost_scan8(const CostContext& c) {
  const Graph* body = subgraph(c.node, "body");
  if (!c.subgraph_cost || !body) return cost_unknown(c);
  std::vector<const Shape*> in_shapes;
  for (size_t i = 0; i < c.node.inputs.size(); ++i) in_shapes.push_back(&c.in_shape(i));
  Scan8Decoded d = decode_scan8(c.node, in_shapes, nullptr);
  Dim runs = d.batch * d.seq_len;
  if (runs.is_known() && runs.value() == 0) return OpCost{};
  return times(runs, c.subgraph_cost(*body));
}

}  // namespace

void register_controlflow_ops(OpRegistry& r) {
  reg(r, "If", 1, 0, "the taken branch when cond is known, else the branch with more FLOPs", infer_if,
      cost_if);
  reg(r, "Loop", 1, 0, "trip count * body (unknown unless M is known and the condition stays true)",
      infer_loop, cost_loop);
  reg(r, "Scan", 8, 8, "batch * sequence length * body (upper bound with sequence_lens)", infer_scan8,
      cost_scan8);
  reg(r, "Scan", 9, 0, "sequence length * body", infer_scan, cost_scan);
}

}  // namespace flopwise
