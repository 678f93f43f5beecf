// src/cost/node_cost.cc — one node's cost (node_cost.h): MACs and FLOPs by its op's record, a convention's
// FLOPs from the node's kind of work (a bias add told from other Adds), control-flow bodies costed run by
// run, and the precision of its products (quantised ops, QDQ pairs, the operands' float type).
#include "node_cost.h"

#include <memory>

#include "flopwise/cost.h"
#include "flopwise/stored_tensors.h"
#include "flopwise/sub_byte.h"

namespace flopwise {

namespace cost_detail {

// Cost of one run of a graph's nodes (for control-flow bodies): MACs, and FLOPs under `conv`.
OpCost graph_cost(const Graph& g, const Convention& conv);

Count bytes_of(const Value& v) {
  if (v.dtype == DType::String) return Count{};
  return dtype_bytes(v.dtype, v.shape.numel_count());
}

const OpRecord* record_of(const Node& n) { return OpRegistry::instance().find(n.domain, n.op, n.opset); }

// MACs and default FLOPs of one node by its record; unknown without one (an unsupported op). A
// control-flow node's bodies are costed under `conv`, so its FLOPs are that convention's already.
OpCost node_op_cost(const Graph& g, const Node& n, const OpRecord* rec, const Convention& conv,
                    NumelMemo* numel) {
  if (!rec) return OpCost{Count::unknown(), Count::unknown()};
  CostContext ctx{g, n, [&conv](const Graph& sub) { return graph_cost(sub, conv); }, numel};
  return rec->cost(ctx);
}

namespace {

// A value that is a parameter, directly or through layout-only ops (Linear's weight behind a Transpose).
bool param_rooted(const Graph& g, int vi) {
  for (int hops = 0; vi >= 0 && hops < 4; ++hops) {
    const Value& v = g.values[vi];
    if (v.is_initializer) return is_float(v.dtype) && !v.is_buffer;
    if (v.producer < 0 || static_cast<size_t>(v.producer) >= g.nodes.size()) return false;
    const Node& p = g.nodes[v.producer];
    const OpRecord* rec = record_of(p);
    if (!rec || rec->kind != WorkKind::layout || p.inputs.empty()) return false;
    vi = p.inputs[0];
  }
  return false;
}

// A node's kind of work: its op's, except an Add of a 1-d parameter (or a slice of one) onto a contraction's
// output, which is a bias add (Linear on 3-d input is MatMul + Add, in torch.onnx exports and our lowering).
WorkKind node_kind(const Graph& g, const Node& n, const OpRecord& rec) {
  if (n.op != "Add" || !n.domain.empty() || n.inputs.size() != 2) return rec.kind;
  for (int s = 0; s < 2; ++s) {
    int p = n.inputs[s], o = n.inputs[1 - s];
    if (p < 0 || o < 0) continue;
    const Value& pv = g.values[p];
    // A 1-d parameter, or a piece of one (MultiheadAttention's q/k/v biases are a split of in_proj_bias).
    if (!pv.shape.rank_known || pv.shape.rank() != 1 || !param_rooted(g, p)) continue;
    int prod = g.values[o].producer;
    if (prod < 0 || static_cast<size_t>(prod) >= g.nodes.size()) continue;
    const OpRecord* pr = record_of(g.nodes[prod]);
    if (pr && pr->kind == WorkKind::contraction) return WorkKind::bias;
  }
  return rec.kind;
}

// A node's FLOPs under `conv`, from its op's work (`oc`); `skipped` (when given) is set when the
// convention's tool skips the op as unsupported.
Count node_flops(const Graph& g, const Node& n, const OpRecord& rec, const OpCost& oc, const Convention& conv,
                 bool* skipped = nullptr) {
  if (is_default(conv)) return oc.flops;
  CostContext ctx{g, n, nullptr};
  const Graph* root = &g;
  while (root->parent) root = root->parent;
  NodeWork w{ctx, root, node_kind(g, n, rec), oc.macs, oc.bias, Count{}, oc.flops, Count{}, Count{},
             {},  false};
  w.rest = oc.flops - oc.macs * Count{2} - oc.bias;
  if (w.kind == WorkKind::bias) w.bias = oc.flops, w.rest = 0;
  w.in = ctx.in_numel(0);
  w.out = ctx.out_numel(0);
  if (!n.scope.empty()) {
    if (n.scope_classes.size() == n.scope.size()) w.module = n.scope_classes.back();
  } else {  // at the root: the root module's own class (a bare nn.Linear, a model's functional calls)
    w.module = root->module_class;
  }
  w.weight_operand =
      rec.kind == WorkKind::contraction && ((n.inputs.size() > 1 && param_rooted(g, n.inputs[1])) ||
                                            (!n.inputs.empty() && param_rooted(g, n.inputs[0])));
  w.affine = n.inputs.size() > 1 && param_rooted(g, n.inputs[1]);
  auto call = n.attrs.find("torch_op");
  const ConventionRule& rule = convention_rule(
      conv, rec, w.kind, call == n.attrs.end() ? std::string_view() : std::string_view(call->second.s));
  if (skipped) *skipped = rule.skipped;
  return rule.flops(w);
}

}  // namespace

OpCost convention_cost(const Graph& g, const Node& n, const OpRecord* rec, const OpCost& oc,
                       const Convention& conv, bool* skipped) {
  OpCost c = oc;
  if (!rec) return c;
  c.flops = node_flops(g, n, *rec, oc, conv, skipped);
  if (conv.own_macs) {
    c.macs = c.flops;
    c.flops = c.macs * Count{2};
  }
  return c;
}

// One run of a body: its nodes' counts summed, and each node's work at its own precision (a nested
// control-flow node contributes its bodies' entries).
OpCost graph_cost(const Graph& g, const Convention& conv) {
  OpCost total;
  auto body = std::make_shared<std::vector<BodyWork>>();
  bool complete = true;  // every nested control-flow node knows its bodies' work
  for (const auto& n : g.nodes) {
    const OpRecord* rec = record_of(n);
    OpCost c = convention_cost(g, n, rec, node_op_cost(g, n, rec, conv), conv);
    total.macs += c.macs;
    const Count flops = c.flops;
    total.flops += flops;
    if (!n.subgraphs.empty()) {
      if (c.body)
        body->insert(body->end(), c.body->begin(), c.body->end());
      else if (!(c.macs.known && c.macs.v == 0 && flops.known && flops.v == 0))
        complete = false;
      continue;
    }
    body->push_back(BodyWork{mac_dtype_of(g, n, c.macs), c.macs, flops, node_bytes(g, n, [&g](int vi) {
                               return bytes_of(g.values[static_cast<size_t>(vi)]);
                             })});
  }
  if (complete) total.body = std::move(body);
  return total;
}

namespace {

DType eight_bit(DType t) { return t == DType::UInt8 ? DType::Int8 : t; }
// A DequantizeLinear of 8-bit data, directly or through layout-only ops (a Flatten between DQ and MatMul).
bool dequantised_8bit(const Graph& g, int vi) {
  for (int hops = 0; vi >= 0 && hops < 4; ++hops) {
    const Value& v = g.values[static_cast<size_t>(vi)];
    if (v.producer < 0 || static_cast<size_t>(v.producer) >= g.nodes.size()) return false;
    const Node& p = g.nodes[static_cast<size_t>(v.producer)];
    if (p.inputs.empty() || p.inputs[0] < 0) return false;
    if (p.op == "DequantizeLinear") {
      DType t = g.values[static_cast<size_t>(p.inputs[0])].dtype;
      return t == DType::Int8 || t == DType::UInt8;
    }
    const OpRecord* rec = record_of(p);
    if (!rec || rec->kind != WorkKind::layout) return false;
    vi = p.inputs[0];
  }
  return false;
}

}  // namespace

DType mac_dtype_of(const Graph& g, const Node& n, const Count& macs) {
  if (macs.known && macs.v == 0) return DType::Undefined;
  auto in_dtype = [&](size_t i) {
    return i < n.inputs.size() && n.inputs[i] >= 0 ? g.values[static_cast<size_t>(n.inputs[i])].dtype
                                                   : DType::Undefined;
  };
  const WeightFacts& w = weight_facts(n);
  if (w.int8_products) return DType::Int8;  // A quantised on the fly
  if (w.quantised && w.quant) {
    DType t = in_dtype(0);
    return is_integer(t) ? eight_bit(t) : eight_bit(in_dtype(quant_operand_slot(w.quant)));
  }
  // QDQ: a product whose operands are all dequantised 8-bit tensors runs in int8 on a quantising runtime.
  size_t operands = 0, dq = 0;
  for (size_t i = 0; i < std::min<size_t>(n.inputs.size(), 2); ++i)
    if (n.inputs[i] >= 0) ++operands, dq += dequantised_8bit(g, n.inputs[i]) ? 1 : 0;
  if (operands == 2 && dq == 2) return DType::Int8;
  // The operands' float type: input 0 is not always an operand (an embedding op's token ids come first).
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (is_float(in_dtype(i))) return in_dtype(i);
  // An integer product (MatMul of int32 tensors); never bool, which no product runs in.
  const DType t = in_dtype(0);
  return t == DType::Bool ? DType::Undefined : t;
}

DType body_mac_dtype(const std::vector<BodyWork>* body, const Count& macs) {
  if (!body || (macs.known && macs.v == 0)) return DType::Undefined;
  DType one = DType::Undefined;
  for (const BodyWork& w : *body) {
    if (w.mac_dtype == DType::Undefined || (w.macs.known && w.macs.v == 0)) continue;
    if (one != DType::Undefined && one != w.mac_dtype) return DType::Undefined;
    one = w.mac_dtype;
  }
  return one;
}

}  // namespace cost_detail

WorkKind node_work_kind(const Graph& g, const Node& n) {
  const OpRecord* rec = cost_detail::record_of(n);
  return rec ? cost_detail::node_kind(g, n, *rec) : WorkKind::other;
}

}  // namespace flopwise
