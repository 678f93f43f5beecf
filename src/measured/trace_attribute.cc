// src/measured/trace_attribute.cc — a PyTorch trace's time joined with the static cost of its ops
// (flopwise/torch_trace.h, analyse_trace), and stage 2 of it (trace_stages.h, attribute_trace).
//
// analyse_trace only calls the stages: nest (trace_nest.cc), attribute (here), roll up (trace_roll_up.cc).
//
// Attribution, on the nested events:
//   - each distinct call is priced through the AtenCoster;
//   - each CPU event gets its owner: the op its time and its kernels count to. The outermost aten op whose
//     call the cost rules price owns everything under it (aten::conv2d owns aten::convolution ...
//     cudnn_convolution and their kernels); an op none of whose descendants is priced owns itself, uncosted
//     (a triton kernel's launch, an op without a rule); an op with priced descendants passes its kernels'
//     time down to them;
//   - each owner gets its FLOPs, bytes and roofline bound on the report's device;
//   - a GPU event belongs to the op that launched it: the innermost op enclosing, on its thread, the runtime
//     call its correlation id names (else the op whose External id it carries), and so to that op's owner;
//     one whose op is absent is unattributed (counted in the totals, not in any op).
#include "trace_stages.h"

namespace flopwise {

namespace trace_stages {

namespace {

PeakType peak_of(const std::string& dtype, bool tf32, bool has_macs) {
  if (!has_macs) return PeakType::Float32;
  if (dtype == "float16") return PeakType::Float16;
  if (dtype == "bfloat16") return PeakType::BFloat16;
  if (dtype == "int8" || dtype == "uint8") return PeakType::Int8;
  return tf32 ? PeakType::TF32 : PeakType::Float32;
}

std::vector<AtenCost> price_calls(const TorchTrace& t, const AtenCoster& cost) {
  std::vector<AtenCost> costs;
  if (cost) costs = cost(t.calls);
  costs.resize(t.calls.size());
  for (auto& c : costs)
    if (!c.costed && c.why.empty()) c.why = "not costed";
  return costs;
}

// The cost of an event's call where the rules price it, else nullptr.
struct CallCosts {
  const std::vector<TraceEvent>& ev;
  const std::vector<AtenCost>& costs;
  const AtenCost* operator()(size_t i) const {
    const TraceEvent& e = ev[i];
    if (e.kind != TraceKind::CpuOp || e.call < 0) return nullptr;
    const AtenCost& c = costs[static_cast<size_t>(e.call)];
    return c.costed ? &c : nullptr;
  }
};

// Of each event: whether it is priced (bit 4: of non-zero FLOPs too, bit 8), whether a priced op is below it
// (bit 1; of non-zero FLOPs, bit 2). Children before parents, so reverse time order.
std::vector<uint8_t> priced_bits(const TraceNest& nest, const CallCosts& costed) {
  std::vector<uint8_t> bits(nest.parent.size(), 0);
  for (auto it = nest.order.rbegin(); it != nest.order.rend(); ++it) {
    uint32_t i = *it;
    uint8_t self = 0;
    if (const AtenCost* c = costed(i)) self = c->flops > 0 ? 3 : 1;
    bits[i] |= static_cast<uint8_t>(self << 2);
    if (nest.parent[i] >= 0) bits[static_cast<size_t>(nest.parent[i])] |= (bits[i] & 3) | self;
  }
  return bits;
}

// The owner of each event (-1: it passes its time down), from the top: the first priced op; an aten op the
// rules cannot price owns its subtree (convolution_backward and the cuDNN calls under it) unless ops under it
// carry FLOPs the rules price (a composite op's parts); any other event (an autograd node, a compiled region)
// passes its subtree down unless nothing under it is priced (a triton kernel's launch owns itself).
std::vector<int> op_owners(const TorchTrace& t, const TraceNest& nest, const CallCosts& costed) {
  const std::vector<uint8_t> bits = priced_bits(nest, costed);
  std::vector<int> owner(t.cpu.size(), -1);
  for (uint32_t i : nest.order) {
    const TraceEvent& e = t.cpu[i];
    const int p = nest.parent[i];
    const int po = p >= 0 ? owner[static_cast<size_t>(p)] : -1;
    const uint8_t b = bits[i];
    if (po >= 0)
      owner[i] = po;
    else if (e.kind == TraceKind::CpuOp &&
             ((b & 4) || (starts_with(t.names[e.name], "aten::") ? !(b & 2) : !(b & 3))))
      owner[i] = static_cast<int>(i);
  }
  return owner;
}

// An owner's cost and its roofline bound on hw.
PricedOp price_op(const TorchTrace& t, uint32_t i, const AtenCost* c, const std::optional<Hardware>& hw) {
  const TraceEvent& e = t.cpu[i];
  const std::string& opname = t.names[e.name];
  PricedOp op;
  op.event = i;
  op.cost = c;
  if (!c || !hw) return op;
  // A trace does not record the TF32 flags: PyTorch's defaults are assumed, cuDNN's on (float32
  // convolutions on tensor cores), cuBLAS's off (--hardware NAME:tf32 turns products on too).
  bool conv = opname.find("conv") != std::string::npos;
  PeakType pt = peak_of(c->dtype, hw->tf32 || conv, c->macs > 0);
  double peak = hw->peak[static_cast<size_t>(pt)];
  if (peak <= 0) peak = hw->peak[static_cast<size_t>(PeakType::Float32)];
  bool cb = false;
  if (peak > 0 && hw->bandwidth > 0) {
    op.bound_us = 1e6 * node_bound_seconds(static_cast<double>(c->flops), static_cast<double>(c->bytes), peak,
                                           hw->bandwidth, &cb);
    op.compute_bound_us = cb ? op.bound_us : 0;
  }
  return op;
}

// The op of each External id (the first op of an id): (id, op) pairs sorted; ids grow with time, so the
// pairs arrive nearly in order.
class ExternalIds {
 public:
  explicit ExternalIds(const std::vector<TraceEvent>& ev) {
    for (size_t i = 0; i < ev.size(); ++i)
      if (ev[i].kind == TraceKind::CpuOp && ev[i].ext >= 0)
        by_ext_.emplace_back(ev[i].ext, static_cast<uint32_t>(i));
    sort_runs(by_ext_);
  }
  int op(int64_t ext) const {
    auto it = std::lower_bound(by_ext_.begin(), by_ext_.end(), std::make_pair(ext, uint32_t{0}));
    return it != by_ext_.end() && it->first == ext ? static_cast<int>(it->second) : -1;
  }

 private:
  std::vector<std::pair<int64_t, uint32_t>> by_ext_;
};

// Each GPU event's launching op, by its correlation, else by its External id (only for traces without
// runtime events: the External ids are indexed only when some GPU event needs them), and that op's owner.
std::vector<KernelOp> kernel_ops(const TorchTrace& t, const TraceNest& nest, const std::vector<int>& owner,
                                 const CallCosts& costed) {
  std::vector<KernelOp> out(t.gpu.size());
  bool need_ext = false;
  for (size_t k = 0; k < t.gpu.size(); ++k) {
    const TraceEvent& g = t.gpu[k];
    out[k].op = g.corr >= 0 ? nest.launcher.op(g.corr) : -1;
    if (out[k].op < 0 && g.ext >= 0) need_ext = true;
  }
  if (need_ext) {
    const ExternalIds by_ext(t.cpu);
    for (size_t k = 0; k < t.gpu.size(); ++k)
      if (out[k].op < 0 && t.gpu[k].ext >= 0) out[k].op = by_ext.op(t.gpu[k].ext);
  }
  for (KernelOp& k : out) {
    if (k.op < 0) continue;
    const int o = owner[static_cast<size_t>(k.op)];
    k.owner = o >= 0 ? o : k.op;  // an op with priced children: itself
    k.costed = o >= 0 && costed(static_cast<size_t>(o));
    k.beside = o < 0;
  }
  return out;
}

}  // namespace

const char* uncosted_why(const TorchTrace& t, const TraceAttribution& a, uint32_t event) {
  const TraceEvent& e = t.cpu[event];
  if (e.call >= 0) return a.costs[static_cast<size_t>(e.call)].why.c_str();
  return starts_with(t.names[e.name], "aten::") ? "no shapes recorded (record_shapes=False?)"
                                                : "not an aten op";
}

TraceAttribution attribute_trace(const TorchTrace& t, const TraceNest& nest, const AtenCoster& cost,
                                 const std::optional<Hardware>& hw) {
  TraceAttribution a;
  a.costs = price_calls(t, cost);
  const CallCosts costed{t.cpu, a.costs};
  const std::vector<int> owner = op_owners(t, nest, costed);
  for (size_t i = 0; i < owner.size(); ++i)
    if (owner[i] == static_cast<int>(i))
      a.owners.push_back(price_op(t, static_cast<uint32_t>(i), costed(i), hw));
  a.kernels = kernel_ops(t, nest, owner, costed);
  return a;
}

}  // namespace trace_stages

TraceReport analyse_trace(const TorchTrace& t, const AtenCoster& cost, const TraceOptions& opts) {
  TraceReport r = trace_stages::start_report(t, opts);
  trace_stages::TraceNest nest = trace_stages::nest_trace(t);
  const trace_stages::TraceAttribution a = trace_stages::attribute_trace(t, nest, cost, r.hw);
  trace_stages::roll_up_trace(t, std::move(nest), a, r);
  return r;
}

}  // namespace flopwise
