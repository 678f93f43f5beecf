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
//   - each priced call gets its roofline bound on the report's device (as a product and as a convolution:
//     an owner's FLOPs, bytes and bound are its call's);
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

// Facts of each event, for its owner: what is priced below it, children before parents (reverse time order).
enum OwnerBits : uint8_t {
  kBelow = 1,        // a priced op is below it
  kBelowFlops = 2,   // a priced op of non-zero FLOPs is below it
  kPriced = 4,       // it is priced itself (kBelow shifted up)
  kPricedFlops = 8,  // it is priced, of non-zero FLOPs (kBelowFlops shifted up)
  kCpuOp = 16,       // a cpu_op: only they own
};
std::vector<uint8_t> owner_bits(const TorchTrace& t, const TraceNest& nest, const TraceAttribution& a) {
  std::vector<uint8_t> bits(nest.parent.size(), 0);
  for (auto it = nest.order.rbegin(); it != nest.order.rend(); ++it) {
    uint32_t i = *it;
    uint8_t self = 0;  // as kBelow | kBelowFlops
    if (const AtenCost* c = a.cost_of(t, i)) self = c->flops > 0 ? kBelow | kBelowFlops : kBelow;
    bits[i] |= static_cast<uint8_t>(self << 2 | (t.cpu[i].kind == TraceKind::CpuOp ? kCpuOp : 0));
    if (nest.parent[i] >= 0)
      bits[static_cast<size_t>(nest.parent[i])] |= (bits[i] & (kBelow | kBelowFlops)) | self;
  }
  return bits;
}

// The owner of each event (-1: it passes its time down), from the top: the first priced op; an aten op the
// rules cannot price owns its subtree (convolution_backward and the cuDNN calls under it) unless ops under it
// carry FLOPs the rules price (a composite op's parts); any other event (an autograd node, a compiled region)
// passes its subtree down unless nothing under it is priced (a triton kernel's launch owns itself).
std::vector<int> op_owners(const TorchTrace& t, const TraceNest& nest, const TraceAttribution& a) {
  const std::vector<uint8_t> bits = owner_bits(t, nest, a);
  std::vector<int> owner(t.cpu.size(), -1);
  for (uint32_t i : nest.order) {
    const int p = nest.parent[i];
    const int po = p >= 0 ? owner[static_cast<size_t>(p)] : -1;
    const uint8_t b = bits[i];
    if (po >= 0)
      owner[i] = po;
    else if ((b & kCpuOp) && ((b & kPriced) || (starts_with(t.names[t.cpu[i].name], "aten::")
                                                    ? !(b & kBelowFlops)
                                                    : !(b & (kBelow | kBelowFlops)))))
      owner[i] = static_cast<int>(i);
  }
  return owner;
}

// Each priced call's bound on hw, as a product and as a convolution (cuDNN's TF32 default; --hardware
// NAME:tf32 turns products on too).
std::vector<std::array<CallBound, 2>> call_bounds(const std::vector<AtenCost>& costs, const Hardware& hw) {
  std::vector<std::array<CallBound, 2>> out(costs.size());
  for (size_t k = 0; k < costs.size(); ++k) {
    const AtenCost& c = costs[k];
    if (!c.costed) continue;
    for (int conv = 0; conv < 2; ++conv) {
      PeakType pt = peak_of(c.dtype, hw.tf32 || conv, c.macs > 0);
      double peak = hw.peak[static_cast<size_t>(pt)];
      if (peak <= 0) peak = hw.peak[static_cast<size_t>(PeakType::Float32)];
      if (peak <= 0 || hw.bandwidth <= 0) continue;
      bool cb = false;
      CallBound& b = out[k][static_cast<size_t>(conv)];
      b.bound_us = 1e6 * node_bound_seconds(static_cast<double>(c.flops), static_cast<double>(c.bytes), peak,
                                            hw.bandwidth, &cb);
      b.compute_bound_us = cb ? b.bound_us : 0;
    }
  }
  return out;
}

// Of each name: whether it names a convolution ("conv" in it).
std::vector<uint8_t> conv_names(const std::vector<std::string>& names) {
  std::vector<uint8_t> out(names.size());
  for (size_t k = 0; k < names.size(); ++k) out[k] = names[k].find("conv") != std::string::npos;
  return out;
}

// The op of each External id that some GPU event needs (the first op of an id): those ids, sorted, each with
// its op (-1: none), instead of (id, op) pairs of every op.
class ExternalIds {
 public:
  ExternalIds(const std::vector<TraceEvent>& ev, std::vector<std::pair<int64_t, int>> needed)
      : by_ext_(std::move(needed)) {
    sort_runs(by_ext_);
    by_ext_.erase(std::unique(by_ext_.begin(), by_ext_.end()), by_ext_.end());
    for (size_t i = 0; i < ev.size(); ++i)
      if (ev[i].kind == TraceKind::CpuOp && ev[i].ext >= 0) {
        auto it = std::lower_bound(by_ext_.begin(), by_ext_.end(), std::make_pair(ev[i].ext, -1));
        if (it != by_ext_.end() && it->first == ev[i].ext && it->second < 0) it->second = static_cast<int>(i);
      }
  }
  int op(int64_t ext) const {
    auto it = std::lower_bound(by_ext_.begin(), by_ext_.end(), std::make_pair(ext, -1));
    return it != by_ext_.end() && it->first == ext ? it->second : -1;
  }

 private:
  std::vector<std::pair<int64_t, int>> by_ext_;
};

// Each GPU event's launching op, by its correlation, else by its External id (only for traces without
// runtime events: the External ids are indexed only when some GPU event needs them), and that op's owner.
std::vector<KernelOp> kernel_ops(const TorchTrace& t, const TraceNest& nest, const TraceAttribution& a) {
  auto launched_by = [&](KernelOp& k, int op) {
    k.op = op;
    if (op < 0) return;
    const int o = a.owner[static_cast<size_t>(op)];
    k.owner = o >= 0 ? o : op;  // an op with priced children: itself
    k.costed = o >= 0 && a.cost_of(t, static_cast<size_t>(o));
    k.beside = o < 0;
  };
  std::vector<KernelOp> out(t.gpu.size());
  std::vector<std::pair<int64_t, int>> need_ext;  // (External id, -1) of each GPU event without a launch
  for (size_t k = 0; k < t.gpu.size(); ++k) {
    const TraceEvent& g = t.gpu[k];
    launched_by(out[k], g.corr >= 0 ? nest.launcher.op(g.corr) : -1);
    if (out[k].op < 0 && g.ext >= 0) need_ext.emplace_back(g.ext, -1);
  }
  if (!need_ext.empty()) {
    const ExternalIds by_ext(t.cpu, std::move(need_ext));
    for (size_t k = 0; k < t.gpu.size(); ++k)
      if (out[k].op < 0 && t.gpu[k].ext >= 0) launched_by(out[k], by_ext.op(t.gpu[k].ext));
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

TraceAttribution attribute_trace(const TorchTrace& t, TraceNest& nest, const AtenCoster& cost,
                                 const std::optional<Hardware>& hw) {
  TraceAttribution a;
  a.costs = price_calls(t, cost);
  a.owner = op_owners(t, nest, a);
  // The nesting's order and parents, freed once the owners are known (a 1 GB trace: 11 MiB; roll up reads
  // neither).
  std::vector<uint32_t>().swap(nest.order), std::vector<int>().swap(nest.parent);
  if (hw) {
    a.bounds = call_bounds(a.costs, *hw);
    a.conv_name = conv_names(t.names);
  }
  a.kernels = kernel_ops(t, nest, a);
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
