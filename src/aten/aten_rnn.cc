// src/aten/aten_rnn.cc — aten recurrent ops: lstm/gru/rnn_tanh/rnn_relu (the whole multi-layer module, as
// torch.onnx exports it: one ONNX LSTM/GRU/RNN per layer) and the single-step cells.
#include "aten_table.h"

namespace flopwise {
namespace {

using Node = AtenNode;

// The recurrence of an aten recurrent op, registered with it (lstm and lstm_cell are both `lstm`).
enum class Recurrence : uint8_t { lstm, gru, rnn_tanh, rnn_relu };

const char* recurrent_onnx_op(Recurrence r) {
  return r == Recurrence::lstm ? "LSTM" : r == Recurrence::gru ? "GRU" : "RNN";
}

// ONNX LSTM/GRU/RNN attributes of an aten recurrent op: torch's GRU applies the reset gate after the
// recurrent product (linear_before_reset); rnn_relu swaps tanh for Relu.
Attrs recurrent_attrs(Recurrence r, int64_t hidden) {
  Attrs a{{"hidden_size", ai(hidden)}};
  if (r == Recurrence::gru) a["linear_before_reset"] = ai(1);
  if (r == Recurrence::rnn_relu) {
    Attribute acts;
    acts.kind = Attribute::Kind::Strings;
    acts.strings = {"Relu"};
    a["activations"] = acts;
  }
  return a;
}

// An LSTM with projections (nn.LSTM(proj_size=P): params per layer and direction w_ih [4H, I], w_hh [4H, P],
// b_ih, b_hh, w_hr [P, H]), which ONNX's LSTM cannot express: unrolled over the (known) sequence length,
// each step the ops torch runs: gates = x_t W_ih^T + b_ih + h W_hh^T + b_hh; i, f, g, o = chunks;
// c = sigmoid(f) c + sigmoid(i) tanh(g); h = (sigmoid(o) tanh(c)) W_hr^T. Input seq-first [T, B, I].
bool lower_lstm_projected(AtenLowerer& L, const AtenValue* o, int x, const std::vector<JV>& params,
                          int64_t layers, int64_t dirs, bool has_b, std::vector<int>& hs,
                          std::vector<int>& cs, int& out) {
  const Shape xs = L.facts(x).shape;
  if (!xs.rank_known || xs.rank() != 3 || !xs.dims[0].is_known()) return false;
  int64_t steps = xs.dims[0].value();
  size_t per = has_b ? 5 : 3;
  auto linear = [&](int in, int w, int b) {
    int wt = L.emit_tmp(o, "wt", "Transpose", {w}, {{"perm", ais({1, 0})}});
    int y = L.emit_tmp(o, "mm", "MatMul", {in, wt});
    return b >= 0 ? L.emit_tmp(o, "bias", "Add", {y, b}) : y;
  };
  for (int64_t l = 0; l < layers; ++l) {
    std::vector<int> dir_out;
    for (int64_t d = 0; d < dirs; ++d) {
      size_t base = static_cast<size_t>((l * dirs + d)) * per;
      int w_ih = L.as_ir(params[base]), w_hh = L.as_ir(params[base + 1]);
      int b_ih = has_b ? L.as_ir(params[base + 2]) : -1, b_hh = has_b ? L.as_ir(params[base + 3]) : -1;
      int w_hr = L.as_ir(params[base + per - 1]);
      const Shape whh = L.facts(w_hh).shape, whr = L.facts(w_hr).shape;
      if (!whh.fully_known() || !whr.fully_known() || whh.rank() != 2 || whr.rank() != 2) return false;
      int64_t hidden = whr.dims[1].value(), proj = whr.dims[0].value();
      // Initial states: zeros [B, P] and [B, H] (from the input's batch).
      int shape = L.emit_tmp(o, "shape", "Shape", {x});
      int batch = L.emit_tmp(o, "batch", "Slice", {shape, L.const_ints({1}), L.const_ints({2})});
      auto zeros = [&](int64_t width) {
        int sz = L.emit_tmp(o, "state_shape", "Concat", {batch, L.const_ints({width})}, {{"axis", ai(0)}});
        return L.emit_tmp(o, "state", "ConstantOfShape", {sz});
      };
      int h = zeros(proj), c = zeros(hidden);
      std::vector<int> ys(static_cast<size_t>(steps));
      for (int64_t k = 0; k < steps; ++k) {
        int64_t t = d == 0 ? k : steps - 1 - k;
        int xt = L.emit_tmp(o, "x_t", "Gather", {x, L.const_int(t)}, {{"axis", ai(0)}});
        int gates = L.emit_tmp(o, "gates", "Add", {linear(xt, w_ih, b_ih), linear(h, w_hh, b_hh)});
        auto g4 = L.emit("Split", {gates, L.const_ints({hidden, hidden, hidden, hidden})},
                         {L.tmp(o, "i"), L.tmp(o, "f"), L.tmp(o, "g"), L.tmp(o, "o")}, {{"axis", ai(1)}});
        int i = L.emit_tmp(o, "sig_i", "Sigmoid", {g4[0]}), f = L.emit_tmp(o, "sig_f", "Sigmoid", {g4[1]});
        int g = L.emit_tmp(o, "tanh_g", "Tanh", {g4[2]}), og = L.emit_tmp(o, "sig_o", "Sigmoid", {g4[3]});
        c = L.emit_tmp(o, "c", "Add",
                       {L.emit_tmp(o, "fc", "Mul", {f, c}), L.emit_tmp(o, "ig", "Mul", {i, g})});
        int hc = L.emit_tmp(o, "h_full", "Mul", {og, L.emit_tmp(o, "tanh_c", "Tanh", {c})});
        h = linear(hc, w_hr, -1);
        ys[static_cast<size_t>(t)] = L.emit_tmp(o, "y_t", "Unsqueeze", {h, L.const_ints({0})});
      }
      dir_out.push_back(L.emit_tmp(o, "y", "Concat", ys, {{"axis", ai(0)}}));
      hs.push_back(L.emit_tmp(o, "h_n", "Unsqueeze", {h, L.const_ints({0})}));
      cs.push_back(L.emit_tmp(o, "c_n", "Unsqueeze", {c, L.const_ints({0})}));
    }
    x = dir_out.size() == 1 ? dir_out[0] : L.emit_tmp(o, "y_dirs", "Concat", dir_out, {{"axis", ai(2)}});
  }
  out = x;
  return true;
}

// aten::lstm/gru/rnn_* (input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
// batch_first): per layer one ONNX LSTM/GRU/RNN (W, R, B from the layer's w_ih, w_hh, b_ih, b_hh),
// Y [seq, dirs, batch, hidden] -> [seq, batch, dirs*hidden] for the next layer, batch_first by transposes.
// Initial states are left out: they change neither shapes nor costs. An unbatched input (rank 2) is
// given a batch of 1 and has it removed again. The module's dropout (p > 0) is a Dropout on each layer's
// output but the last, as torch applies it between layers: active under --train, identity in an eval run.
template <Recurrence rec>
bool lower_rnn(AtenLowerer& L, const Node* n, const std::string&) {
  auto in = [&](size_t i) -> JV& { return L.in(n, i); };
  if (n->inputs().size() != 9 || in(2).kind != JV::List) return false;
  auto has_b = L.known_int(in(3)), layers = L.known_int(in(4)), bidir = L.known_int(in(7)),
       bf = L.known_int(in(8));
  if (!has_b || !layers || !bidir || !bf) return false;
  const double dropout = L.known_num(in(5)).value_or(0.0);
  int64_t dirs = *bidir ? 2 : 1, per = *has_b ? 4 : 2;
  const auto& params = *in(2).items;
  bool projected =
      rec == Recurrence::lstm && static_cast<int64_t>(params.size()) == *layers * dirs * (per + 1);
  if (!projected && static_cast<int64_t>(params.size()) != *layers * dirs * per) return false;
  const std::string onnx = recurrent_onnx_op(rec);
  const AtenValue* o = n->output(0);
  int x = L.as_ir(in(0));
  auto rank = L.known_rank(in(0));
  bool unbatched = rank && *rank == 2;
  if (unbatched)
    x = L.emit_tmp(o, "batch", "Unsqueeze", {x, L.const_ints({1})});
  else if (*bf)
    x = L.emit_tmp(o, "seq_first", "Transpose", {x}, {{"perm", ais({1, 0, 2})}});
  std::vector<int> hs, cs;
  if (projected && !lower_lstm_projected(L, o, x, params, *layers, dirs, *has_b != 0, hs, cs, x))
    return false;
  for (int64_t l = 0; l < *layers && !projected; ++l) {
    std::vector<int> w, r, b;
    for (int64_t d = 0; d < dirs; ++d) {
      size_t base = static_cast<size_t>((l * dirs + d) * per);
      auto unsq = [&](int v, const std::string& what) {
        return L.emit_tmp(o, what, "Unsqueeze", {v, L.const_ints({0})});
      };
      w.push_back(unsq(L.as_ir(params[base]), "W"));
      r.push_back(unsq(L.as_ir(params[base + 1]), "R"));
      if (*has_b) {
        int cat = L.emit_tmp(o, "bias", "Concat", {L.as_ir(params[base + 2]), L.as_ir(params[base + 3])},
                             {{"axis", ai(0)}});
        b.push_back(unsq(cat, "B"));
      }
    }
    auto join = [&](const std::vector<int>& v, const std::string& what) {
      return v.size() == 1 ? v[0] : L.emit_tmp(o, what, "Concat", v, {{"axis", ai(0)}});
    };
    const Shape whh = L.graph().values[L.as_ir(params[static_cast<size_t>(l * dirs * per + 1)])].shape;
    if (!whh.rank_known || whh.rank() != 2 || !whh.dims[1].is_known()) return false;
    Attrs a = recurrent_attrs(rec, whh.dims[1].value());
    a["direction"] = as(dirs == 2 ? "bidirectional" : "forward");
    std::vector<int> ins{x, join(w, "W_all"), join(r, "R_all")};
    if (*has_b) ins.push_back(join(b, "B_all"));
    std::vector<std::string> outs{L.tmp(o, "Y"), L.tmp(o, "Y_h")};
    if (rec == Recurrence::lstm) outs.push_back(L.tmp(o, "Y_c"));
    auto res = L.emit(onnx, ins, outs, a);
    hs.push_back(res[1]);
    if (rec == Recurrence::lstm) cs.push_back(res[2]);
    int t = L.emit_tmp(o, "Y_t", "Transpose", {res[0]}, {{"perm", ais({0, 2, 1, 3})}});
    x = L.emit_tmp(o, "Y_seq", "Reshape", {t, L.const_ints({0, 0, -1})});
    if (dropout > 0.0 && l + 1 < *layers)
      x = L.emit_tmp(o, "dropout", "Dropout", {x, L.const_float(dropout)});
  }
  if (unbatched)
    x = L.emit_tmp(o, "unbatch", "Squeeze", {x, L.const_ints({1})});
  else if (*bf)
    x = L.emit_tmp(o, "batch_first", "Transpose", {x}, {{"perm", ais({1, 0, 2})}});
  auto finish = [&](const AtenValue* jo, int v) {
    L.set_ir(jo, L.emit("Identity", {v}, {AtenLowerer::ir_name(jo)})[0]);
  };
  finish(o, x);
  auto concat_states = [&](std::vector<int> v, const AtenValue* jo) {
    if (unbatched)
      for (auto& s : v) s = L.emit_tmp(jo, "unbatch", "Squeeze", {s, L.const_ints({1})});
    if (v.size() == 1) return finish(jo, v[0]);
    L.set_ir(jo, L.emit("Concat", v, {AtenLowerer::ir_name(jo)}, {{"axis", ai(0)}})[0]);
  };
  concat_states(hs, n->output(1));
  if (rec == Recurrence::lstm) concat_states(cs, n->output(2));
  return true;
}

// Cells: lstm_cell(x, (hx, cx), w_ih, w_hh, b_ih, b_hh) -> (hy, cy); gru_cell / rnn_tanh_cell /
// rnn_relu_cell(x, hx, w_ih, w_hh, b_ih, b_hh) -> hy. One time step of the ONNX op over a sequence of 1.
template <Recurrence rec>
bool lower_cell(AtenLowerer& L, const Node* n, const std::string&) {
  auto in = [&](size_t i) -> JV& { return L.in(n, i); };
  if (n->inputs().size() < 4) return false;
  const AtenValue* o = n->output(0);
  int w_ih = L.as_ir(in(2)), w_hh = L.as_ir(in(3));
  const Shape whh = L.graph().values[w_hh].shape;  // a copy: emitting reallocates the values
  if (!whh.rank_known || whh.rank() != 2 || !whh.dims[1].is_known()) return false;
  auto rank = L.known_rank(in(0));
  if (!rank) return false;
  int x = L.as_ir(in(0));
  // [batch, in] -> [seq 1, batch, in]; unbatched [in] -> [1, 1, in].
  x = L.emit_tmp(o, "seq", "Unsqueeze",
                 {x, L.const_ints(*rank == 1 ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0})});
  auto unsq = [&](int v, const std::string& what) {
    return L.emit_tmp(o, what, "Unsqueeze", {v, L.const_ints({0})});
  };
  std::vector<int> ins{x, unsq(w_ih, "W"), unsq(w_hh, "R")};
  bool bias = n->inputs().size() >= 6 && !AtenLowerer::is_none(in(4)) && !AtenLowerer::is_none(in(5));
  if (bias)
    ins.push_back(
        unsq(L.emit_tmp(o, "bias", "Concat", {L.as_ir(in(4)), L.as_ir(in(5))}, {{"axis", ai(0)}}), "B"));
  Attrs a = recurrent_attrs(rec, whh.dims[1].value());
  a["torch_op"] = as("rnn_cell");  // a cell, not nn.RNN/GRU/LSTM: conventions.def CALL rows
  std::vector<std::string> outs{L.tmp(o, "Y"), L.tmp(o, "Y_h")};
  if (rec == Recurrence::lstm) outs.push_back(L.tmp(o, "Y_c"));
  auto res = L.emit(recurrent_onnx_op(rec), ins, outs, a);
  // Y_h [dirs 1, batch, hidden] -> [batch, hidden] (unbatched: [hidden]).
  auto state = [&](int v, const AtenValue* jo) {
    L.set_ir(jo, L.emit("Squeeze",
                        {v, L.const_ints(*rank == 1 ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0})},
                        {AtenLowerer::ir_name(jo)})[0]);
  };
  state(res[1], n->output(0));
  if (rec == Recurrence::lstm) state(res[2], n->output(1));
  return true;
}

}  // namespace

void register_aten_rnn(AtenTable& t) {
  t.add("lstm", lower_rnn<Recurrence::lstm>);
  t.add("gru", lower_rnn<Recurrence::gru>);
  t.add("rnn_tanh", lower_rnn<Recurrence::rnn_tanh>);
  t.add("rnn_relu", lower_rnn<Recurrence::rnn_relu>);
  t.add("lstm_cell", lower_cell<Recurrence::lstm>);
  t.add("gru_cell", lower_cell<Recurrence::gru>);
  t.add("rnn_tanh_cell", lower_cell<Recurrence::rnn_tanh>);
  t.add("rnn_relu_cell", lower_cell<Recurrence::rnn_relu>);
}

}  // namespace flopwise
