// shape_inference/ops/rnn.cc — rnn family: RNN, GRU, LSTM. MACs are the gate products, per time step and
// direction: batch * gates*hidden * (input + hidden); every one of seq_length steps is counted (sequence_lens
// ignored: an upper bound). FLOPs = 2*MACs + the per-hidden-unit gate arithmetic each formula lists.
#include "../helpers.h"

namespace flopwise {

namespace {

// Named dims of one recurrent op, from X [seq, batch, input] (layout 0) or [batch, seq, input]
// (layout 1), W [dirs, gates*hidden, input], R [dirs, gates*hidden, hidden], B [dirs, 2*gates*hidden],
// initial_h (and LSTM's initial_c) [dirs, batch, hidden] or [batch, dirs, hidden].
struct RnnDims {
  int64_t gates = 1;
  int64_t layout = 0;
  Dim dirs, seq, batch, input, hidden;
};

// Unify two views of a dim: with a context a clash fails, without one the better-known wins.
Dim unify(InferContext* c, const Dim& a, const Dim& b, const char* what) {
  if (c) return merge_dim(*c, a, b, what);
  if (a.is_known() || b.is_unknown()) return a;
  if (b.is_known() || a.is_unknown()) return b;
  return a;
}

// hidden from a dim that is `k * hidden`.
Dim hidden_from(InferContext* c, const Dim& d, int64_t k, const char* what) {
  if (d.is_known() && d.value() % k != 0 && c)
    c->fail(std::string(what) + " " + std::to_string(d.value()) + " is not a multiple of " +
            std::to_string(k));
  return d / Dim(k);
}

RnnDims decode_rnn(InferContext* c, const Node& n, const std::vector<const Shape*>& in, int64_t gates) {
  RnnDims d;
  d.gates = gates;
  d.layout = n.attr_i("layout", 0);
  std::string dir = n.attr_s("direction", "forward");
  if (dir == "forward" || dir == "reverse")
    d.dirs = Dim(1);
  else if (dir == "bidirectional")
    d.dirs = Dim(2);
  else if (c)
    c->fail("direction must be forward, reverse or bidirectional (got '" + dir + "')");
  int64_t hs = n.attr_i("hidden_size", 0);
  if (hs > 0) d.hidden = Dim(hs);
  auto shape = [&](size_t i) -> const Shape* {
    return i < in.size() && in[i] && in[i]->rank_known ? in[i] : nullptr;
  };
  auto need_rank = [&](const Shape* s, size_t r, const char* what) {
    if (s && s->rank() != r && c)
      c->fail(std::string(what) + " " + s->str() + " must have rank " + std::to_string(r));
    return s && s->rank() == r;
  };
  if (const Shape* x = shape(0); need_rank(x, 3, "X")) {
    d.seq = x->dims[d.layout == 0 ? 0 : 1];
    d.batch = x->dims[d.layout == 0 ? 1 : 0];
    d.input = x->dims[2];
  }
  if (const Shape* w = shape(1); need_rank(w, 3, "W")) {
    d.dirs = unify(c, d.dirs, w->dims[0], "W dim 0 vs num_directions");
    d.hidden =
        unify(c, d.hidden, hidden_from(c, w->dims[1], gates, "W dim 1"), "W dim 1 / gates vs hidden_size");
    d.input = unify(c, d.input, w->dims[2], "W dim 2 vs input size");
  }
  if (const Shape* r = shape(2); need_rank(r, 3, "R")) {
    d.dirs = unify(c, d.dirs, r->dims[0], "R dim 0 vs num_directions");
    d.hidden =
        unify(c, d.hidden, hidden_from(c, r->dims[1], gates, "R dim 1"), "R dim 1 / gates vs hidden_size");
    d.hidden = unify(c, d.hidden, r->dims[2], "R dim 2 vs hidden_size");
  }
  if (const Shape* b = shape(3); need_rank(b, 2, "B")) {
    d.dirs = unify(c, d.dirs, b->dims[0], "B dim 0 vs num_directions");
    d.hidden = unify(c, d.hidden, hidden_from(c, b->dims[1], 2 * gates, "B dim 1"),
                     "B dim 1 / (2*gates) vs hidden_size");
  }
  // initial_h (input 5) and LSTM's initial_c (input 6).
  for (size_t i : {size_t{5}, size_t{6}}) {
    if (i == 6 && gates != 4) break;
    if (const Shape* h = shape(i); need_rank(h, 3, i == 5 ? "initial_h" : "initial_c")) {
      d.dirs = unify(c, d.dirs, h->dims[d.layout == 0 ? 0 : 1], "initial state num_directions");
      d.batch = unify(c, d.batch, h->dims[d.layout == 0 ? 1 : 0], "initial state batch");
      d.hidden = unify(c, d.hidden, h->dims[2], "initial state hidden_size");
    }
  }
  return d;
}

std::vector<const Shape*> infer_inputs(const InferContext& c) {
  std::vector<const Shape*> v;
  for (size_t i = 0; i < c.num_inputs(); ++i) v.push_back(c.has_input(i) ? &c.in_shape(i) : nullptr);
  return v;
}

std::vector<const Shape*> cost_inputs(const CostContext& c) {
  std::vector<const Shape*> v;
  for (size_t i = 0; i < c.node.inputs.size(); ++i) v.push_back(c.has_input(i) ? &c.in_shape(i) : nullptr);
  return v;
}

// Y [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs, hidden]); Y_h, Y_c [dirs, batch, hidden]
// (layout 1: [batch, dirs, hidden]).
void infer_recurrent(InferContext& c, int64_t gates) {
  RnnDims d = decode_rnn(&c, c.node(), infer_inputs(c), gates);
  if (d.layout != 0 && d.layout != 1) c.fail("layout must be 0 or 1 (got " + std::to_string(d.layout) + ")");
  DType t = c.in_dtype(0);
  if (d.layout == 0) {
    c.set_output(0, t, Shape({d.seq, d.dirs, d.batch, d.hidden}));
    c.set_output(1, t, Shape({d.dirs, d.batch, d.hidden}));
    if (gates == 4) c.set_output(2, t, Shape({d.dirs, d.batch, d.hidden}));
  } else {
    c.set_output(0, t, Shape({d.batch, d.seq, d.dirs, d.hidden}));
    c.set_output(1, t, Shape({d.batch, d.dirs, d.hidden}));
    if (gates == 4) c.set_output(2, t, Shape({d.batch, d.dirs, d.hidden}));
  }
}

void infer_rnn(InferContext& c) { infer_recurrent(c, 1); }
void infer_gru(InferContext& c) { infer_recurrent(c, 3); }
void infer_lstm(InferContext& c) { infer_recurrent(c, 4); }

// MACs = seq*dirs*batch * gates*hidden*(input + hidden);
// FLOPs = 2*MACs + seq*dirs*batch*hidden * `per_unit`.
OpCost cost_recurrent(const CostContext& c, int64_t gates, int64_t per_unit) {
  RnnDims d = decode_rnn(nullptr, c.node, cost_inputs(c), gates);
  Dim steps = d.seq * d.dirs * d.batch;
  Dim macs = steps * Dim(gates) * d.hidden * (d.input + d.hidden);
  return cost_contraction(Count::of(macs), Count::of(steps * d.hidden) * Count{per_unit});
}

// Per hidden unit per step: each gate adds its two products (1) and, with B, both biases (2).
int64_t gate_sums(const CostContext& c, int64_t gates) { return gates * (1 + (c.has_input(3) ? 2 : 0)); }

// RNN: gate sums + tanh.
OpCost cost_rnn(const CostContext& c) { return cost_recurrent(c, 1, gate_sums(c, 1) + 1); }
// GRU: gate sums + 2 sigmoid + 1 tanh + 1 mul (reset gate) + 4 (H = (1-z)*h + z*H: sub, mul, mul, add).
OpCost cost_gru(const CostContext& c) { return cost_recurrent(c, 3, gate_sums(c, 3) + 8); }
// LSTM: gate sums + 3 sigmoid + 2 tanh + 3 mul + 1 add; peepholes (P) add 3 mul + 3 add.
OpCost cost_lstm(const CostContext& c) {
  return cost_recurrent(c, 4, gate_sums(c, 4) + 9 + (c.has_input(7) ? 6 : 0));
}

}  // namespace

void register_rnn_ops(OpRegistry& r) {
  reg(r, "RNN", 1, 0,
      "MACs = seq*dirs*batch*hidden*(input+hidden); FLOPs = 2*MACs + per hidden unit per step: "
      "1 add (+2 bias adds if B) + 1 tanh",
      infer_rnn, cost_rnn);
  reg(r, "GRU", 1, 0,
      "MACs = seq*dirs*batch*3*hidden*(input+hidden); FLOPs = 2*MACs + per hidden unit per step: "
      "3 adds (+6 bias adds if B) + 2 sigmoid + 1 tanh + 1 reset mul + 4 update (sub, 2 mul, add)",
      infer_gru, cost_gru);
  reg(r, "LSTM", 1, 0,
      "MACs = seq*dirs*batch*4*hidden*(input+hidden); FLOPs = 2*MACs + per hidden unit per step: "
      "4 adds (+8 bias adds if B) + 3 sigmoid + 2 tanh + 3 mul + 1 add (+6 if peepholes P)",
      infer_lstm, cost_lstm);
  // --train (flopwise/ops.h, TrainFacts): torch's recurrent cells, step by step.
  for (const char* op : {"LSTM", "GRU"})
    train(r, op, TrainBackward::recurrent, TrainKeeps::gated_cells, TrainAutocast::low);
  train(r, "RNN", TrainBackward::recurrent, TrainKeeps::rnn_cells, TrainAutocast::low);
  // Weight facts (flopwise/ops.h, WeightFacts): W, R, B and the peepholes P.
  for (const char* op : {"RNN", "GRU", "LSTM"}) weights(r, op, Learned{slots({1, 2, 3, 7})});
}

}  // namespace flopwise
