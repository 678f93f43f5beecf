// src/cost/cost.cc — flopwise/cost.h: Totals' roll-up, op keys, and build_report, which costs every node of
// an inferred model (node_cost.h), counts its params and buffers (stored_tensors.h), places it in the scope
// tree (scope_tree.h, module_tree.h) and tallies the op-type and dtype tables and the warnings.
#include "flopwise/cost.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

#include "count_interner.h"
#include "flopwise/attention.h"
#include "flopwise/convention.h"
#include "flopwise/ops.h"
#include "flopwise/stored_tensors.h"
#include "flopwise/sub_byte.h"
#include "module_tree.h"
#include "node_cost.h"
#include "scope_tree.h"

namespace flopwise {

// One output row: a matrix-vector product (memory-bound, a kernel of its own), else matrix-matrix.
const char* product_kind(const Shape& y, const std::vector<std::pair<std::string, int64_t>>* at) {
  if (!y.rank_known || y.rank() < 2) return "";
  bool one_row = true;
  for (size_t d = 0; d + 1 < y.rank(); ++d) {
    const std::optional<int64_t> v =
        at && y.dims[d].is_symbolic() ? y.dims[d].substitute(*at).maybe_value() : y.dims[d].maybe_value();
    if (!v) return "";
    one_row = one_row && *v == 1;
  }
  return one_row ? "vector" : "matrix";
}

namespace {
// Totals::add_rollup, each exact count added by `add(into, count)`.
template <class Add>
void roll_up_node(Totals& t, const Totals& n, const Add& add) {
  bool any_unknown = false;
  auto add_exact = [&](Count& into, const Count& c) {
    if (!c.exact()) {
      any_unknown = true;
      into.overflowed = into.overflowed || c.overflowed;
      return;
    }
    add(into, c);
  };
  add_exact(t.params, n.params);
  add_exact(t.buffers, n.buffers);
  add_exact(t.macs, n.macs);
  add_exact(t.flops, n.flops);
  add_exact(t.memory_bytes, n.memory_bytes);
  add_exact(t.backward_flops, n.backward_flops);
  add_exact(t.backward_macs, n.backward_macs);
  t.uncounted += n.uncounted + (any_unknown ? 1 : 0);
}
}  // namespace

void Totals::add_rollup(const Totals& n) {
  roll_up_node(*this, n, [](Count& into, const Count& c) { into += c; });
}

void Totals::add_subtotal(const Totals& c) {
  add_subtotal(c, [](Count& into, const Count& from) { into += from; });
}

namespace {
std::string op_key(std::string_view domain, std::string_view op) {
  std::string key(domain);
  if (!key.empty()) key += "::";
  key += op;
  return key;
}
}  // namespace

std::string op_key(const Node& n) { return op_key(n.domain, n.op); }
std::string op_key(const NodeReport& n) { return op_key(n.domain, n.op); }

bool scope_glob_match(const std::string& pattern, const std::string& name) {
  // Recursive matcher: a star tries every split that does not cross a "." (two stars: any split).
  std::function<bool(size_t, size_t)> match = [&](size_t p, size_t s) -> bool {
    while (p < pattern.size()) {
      if (pattern[p] == '*') {
        bool deep = p + 1 < pattern.size() && pattern[p + 1] == '*';
        size_t next = p + (deep ? 2 : 1);
        for (size_t k = s;; ++k) {
          if (match(next, k)) return true;
          if (k >= name.size() || (!deep && name[k] == '.')) return false;
        }
      }
      if (s >= name.size()) return false;
      if (pattern[p] == '?' ? name[s] == '.' : pattern[p] != name[s]) return false;
      ++p, ++s;
    }
    return s == name.size();
  };
  return match(0, 0);
}

int64_t rank_value(const Count& c) {
  if (c.known) return c.v;
  if (!c.symbolic()) return -1;
  // The polynomial at every symbol = 1000, evaluated term by term; INT64_MAX when it overflows.
  int64_t total = 0;
  for (const auto& [mono, coef] : c.sym.terms()) {
    int64_t t = coef;
    for (size_t i = 0; i < mono.size(); ++i)
      if (!checked_mul(t, 1000, &t)) return INT64_MAX;
    if (!checked_add(total, t, &total)) return INT64_MAX;
  }
  return total;
}

bool Report::has_unknown_cost() const { return totals.uncounted > 0 || !unsupported.empty(); }

namespace {

using namespace cost_detail;

// The ops whose kernels NodeReport::calls and ::variant describe, by one look-up per node.
enum class KernelFamily : uint8_t { Other, Recurrent, MatMul, FusedMatMul, Gemm, Conv };
KernelFamily kernel_family(const Node& n) {
  static const std::unordered_map<std::string_view, KernelFamily> kOnnx = {
      {"LSTM", KernelFamily::Recurrent}, {"GRU", KernelFamily::Recurrent}, {"RNN", KernelFamily::Recurrent},
      {"MatMul", KernelFamily::MatMul},  {"Gemm", KernelFamily::Gemm},     {"Conv", KernelFamily::Conv}};
  if (n.domain.empty() || n.domain == "ai.onnx") {
    const auto it = kOnnx.find(n.op);
    return it == kOnnx.end() ? KernelFamily::Other : it->second;
  }
  return n.domain == "com.microsoft" && n.op == "FusedMatMul" ? KernelFamily::FusedMatMul
                                                              : KernelFamily::Other;
}

// One build_report: the report being filled, and what its tables and warnings are tallied from as the nodes
// are costed in graph order.
struct ReportBuilder {
  const Model& model;
  const Graph& g;
  const Convention& conv;
  Report r;
  std::vector<bool> seen_value;
  std::set<std::string> symbols, overflowed_nodes;
  // Op type (the report's interned domain and op, so equal texts are one address) -> its row in r.op_types.
  struct OpIdHash {
    size_t operator()(const std::pair<const char*, const char*>& k) const {
      return std::hash<const void*>()(k.first) * 31 + std::hash<const void*>()(k.second);
    }
  };
  std::unordered_map<std::pair<const char*, const char*>, size_t, OpIdHash> op_index;
  std::map<std::string, int64_t> skipped;  // ops the convention's tool skips with a warning, and how often
  ScopeTree scopes;
  // Bytes of a value, memoised by (dtype, shape): a model's values share few distinct shapes, and the
  // symbolic dims in them are copies of a few shared ones (Dim::poly_id), so a 1 M-node decoder multiplies
  // out a handful of polynomials instead of one per value and use; a node's sum of them, once per distinct
  // sum.
  NodeBytesMemo node_bytes_memo;
  NumelMemo numel_memo;  // the cost rules' elements of shapes
  CountInterner intern;
  SumMemo sums;                                    // the scopes' sums of their nodes' and children's counts
  std::unordered_map<const void*, Count> doubled;  // interned FLOPs polynomial -> its backward FLOPs (2x)
  std::vector<DtypeCounts> by_dtype;
  std::set<const Value*> local_seen;  // control-flow bodies' own stored tensors already counted
  WeightSources sources;              // Constants that reach a layer through layout-only ops
  std::vector<std::string>
      unsplit_nodes;  // control-flow nodes whose MACs no one body's precisions account for
  // --causal: 1 at a score product (QKᵀ), 2 at an AV product.
  std::vector<uint8_t> causal_at;
  std::shared_ptr<CausalDiscount> causal;

  ReportBuilder(const Model& m, const Convention& c)
      : model(m),
        g(m.graph),
        conv(c),
        seen_value(g.values.size(), false),
        by_dtype(static_cast<size_t>(DType::BFloat16) + 1),
        sources(g) {
    r.joint = std::any_of(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return n.backward; });
  }

  // The model's description, the shape pass's findings, and the scope tree's root.
  void describe_model(InferResult infer) {
    r.convention = std::string(conv.name);
    r.path = model.path;
    r.format = model_format_name(model.format);
    r.producer = model.producer;
    r.opsets = model.opsets;
    r.unsupported = std::move(infer.unsupported);
    r.warnings = model.warnings;
    r.warnings.insert(r.warnings.end(), infer.warnings.begin(), infer.warnings.end());
    r.assumptions = std::move(infer.assumptions);
    r.aliases = std::move(infer.aliases);
    r.symbols = std::move(infer.symbols);
    for (const auto& a : r.assumptions)
      r.warnings.push_back("assumed " + a.text() + " (node '" + a.node + "': " + a.why +
                           "): the formulas hold where it does");
    for (int i : g.inputs) r.inputs.push_back({g.values[i].name, {g.values[i].dtype, g.values[i].shape}});
    for (int i : g.outputs) r.outputs.push_back({g.values[i].name, {g.values[i].dtype, g.values[i].shape}});

    r.scopes = std::make_unique<ScopeNode>();
    r.scopes->name = "";
    // The root is named after the file ("resnet18"), since exporters name graphs generically.
    std::string stem = model.path.substr(model.path.find_last_of('/') + 1);
    stem = stem.substr(0, stem.find('.'));
    r.scopes->label = !stem.empty() ? stem : (g.name.empty() ? "model" : g.name);
    r.scopes->cls = g.module_class;
    r.nodes.reserve(g.nodes.size());
  }

  // --causal: the attention products whose masked triangle is not computed.
  void find_causal_products() {
    causal = std::make_shared<CausalDiscount>();
    causal_at.assign(g.nodes.size(), 0);
    for (const auto& p : find_attention_products(g)) {
      causal_at[p.node] = p.scores ? 1 : 2;
      ++causal->products;
      causal->masked += p.scores && p.masked;
    }
    if (causal->products == 0)
      r.warnings.push_back(
          "--causal: no attention products found (a MatMul into a Softmax over the last axis, and "
          "the MatMul of its output): nothing discounted");
    r.causal = causal;
  }

  // NodeReport::calls: a batched product's matrices, a grouped convolution's groups times batch, a recurrent
  // layer's time steps times directions (each step runs the cell's products once).
  int64_t kernel_calls(const Node& n, KernelFamily family) const {
    if (family == KernelFamily::Other) return 1;
    if (family == KernelFamily::Recurrent && !n.inputs.empty() && n.inputs[0] >= 0) {
      const Shape& x =
          g.values[static_cast<size_t>(n.inputs[0])].shape;  // [seq, batch, in] (layout 1: batch first)
      const size_t seq_axis = n.attr_i("layout", 0) == 1 ? 1 : 0;
      if (!x.rank_known || x.rank() != 3 || !x.dims[seq_axis].is_known() || x.dims[seq_axis].value() <= 0)
        return 1;
      const int64_t dirs = n.attr_s("direction", "forward") == "bidirectional" ? 2 : 1;
      int64_t calls = 1;
      if (__builtin_mul_overflow(x.dims[seq_axis].value(), dirs, &calls)) return 1;
      return calls;
    }
    const bool matmul = family == KernelFamily::MatMul || family == KernelFamily::FusedMatMul;
    if ((!matmul && family != KernelFamily::Conv) || n.outputs.empty() || n.outputs[0] < 0 ||
        n.inputs.size() < 2 || n.inputs[1] < 0)
      return 1;
    const Shape& y = g.values[static_cast<size_t>(n.outputs[0])].shape;
    if (!y.rank_known || y.rank() < 2) return 1;
    int64_t calls = 1;
    if (matmul) {
      const Shape& b = g.values[static_cast<size_t>(n.inputs[1])].shape;
      if (!b.rank_known || b.rank() <= 2) return 1;  // a weight matrix: one product of all rows
      for (size_t d = 0; d + 2 < y.rank(); ++d) {
        if (!y.dims[d].is_known() || y.dims[d].value() <= 0) return 1;
        if (__builtin_mul_overflow(calls, y.dims[d].value(), &calls)) return 1;
      }
      return calls;
    }
    const int64_t groups = n.attr_i("group", 1);
    if (!y.dims[0].is_known() || y.dims[0].value() <= 0 || groups <= 0) return 1;
    if (__builtin_mul_overflow(groups, y.dims[0].value(), &calls)) return 1;
    return calls;
  }

  // NodeReport::variant: a convolution's kind of kernel, a batched product.
  std::string kernel_variant(const Node& n, KernelFamily family, int64_t calls) const {
    if ((family == KernelFamily::MatMul || family == KernelFamily::Gemm) && !n.outputs.empty() &&
        n.outputs[0] >= 0) {
      return calls > 1 ? "batched" : product_kind(g.values[static_cast<size_t>(n.outputs[0])].shape);
    }
    if (family != KernelFamily::Conv || n.inputs.size() < 2 || n.inputs[1] < 0) return "";
    const Shape& w = g.values[static_cast<size_t>(n.inputs[1])].shape;  // [M, C / group, k1, k2, ...]
    if (!w.rank_known || w.rank() < 3) return "";
    std::string k;
    bool ones = true;
    for (size_t d = 2; d < w.rank(); ++d) {
      if (!w.dims[d].is_known()) return "";
      k += (k.empty() ? "" : "x") + std::to_string(w.dims[d].value());
      ones = ones && w.dims[d].value() == 1;
    }
    const int64_t groups = n.attr_i("group", 1);
    if (groups > 1) {
      if (w.dims[1].is_known() && w.dims[1].value() == 1) return "depthwise/" + k;
      return "grouped";
    }
    if (ones) return "pointwise";
    // The algorithm, where the shapes tell it: PyTorch's CPU convolution (aten Convolution.cpp, use_mkldnn)
    // runs a 2-D or 3-D convolution of batch 1, groups 1 and a kernel not larger than 3 on both of its last
    // two axes with its own im2col (vol2col) + GEMM when the input's first four dims (N*C*H*W in 2-D,
    // N*C*D*H in 3-D) hold at most 20,480 elements, several times slower per FLOP: "spatial/small/KxK";
    // oneDNN otherwise: "spatial/large/KxK". The algorithm comes before the kernel so that a calibration
    // without this kernel falls back to the same algorithm's fit, not to every spatial convolution's.
    // "spatial/KxK" where the shapes do not tell (a size that is a formula, a 1-D convolution).
    const size_t rank = w.rank();
    if (rank != 4 && rank != 5) return "spatial/" + k;
    if (w.dims[rank - 1].value() > 3 && w.dims[rank - 2].value() > 3) return "spatial/large/" + k;
    if (n.inputs[0] < 0) return "spatial/" + k;
    const Shape& x = g.values[static_cast<size_t>(n.inputs[0])].shape;
    if (!x.rank_known || x.rank() != rank) return "spatial/" + k;
    if (x.dims[0].is_known() && x.dims[0].value() != 1) return "spatial/large/" + k;
    int64_t numel = 1;  // per sample
    for (size_t d = 1; d < 4; ++d)
      if (!x.dims[d].is_known() || __builtin_mul_overflow(numel, x.dims[d].value(), &numel))
        return "spatial/" + k;
    return numel <= 20480 ? "spatial/small/" + k : "spatial/large/" + k;
  }

  // One node: its report, params and buffers, bytes, MACs and FLOPs, scope and op type.
  void cost_node(const Node& n) {
    const size_t node_index = static_cast<size_t>(&n - g.nodes.data());
    NodeReport& nr = r.nodes.emplace_back();
    nr.name = r.strings.add(n.name);
    nr.op = r.strings.intern(n.op);
    nr.domain = r.strings.intern(n.domain);
    nr.outputs.reserve(n.outputs.size());
    for (int o : n.outputs)
      if (o >= 0) nr.outputs.push_back({r.strings.add(g.values[o].name), g.values[o].shape});

    Count mem = node_bytes_memo(g, n);
    for (size_t s = 0; s < n.inputs.size(); ++s) {
      const int vi = n.inputs[s];
      if (vi < 0 || seen_value[vi]) continue;
      seen_value[vi] = true;
      const Value& v = g.values[vi];
      Role role = stored_role(g, v, n, s, sources, v);
      if (role != Role::None) count_stored(nr, v, role, packed_weight_elements(n, s, v));
    }
    if (!n.subgraphs.empty()) count_body_weights(n, nr, mem);
    nr.cost.memory_bytes = mem;
    const KernelFamily family = kernel_family(n);
    nr.calls = kernel_calls(n, family);
    if (family != KernelFamily::Other)
      if (const std::string v = kernel_variant(n, family, nr.calls); !v.empty())
        nr.variant = r.strings.intern(v);

    const OpRecord* rec = record_of(n);
    nr.supported = rec != nullptr;
    if (rec && rec->attr_params) mem += count_attr_params(nr, rec->attr_params(n));
    const OpCost oc = cost_work(n, node_index, rec, nr);
    note_unknown_counts(n, rec, oc, mem);

    ScopeNode* cur = scopes.place(n, nr, r);
    intern(nr.cost);
    nr.backward = n.backward;
    // The node's own scope (Totals::add_rollup, by the memo of sums); its ancestors get it in the pass below.
    roll_up_node(cur->cost, n.backward ? as_backward(nr.cost) : nr.cost,
                 [this](Count& into, const Count& c) { sums.add(into, c); });
    if (std::find(cur->ops.begin(), cur->ops.end(), n.op) == cur->ops.end()) cur->ops.push_back(n.op);

    add_to_op_types(n, nr, oc);
  }

  // A joint program's backward node in the roll-up: its MACs and FLOPs are the backward's.
  static Totals as_backward(Totals t) {
    t.backward_macs = t.macs;
    t.backward_flops = t.flops;
    t.macs = Count{};
    t.flops = Count{};
    return t;
  }

  // Params and buffers: each stored tensor once, at its first user; params also by dtype. `logical`: the
  // weights a packed tensor holds (stored_tensors.h), counted as params; its bytes are the tensor's. Returns
  // the tensor's elements.
  Count count_stored(NodeReport& nr, const Value& v, Role role, const std::optional<Count>& logical = {}) {
    const Count numel = v.shape.numel_count();
    if (role == Role::Buffer) {
      nr.cost.buffers += numel;
      return numel;
    }
    const Count params = logical ? *logical : numel;
    nr.cost.params += params;
    const auto t = static_cast<size_t>(v.dtype);
    if (t < 32) nr.param_dtypes |= 1u << t;
    if (t < by_dtype.size()) {
      by_dtype[t].params += params;
      by_dtype[t].weight_bytes += dtype_bytes(v.dtype, numel);
    }
    return numel;
  }

  // Weights an op keeps in its attributes (ai.onnx.ml): params of the node, float32 as ONNX stores them;
  // returns the bytes read.
  Count count_attr_params(NodeReport& nr, const Count& numel) {
    nr.cost.params += numel;
    const auto t = static_cast<size_t>(DType::Float32);
    nr.param_dtypes |= 1u << t;
    by_dtype[t].params += numel;
    by_dtype[t].weight_bytes += numel * Count{4};
    return numel * Count{4};
  }

  // Weights used only inside control-flow bodies (scripted exports, spox): counted with the node. `params`
  // takes the bodies that run (an If whose condition is decided: its branch, and so inward); branch_params
  // lists every body's, whichever runs.
  void count_body_weights(const Node& n, NodeReport& nr, Count& mem) {
    auto unseen = [&](const Graph& where, const Value& v) {
      return &where == &g ? !seen_value[static_cast<size_t>(&v - g.values.data())]
                          : local_seen.count(&v) == 0;
    };
    std::set<const Value*> listed;  // each tensor once in this node's branch_params
    for_each_body(g, n, false, [&](const std::string& branch, const Graph& body) {
      auto list = [&](const Graph& where, const Value& v) {
        return unseen(where, v) && listed.insert(&v).second;
      };
      walk_branch_weights(body, false, sources, list, [&](const Value& v, Role role) {
        if (role == Role::Buffer) return;
        auto it = std::find_if(r.branch_params.begin(), r.branch_params.end(),
                               [&](const BranchParams& b) { return b.node == n.name && b.branch == branch; });
        if (it == r.branch_params.end())
          it = r.branch_params.insert(r.branch_params.end(), BranchParams{n.name, branch, Count{}});
        it->params += v.shape.numel_count();
      });
    });
    auto claim = [&](const Graph& where, const Value& v) {
      if (!unseen(where, v)) return false;
      if (&where == &g)
        seen_value[static_cast<size_t>(&v - g.values.data())] = true;
      else
        local_seen.insert(&v);
      return true;
    };
    for_each_body(g, n, true, [&](const std::string&, const Graph& body) {
      walk_branch_weights(body, true, sources, claim, [&](const Value& v, Role role) {
        const Count numel = count_stored(nr, v, role);
        if (role != Role::Buffer) mem += dtype_bytes(v.dtype, numel);
      });
    });
  }

  // The node's MACs and FLOPs under the convention (--causal's discount first), the precision its MACs run in
  // and its backward FLOPs; returns its op's cost, MACs as the convention counts them.
  OpCost cost_work(const Node& n, size_t node_index, const OpRecord* rec, NodeReport& nr) {
    OpCost oc = node_op_cost(g, n, rec, conv, &numel_memo);
    if (!causal_at.empty() && causal_at[node_index] != 0) {  // --causal: the masked triangle is not computed
      const Count skip = causal_skipped_macs(g, n, causal_at[node_index] == 1);
      oc.macs = oc.macs - skip;
      oc.flops = oc.flops - skip * Count{2};
      causal->macs_skipped += skip;
    }
    bool tool_skips = false;
    const Count conv_flops = [&] {
      OpCost cc = convention_cost(g, n, rec, oc, conv, &tool_skips);
      oc.macs = cc.macs;
      return cc.flops;
    }();
    nr.cost.macs = oc.macs;
    if (!n.subgraphs.empty()) {
      // A control-flow node's products run in its bodies, each at its own precision (never the condition's
      // bool or a trip count's int64): by dtype as its counts take the bodies.
      nr.mac_dtype = body_mac_dtype(oc.body.get(), oc.macs);
      r.body_work.emplace(node_index, oc.body);
      if (oc.body) {
        for (const BodyWork& w : *oc.body)
          if (w.mac_dtype != DType::Undefined && w.macs.exact() &&
              static_cast<size_t>(w.mac_dtype) < by_dtype.size())
            by_dtype[static_cast<size_t>(w.mac_dtype)].macs += w.macs;
      } else if (!(oc.macs.known && oc.macs.v == 0)) {
        unsplit_nodes.push_back(n.name);
      }
    } else {
      nr.mac_dtype = mac_dtype_of(g, n, oc.macs);
      if (nr.mac_dtype != DType::Undefined && oc.macs.exact() &&
          static_cast<size_t>(nr.mac_dtype) < by_dtype.size())
        by_dtype[static_cast<size_t>(nr.mac_dtype)].macs += oc.macs;
    }
    nr.cost.flops = conv_flops;
    if (tool_skips) ++skipped[op_key(n)];
    if (r.joint) return oc;  // the program's own backward is counted, not the 2 x forward rule
    if (nr.cost.flops.symbolic() && !nr.cost.flops.overflowed) {
      // Twice each distinct polynomial once: nodes of repeated layers share their (interned) FLOPs.
      intern(nr.cost.flops);
      auto [twice, fresh] = doubled.try_emplace(nr.cost.flops.sym.poly_id());
      if (fresh) twice->second = nr.cost.flops * Count{2};
      nr.cost.backward_flops = twice->second;
    } else {
      nr.cost.backward_flops = nr.cost.flops * Count{2};
    }
    return oc;
  }

  // A node whose counts are not known numbers: its overflows, or the symbols they are not expressed in.
  void note_unknown_counts(const Node& n, const OpRecord* rec, const OpCost& oc, const Count& mem) {
    if (rec && (!oc.flops.exact() || !oc.macs.exact() || !mem.exact())) {
      bool overflow = oc.flops.overflowed || oc.macs.overflowed || mem.overflowed;
      if (overflow) overflowed_nodes.insert(n.name);
      for (int o : n.outputs)
        if (o >= 0)
          for (const auto& d : g.values[o].shape.dims)
            for (const auto& s : d.symbols()) symbols.insert(s);
      for (int i : n.inputs)
        if (i >= 0)
          for (const auto& d : g.values[i].shape.dims)
            for (const auto& s : d.symbols()) symbols.insert(s);
    }
  }

  void add_to_op_types(const Node& n, const NodeReport& nr, const OpCost& oc) {
    const std::pair<const char*, const char*> id{nr.domain.empty() ? nullptr : nr.domain.data(),
                                                 nr.op.data()};
    auto [it, inserted] = op_index.try_emplace(id, r.op_types.size());
    if (inserted) r.op_types.push_back(OpTypeReport{op_key(n), 0, Count{}, Count{}, Count{}, Count{}});
    auto& ot = r.op_types[it->second];
    ot.count += 1;
    ot.macs += oc.macs;
    ot.flops += nr.cost.flops;
    ot.params += nr.cost.params;
    ot.memory_bytes += nr.cost.memory_bytes;
  }

  // After the last node: scope roll-up, module tree, op types sorted, warnings and the dtype table.
  Report finish() {
    roll_up_scopes(*r.scopes, intern, sums);
    for (auto& ot : r.op_types)
      for (Count* c : {&ot.macs, &ot.flops, &ot.params, &ot.memory_bytes}) intern(*c);
    r.totals = r.scopes->cost;
    if (!model.modules.empty()) {
      apply_module_tree(*r.scopes, model.modules);
      if (conv.held_params) {  // the convention's tool counts each module's params as the module holds them
        use_held_params(*r.scopes);
        r.totals.params = r.scopes->cost.params;
      }
    }
    std::stable_sort(r.op_types.begin(), r.op_types.end(), [](const OpTypeReport& a, const OpTypeReport& b) {
      return rank_value(a.flops) > rank_value(b.flops);
    });
    add_warnings();
    for (size_t t = 0; t < by_dtype.size(); ++t) {
      auto& d = by_dtype[t];
      if (d.params == Count{} && d.macs == Count{}) continue;
      d.dtype = static_cast<DType>(t);
      r.by_dtype.push_back(std::move(d));
    }
    return std::move(r);
  }

  // The report's warnings about its counts: symbols, overflows, what the convention cannot reproduce or
  // skips, control-flow nodes missing from the dtype table, nodes of unknown cost.
  void add_warnings() {
    if (!symbols.empty()) {
      std::string list;
      for (const auto& s : symbols) list += (list.empty() ? "" : ", ") + s;
      r.warnings.push_back("costs of some nodes cannot be expressed in the symbolic dims (" + list +
                           "): bind them with --dim NAME=VALUE");
    }
    std::set<std::string> total_symbols;
    for (const Count* c : {&r.totals.macs, &r.totals.flops, &r.totals.memory_bytes})
      for (const auto& s : c->sym.symbols()) total_symbols.insert(s);
    if (!total_symbols.empty()) {
      std::string list;
      for (const auto& s : total_symbols) list += (list.empty() ? "" : ", ") + s;
      r.warnings.push_back("costs are polynomials in the model's dynamic dims (" + list +
                           "); bind them with --dim NAME=VALUE for numbers");
    }
    if (!overflowed_nodes.empty()) {
      std::string list;
      for (const auto& s : overflowed_nodes) list += (list.empty() ? "" : ", ") + s;
      r.warnings.push_back("count overflows 64 bits in: " + list + " (reported as unknown)");
    }
    // A tool that hooks the PyTorch module sees BatchNorm that an ONNX exporter folds into the conv
    // weights (torch.onnx in eval mode does): its figure cannot be reproduced from the folded graph.
    if (!is_default(conv) && model.format == ModelFormat::Onnx) {
      bool conv_bias = false, batch_norm = false;
      for (const auto& n : g.nodes) {
        if (n.op == "Conv" && n.domain.empty() && n.inputs.size() > 2 && n.inputs[2] >= 0) conv_bias = true;
        if (n.op == "BatchNormalization") batch_norm = true;
      }
      if (conv_bias && !batch_norm)
        r.warnings.push_back("convention '" + std::string(conv.name) +
                             "': this ONNX graph has biased Convs and no BatchNormalization; if its exporter "
                             "folded BatchNorm into "
                             "the convs (torch.onnx does in eval mode), the tool counting the PyTorch module "
                             "counts BatchNorm and no "
                             "conv bias: analyse the .pt (TorchScript) to reproduce it exactly");
    }
    if (!skipped.empty()) {
      std::string list;
      for (const auto& [op, k] : skipped) list += (list.empty() ? "" : ", ") + op + " x" + std::to_string(k);
      r.warnings.push_back("convention '" + std::string(conv.name) +
                           "' counts 0 for what its tool skips as unsupported: " + list);
    }
    if (!unsplit_nodes.empty()) {
      std::string list;
      for (const auto& s : unsplit_nodes) list += (list.empty() ? "" : ", ") + s;
      r.warnings.push_back(
          "MACs by precision leave out control-flow node(s) " + list +
          ": which branch is costlier depends on the dims, so their MACs are no one branch's");
    }
    if (r.totals.uncounted > 0)
      r.warnings.push_back(
          std::to_string(r.totals.uncounted) +
          " node(s) have an unknown cost; totals count the rest (see unsupported/uncounted)");
  }
};

}  // namespace

Report build_report(const Model& model, InferResult infer) {
  return build_report(model, std::move(infer), default_convention());
}

Report build_report(const Model& model, InferResult infer, const Convention& conv, const CostOptions& opts) {
  ReportBuilder b(model, conv);
  b.describe_model(std::move(infer));
  if (opts.causal) b.find_causal_products();
  for (const auto& n : model.graph.nodes) b.cost_node(n);
  return b.finish();
}

}  // namespace flopwise
