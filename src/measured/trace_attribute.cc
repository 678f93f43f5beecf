// src/measured/trace_attribute.cc — a PyTorch trace's time joined with the static cost of its ops
// (flopwise/torch_trace.h, analyse_trace).
//
// The CPU events of each thread nest by time (an event inside another's [ts, ts + dur) is its child). Walking
// them in time order gives every event its parent, and then:
//   - its owner: the op its time and its kernels count to. The outermost aten op whose call the cost rules
//     price owns everything under it (aten::conv2d owns aten::convolution ... cudnn_convolution and their
//     kernels); an op none of whose descendants is priced owns itself, uncosted (a triton kernel's launch,
//     an op without a rule); an op with priced descendants passes its kernels' time down to them;
//   - its module scope: the nn.Module events above it, record_function labels (not ProfilerStep#N); a
//     backward autograd node takes the scope of the forward op its fwdbwd flow starts at;
//   - its phase: backward under an autograd engine node, optimizer under an Optimizer.* label, else forward;
//   - its step: the ProfilerStep#N annotation whose span holds its start.
// A GPU event belongs to the op that launched it: the innermost op enclosing, on its thread, the runtime call
// its correlation id names (else the op whose External id it carries), and so to that op's owner; one whose
// op is absent is counted as unattributed (in the totals, not in any op).
#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <map>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "flopwise/torch_trace.h"

namespace flopwise {

namespace {

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

void add_checked(int64_t& acc, int64_t v, bool& overflow) {
  if (__builtin_add_overflow(acc, v, &acc)) overflow = true;
}

PeakType peak_of(const std::string& dtype, bool tf32, bool has_macs) {
  if (!has_macs) return PeakType::Float32;
  if (dtype == "float16") return PeakType::Float16;
  if (dtype == "bfloat16") return PeakType::BFloat16;
  if (dtype == "int8" || dtype == "uint8") return PeakType::Int8;
  return tf32 ? PeakType::TF32 : PeakType::Float32;
}

// Sorts a table that mostly arrives in order (a profiler writes each thread's events in time order, threads
// one after another): its ascending runs are merged pairwise, O(n log runs), and the result is std::sort's
// for a strict total order; a table of many runs goes to std::sort.
template <class T, class Less = std::less<T>>
void sort_runs(std::vector<T>& v, Less less = Less()) {
  std::vector<size_t> bounds{0};
  for (size_t i = 1; i < v.size(); ++i)
    if (less(v[i], v[i - 1])) bounds.push_back(i);
  bounds.push_back(v.size());
  if (bounds.size() > v.size() / 16 + 2) return std::sort(v.begin(), v.end(), less);
  while (bounds.size() > 2) {  // runs r: [bounds[r], bounds[r + 1])
    std::vector<size_t> merged{0};
    size_t r = 0;
    for (; r + 2 < bounds.size(); r += 2) {
      std::inplace_merge(v.begin() + static_cast<std::ptrdiff_t>(bounds[r]),
                         v.begin() + static_cast<std::ptrdiff_t>(bounds[r + 1]),
                         v.begin() + static_cast<std::ptrdiff_t>(bounds[r + 2]), less);
      merged.push_back(bounds[r + 2]);
    }
    if (r + 1 < bounds.size()) merged.push_back(bounds.back());  // an odd run out: carried to the next pass
    bounds = std::move(merged);
  }
}

double union_us(std::vector<std::pair<double, double>>& iv) {
  sort_runs(iv);
  double busy = 0, cur_b = 0, cur_e = -1;
  bool open = false;
  for (const auto& [b, e] : iv) {
    if (!open || b > cur_e) {
      if (open) busy += cur_e - cur_b;
      cur_b = b, cur_e = e, open = true;
    } else {
      cur_e = std::max(cur_e, e);
    }
  }
  if (open) busy += cur_e - cur_b;
  return busy;
}

// "TOP(ResNet)::forward.layer1(Sequential)::forward.0(BasicBlock)::forward.conv1(Conv2d)::forward." ->
// {"ResNet", "layer1", "0", "conv1"}: the root by its class, then each call's instance name; a method of the
// same module ("SELF(...)") adds no level.
std::vector<std::string> module_hierarchy(const std::string& h) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < h.size()) {
    size_t open = h.find('(', i);
    if (open == std::string::npos) break;
    size_t close = h.find(')', open);
    if (close == std::string::npos) break;
    std::string inst = h.substr(i, open - i), cls = h.substr(open + 1, close - open - 1);
    if (out.empty() && inst == "TOP")
      out.push_back(cls);
    else if (inst != "SELF" && inst != "self" && !inst.empty())
      out.push_back(inst);
    size_t dot = h.find('.', close);  // after "::forward"
    if (dot == std::string::npos) break;
    i = dot + 1;
  }
  return out;
}

}  // namespace

TraceReport analyse_trace(const TorchTrace& t, const AtenCoster& cost, const TraceOptions& opts) {
  TraceReport r;
  r.path = t.path;
  r.device = t.device;
  r.memory_peak = t.memory_peak;
  r.events = t.events;
  r.warnings = t.warnings;
  r.graph_replay = t.graph_replay;
  r.serving_steps = t.serving_steps;
  r.distinct_calls = static_cast<int64_t>(t.calls.size());
  r.gpu_events = static_cast<int64_t>(t.gpu.size());
  if (opts.hardware) {
    r.hw = opts.hardware;
    r.hw_note = "given (--hardware)";
  } else if (!t.device.empty()) {
    r.hw = match_trace_hardware(t.device, t.device_memory, &r.hw_note);
  } else {
    r.hw_note = "the trace names no GPU (no deviceProperties)";
  }

  std::vector<AtenCost> costs;
  if (cost) costs = cost(t.calls);
  costs.resize(t.calls.size());
  for (auto& c : costs)
    if (!c.costed && c.why.empty()) c.why = "not costed";

  const std::vector<TraceEvent>& ev = t.cpu;
  const size_t n = ev.size();
  auto is_costed = [&](size_t i) {
    return ev[i].kind == TraceKind::CpuOp && ev[i].call >= 0 && costs[static_cast<size_t>(ev[i].call)].costed;
  };

  // Time order; an enclosing event first (longer first at the same start).
  // The keys are sorted where they lie, not the events through indices (millions of events: cache misses).
  std::vector<uint32_t> order(n);
  {
    struct Key {
      double ts, dur;
      uint32_t i;
    };
    std::vector<Key> keys(n);
    for (uint32_t i = 0; i < n; ++i) keys[i] = {ev[i].ts, ev[i].dur, i};
    sort_runs(keys, [](const Key& a, const Key& b) {
      if (a.ts != b.ts) return a.ts < b.ts;
      if (a.dur != b.dur) return a.dur > b.dur;
      return a.i < b.i;
    });
    for (size_t k = 0; k < n; ++k) order[k] = keys[k].i;
  }

  // Steps: ProfilerStep#N annotations, by start.
  struct Step {
    double ts, end;
    uint32_t name;
  };
  std::vector<Step> steps;
  for (const auto& e : ev)
    if (e.kind == TraceKind::Annotation && starts_with(t.names[e.name], "ProfilerStep#"))
      steps.push_back({e.ts, e.ts + e.dur, e.name});
  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.ts < b.ts; });
  auto step_of = [&](double ts) -> size_t {
    if (steps.empty()) return 0;
    auto it =
        std::upper_bound(steps.begin(), steps.end(), ts, [](double x, const Step& s) { return x < s.ts; });
    return it == steps.begin() ? 0 : static_cast<size_t>(it - steps.begin() - 1);
  };
  const size_t n_steps = std::max<size_t>(1, steps.size());

  // fwdbwd flows: the forward op each starts at, the backward node each ends at (same thread, same ts).
  auto flow_key = [](uint32_t thread, double ts) { return std::make_pair(thread, ts); };
  std::map<std::pair<uint32_t, double>, int64_t> flow_start_at, flow_end_at;
  for (size_t i = 0; i < t.flow_starts.size(); ++i)
    flow_start_at[flow_key(t.flow_start_thread[i], t.flow_starts[i].second)] = t.flow_starts[i].first;
  for (size_t i = 0; i < t.flow_ends.size(); ++i)
    flow_end_at[flow_key(t.flow_end_thread[i], t.flow_ends[i].second)] = t.flow_ends[i].first;
  std::unordered_map<int64_t, int> scope_of_flow;  // flow id -> scope of its forward op

  // Scopes: interned by (parent scope, label).
  std::map<std::pair<int, std::string>, int> scope_ix;
  r.scopes.emplace_back();
  r.scopes[0].path = "";
  r.scopes[0].label = "(trace)";
  std::vector<int> scope_parent{-1};
  auto child_scope = [&](int parent, const std::string& label) {
    auto [it, fresh] = scope_ix.try_emplace({parent, label}, static_cast<int>(r.scopes.size()));
    if (fresh) {
      TraceScope s;
      s.label = label;
      s.path = parent == 0 ? s.label : r.scopes[static_cast<size_t>(parent)].path + "." + s.label;
      s.depth = r.scopes[static_cast<size_t>(parent)].depth + 1;
      r.scopes.push_back(std::move(s));
      r.scopes[static_cast<size_t>(parent)].children.push_back(it->second);
      scope_parent.push_back(parent);
    }
    return it->second;
  };

  std::unordered_map<int32_t, std::vector<std::string>> hier_levels;
  std::vector<int> base(n, 0);  // the scope below any TorchScript module levels (Module Hierarchy)
  enum Phase : uint8_t { Forward, Backward, Optimizer };
  std::vector<int> parent(n, -1), scope(n, 0), owner(n, -1);
  std::vector<uint8_t> phase(n, Forward);
  std::vector<std::vector<uint32_t>> stacks(t.threads.size());
  int64_t overlaps = 0;
  // Runtime calls are probes in the same sweep: each finds the innermost op open on its thread.
  std::vector<uint32_t> probes(t.launches.size());
  {
    std::vector<std::pair<double, uint32_t>> keys(t.launches.size());
    for (uint32_t l = 0; l < keys.size(); ++l) keys[l] = {t.launches[l].ts, l};
    sort_runs(keys);
    for (size_t k = 0; k < keys.size(); ++k) probes[k] = keys[k].second;
  }
  std::vector<int> launch_op(t.launches.size(), -1);
  size_t next_probe = 0;
  auto probe_until = [&](double ts, bool inclusive) {
    for (; next_probe < probes.size(); ++next_probe) {
      const TraceLaunch& l = t.launches[probes[next_probe]];
      if (inclusive ? l.ts > ts : l.ts >= ts) break;
      if (l.thread >= stacks.size()) continue;
      auto& st = stacks[l.thread];
      while (!st.empty() && ev[st.back()].ts + ev[st.back()].dur < l.ts) st.pop_back();
      for (auto it = st.rbegin(); it != st.rend(); ++it)
        if (ev[*it].kind == TraceKind::CpuOp) {
          launch_op[probes[next_probe]] = static_cast<int>(*it);
          break;
        }
    }
  };
  for (uint32_t i : order) {
    const TraceEvent& e = ev[i];
    probe_until(e.ts, false);
    auto& st = stacks[e.thread];
    while (!st.empty() && ev[st.back()].ts + ev[st.back()].dur <= e.ts) st.pop_back();
    if (!st.empty()) {
      parent[i] = static_cast<int>(st.back());
      if (e.ts + e.dur > ev[st.back()].ts + ev[st.back()].dur + 0.01) ++overlaps;
    }
    st.push_back(i);
  }
  probe_until(1e300, true);
  // correlation -> launching op (the first, should two launches share one): a table indexed by correlation
  // where the ids are dense (CUPTI numbers them in order), else sorted pairs.
  std::vector<std::pair<int64_t, int>> op_of_corr;
  op_of_corr.reserve(t.launches.size());
  for (size_t l = 0; l < t.launches.size(); ++l)
    if (launch_op[l] >= 0) op_of_corr.emplace_back(t.launches[l].corr, launch_op[l]);
  std::vector<int>().swap(launch_op);
  int64_t corr_lo = INT64_MAX, corr_hi = INT64_MIN;
  for (const auto& [corr, op] : op_of_corr)
    corr_lo = std::min(corr_lo, corr), corr_hi = std::max(corr_hi, corr);
  std::vector<int> op_at_corr;  // dense: [corr - corr_lo]
  if (!op_of_corr.empty() && static_cast<uint64_t>(corr_hi) - static_cast<uint64_t>(corr_lo) <
                                 4 * static_cast<uint64_t>(op_of_corr.size()) + 1024) {
    op_at_corr.assign(static_cast<size_t>(corr_hi - corr_lo) + 1, -1);
    for (const auto& [corr, op] : op_of_corr) {
      int& at = op_at_corr[static_cast<size_t>(corr - corr_lo)];
      if (at < 0 || op < at) at = op;
    }
    std::vector<std::pair<int64_t, int>>().swap(op_of_corr);
  } else {
    sort_runs(op_of_corr);
  }
  auto launcher = [&](int64_t corr) {
    if (!op_at_corr.empty())
      return corr >= corr_lo && corr <= corr_hi ? op_at_corr[static_cast<size_t>(corr - corr_lo)] : -1;
    auto it = std::lower_bound(op_of_corr.begin(), op_of_corr.end(), std::make_pair(corr, INT32_MIN));
    return it != op_of_corr.end() && it->first == corr ? it->second : -1;
  };
  if (overlaps > 0)
    r.warnings.push_back(
        std::to_string(overlaps) +
        " event(s) end after the event that encloses them (overlapping times; nested anyway)");

  // Which events have a priced op below them (bit 1), one of non-zero FLOPs (bit 2): children before
  // parents, so reverse time order.
  std::vector<uint8_t> costed_below(n, 0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    uint32_t i = *it;
    if (parent[i] < 0) continue;
    uint8_t bits = costed_below[i];
    if (is_costed(i)) bits |= costs[static_cast<size_t>(ev[i].call)].flops > 0 ? 3 : 1;
    costed_below[static_cast<size_t>(parent[i])] |= bits;
  }

  for (uint32_t i : order) {
    const TraceEvent& e = ev[i];
    const std::string& name = t.names[e.name];
    int p = parent[i];
    int sc = p >= 0 ? scope[static_cast<size_t>(p)] : 0;
    uint8_t ph = p >= 0 ? phase[static_cast<size_t>(p)] : static_cast<uint8_t>(Forward);
    if (!flow_end_at.empty()) {
      auto f = flow_end_at.find(flow_key(e.thread, e.ts));
      if (f != flow_end_at.end() && e.kind == TraceKind::CpuOp) {
        auto s = scope_of_flow.find(f->second);
        if (s != scope_of_flow.end()) sc = s->second;
      }
    }
    if (e.kind == TraceKind::Module ||
        (e.kind == TraceKind::Annotation && !starts_with(name, "ProfilerStep#")))
      sc = child_scope(sc, name);
    if (e.hier >= 0) {
      // A TorchScript run's op: its module levels from the hierarchy, under the scope the run is in (not
      // under an enclosing op's levels: aten::_convolution inside aten::conv2d names the same levels again).
      auto [hit, fresh] = hier_levels.try_emplace(e.hier);
      if (fresh) hit->second = module_hierarchy(t.names[static_cast<size_t>(e.hier)]);
      int b = p >= 0 ? base[static_cast<size_t>(p)] : 0;
      base[i] = b;
      sc = b;
      for (const auto& level : hit->second) sc = child_scope(sc, level);
    } else {
      base[i] = p >= 0 && ev[static_cast<size_t>(p)].hier >= 0 && e.kind == TraceKind::CpuOp
                    ? base[static_cast<size_t>(p)]
                    : sc;
    }
    if (e.kind == TraceKind::CpuOp && starts_with(name, "autograd::engine::evaluate_function")) ph = Backward;
    if (e.kind == TraceKind::Annotation && starts_with(name, "Optimizer.")) ph = Optimizer;
    scope[i] = sc;
    phase[i] = ph;
    if (!flow_start_at.empty() && e.kind == TraceKind::CpuOp) {
      auto f = flow_start_at.find(flow_key(e.thread, e.ts));
      if (f != flow_start_at.end() && !scope_of_flow.count(f->second)) scope_of_flow[f->second] = sc;
    }
    // The owner: the first priced op from the top; an aten op the rules cannot price owns its subtree
    // (convolution_backward and the cuDNN calls under it) unless ops under it carry FLOPs the rules price (a
    // composite op's parts); any other event (an autograd node, a compiled region) passes its subtree down
    // unless nothing under it is priced (a triton kernel's launch owns itself).
    int po = p >= 0 ? owner[static_cast<size_t>(p)] : -1;
    if (po >= 0)
      owner[i] = po;
    else if (e.kind == TraceKind::CpuOp &&
             (is_costed(i) || (starts_with(name, "aten::") ? !(costed_below[i] & 2) : !costed_below[i])))
      owner[i] = static_cast<int>(i);
  }

  // Rows.
  std::unordered_map<uint32_t, size_t> op_row, kernel_row;
  auto op_of = [&](uint32_t name) -> TraceRow& {
    auto [it, fresh] = op_row.try_emplace(name, r.ops.size());
    if (fresh) {
      r.ops.emplace_back();
      r.ops.back().name = t.names[name];
    }
    return r.ops[it->second];
  };
  static const char* kPhase[] = {"forward", "backward", "optimizer"};
  TraceRow* phase_rows[3] = {nullptr, nullptr, nullptr};  // r.phases' rows, made on first use
  auto phase_row = [&](uint8_t ph) -> TraceRow& {
    if (!phase_rows[ph]) {
      phase_rows[ph] = &r.phases[kPhase[ph]];
      phase_rows[ph]->name = kPhase[ph];
    }
    return *phase_rows[ph];
  };
  const bool tf32 = r.hw && r.hw->tf32;
  auto scope_chain = [&](int sc, auto&& fn) {
    for (int s = sc; s >= 0; s = scope_parent[static_cast<size_t>(s)])
      fn(r.scopes[static_cast<size_t>(s)].row);
  };
  std::map<std::string, std::map<std::string, int64_t>> dtype_macs;  // op name -> dtype -> MACs

  for (size_t i = 0; i < n; ++i) {
    if (owner[i] != static_cast<int>(i)) continue;
    const TraceEvent& e = ev[i];
    ++r.cpu_ops;
    const AtenCost* c = is_costed(i) ? &costs[static_cast<size_t>(e.call)] : nullptr;
    double bound = 0, compute = 0;
    if (c && r.hw) {
      // A trace does not record the TF32 flags: PyTorch's defaults are assumed, cuDNN's on (float32
      // convolutions on tensor cores), cuBLAS's off (--hardware NAME:tf32 turns products on too).
      const std::string& opname = t.names[e.name];
      bool conv = opname.find("conv") != std::string::npos;
      PeakType pt = peak_of(c->dtype, tf32 || conv, c->macs > 0);
      double peak = r.hw->peak[static_cast<size_t>(pt)];
      if (peak <= 0) peak = r.hw->peak[static_cast<size_t>(PeakType::Float32)];
      bool cb = false;
      if (peak > 0 && r.hw->bandwidth > 0) {
        bound = 1e6 * node_bound_seconds(static_cast<double>(c->flops), static_cast<double>(c->bytes), peak,
                                         r.hw->bandwidth, &cb);
        compute = cb ? bound : 0;
      }
    }
    auto add = [&](TraceRow& row) {
      ++row.calls;
      if (!e.replayed) row.cpu_us += e.dur;  // a capture's op: its host time was the capture's
      if (c) {
        add_checked(row.macs, c->macs, row.overflow);
        add_checked(row.flops, c->flops, row.overflow);
        add_checked(row.bytes, c->bytes, row.overflow);
        row.bound_us += bound;
        row.compute_bound_us += compute;
      } else {
        ++row.uncosted;
      }
    };
    TraceRow& orow = op_of(e.name);
    add(orow);
    if (!c && orow.why.empty())
      orow.why = e.call >= 0
                     ? costs[static_cast<size_t>(e.call)].why
                     : (starts_with(t.names[e.name], "aten::") ? "no shapes recorded (record_shapes=False?)"
                                                               : "not an aten op");
    if (c && c->macs > 0) dtype_macs[orow.name][c->dtype] += c->macs;
    scope_chain(scope[i], add);
    TraceRow& prow = phase_row(phase[i]);
    add(prow);
  }

  // GPU events.
  // External ids: only for GPU events whose correlation finds no launch (traces without runtime events).
  // (External id, op) pairs sorted (the first op of an id first): ids grow with time, so nearly in order.
  std::vector<std::pair<int64_t, uint32_t>> by_ext;
  bool need_ext = false;
  for (const TraceEvent& g : t.gpu)
    if (g.ext >= 0 && (g.corr < 0 || launcher(g.corr) < 0)) need_ext = true;
  if (need_ext) {
    for (size_t i = 0; i < n; ++i)
      if (ev[i].kind == TraceKind::CpuOp && ev[i].ext >= 0)
        by_ext.emplace_back(ev[i].ext, static_cast<uint32_t>(i));
    sort_runs(by_ext);
  }
  auto op_of_ext = [&](int64_t ext) {
    auto it = std::lower_bound(by_ext.begin(), by_ext.end(), std::make_pair(ext, uint32_t{0}));
    return it != by_ext.end() && it->first == ext ? static_cast<int>(it->second) : -1;
  };
  std::vector<uint8_t> self_launch(n, 0);
  std::vector<std::vector<std::pair<double, double>>> step_iv(n_steps);
  std::vector<std::pair<double, double>> all_iv;
  all_iv.reserve(t.gpu.size());
  for (const TraceEvent& g : t.gpu) {
    r.gpu_kernel_us += g.dur;
    all_iv.emplace_back(g.ts, g.ts + g.dur);
    auto [kit, kfresh] = kernel_row.try_emplace(g.name, r.kernels.size());
    if (kfresh) {
      r.kernels.emplace_back();
      r.kernels.back().name = t.names[g.name];
    }
    TraceRow& krow = r.kernels[kit->second];
    ++krow.calls;
    krow.gpu_us += g.dur;
    int op_ix = -1;
    if (int l = g.corr >= 0 ? launcher(g.corr) : -1; l >= 0)
      op_ix = l;
    else if (g.ext >= 0)
      op_ix = op_of_ext(g.ext);
    if (op_ix < 0) {
      r.unattributed_gpu_us += g.dur;
      ++r.unattributed_kernels;
      r.scopes[0].row.gpu_us += g.dur;
      r.scopes[0].self_gpu_us += g.dur;
      r.scopes[0].row.uncosted_gpu_us += g.dur;
      step_iv[step_of(g.ts)].emplace_back(g.ts, g.ts + g.dur);
      continue;
    }
    size_t op = static_cast<size_t>(op_ix);
    size_t o = owner[op] >= 0 ? static_cast<size_t>(owner[op]) : op;  // an op with priced children: itself
    bool costed = owner[op] >= 0 && is_costed(o);
    auto add = [&](TraceRow& row) {
      row.gpu_us += g.dur;
      ++row.kernels;
      if (!costed) row.uncosted_gpu_us += g.dur;
    };
    TraceRow& orow = op_of(ev[o].name);
    TraceRow& prow = phase_row(phase[o]);
    add(orow);
    scope_chain(scope[o], add);
    add(prow);
    r.scopes[static_cast<size_t>(scope[o])].self_gpu_us += g.dur;
    if (owner[op] < 0) {  // an op whose priced children own their kernels, launching some of its own
      if (orow.why.empty()) orow.why = "its own kernels, beside the priced ops under it";
      if (!self_launch[op]) {  // counted once as an uncosted call, wherever it is counted
        self_launch[op] = 1;
        auto count = [](TraceRow& row) { ++row.calls, ++row.uncosted; };
        count(orow);
        scope_chain(scope[o], count);
        count(prow);
      }
    }
    step_iv[step_of(ev[o].ts)].emplace_back(g.ts, g.ts + g.dur);
  }
  r.gpu_span_us = 0;
  if (!all_iv.empty()) {
    double b = all_iv[0].first, e = all_iv[0].second;
    for (const auto& [x, y] : all_iv) b = std::min(b, x), e = std::max(e, y);
    r.gpu_span_us = e - b;
  }
  r.gpu_busy_us = union_us(all_iv);
  if (r.unattributed_kernels > 0)
    r.warnings.push_back(
        std::to_string(r.unattributed_kernels) +
        " GPU event(s) whose launching op is not in the trace (no cpu_op with their External "
        "id): counted in the totals, not to an op");

  for (size_t s = 0; s < n_steps; ++s) {
    TraceStep st;
    if (!steps.empty()) {
      st.name = t.names[steps[s].name];
      st.cpu_us = steps[s].end - steps[s].ts;
    } else {
      st.name = "whole trace";
    }
    if (!step_iv[s].empty()) {
      double b = step_iv[s][0].first, e = step_iv[s][0].second;
      for (const auto& [x, y] : step_iv[s]) b = std::min(b, x), e = std::max(e, y);
      st.gpu_span_us = e - b;
    }
    st.gpu_busy_us = union_us(step_iv[s]);
    r.steps.push_back(st);
  }

  // Faster than the bound: float32 products ran on tensor cores (TF32), or the device is not the row's.
  if (r.hw && !r.hw->tf32) {
    std::vector<std::string> fast;
    for (const auto& row : r.ops)
      if (row.bound_us > 1.02 * std::max(0.0, row.gpu_us - row.uncosted_gpu_us) && row.macs > 0 &&
          fast.size() < 3)
        fast.push_back(row.name);
    if (!fast.empty()) {
      std::string list;
      for (const auto& f : fast) list += (list.empty() ? "" : ", ") + f;
      r.warnings.push_back(
          list + " ran faster than " + r.hw->name +
          "'s float32 bound: TF32 tensor cores were on (torch.backends.cuda.matmul.allow_tf32, "
          "cudnn.allow_tf32); --hardware " +
          r.hw->name + ":tf32 bounds them at the TF32 rate");
    }
  }

  // Dtypes of op rows: the one with most MACs.
  for (auto& row : r.ops) {
    auto it = dtype_macs.find(row.name);
    if (it == dtype_macs.end()) continue;
    int64_t best = -1;
    for (const auto& [d, m] : it->second)
      if (m > best) best = m, row.dtype = d;
  }
  for (const auto& row : r.ops)
    if (row.uncosted > 0 || row.uncosted_gpu_us > 0) r.uncosted.push_back(row);
  auto by_time = [](const TraceRow& a, const TraceRow& b) {
    if (a.gpu_us != b.gpu_us) return a.gpu_us > b.gpu_us;
    if (a.cpu_us != b.cpu_us) return a.cpu_us > b.cpu_us;
    return a.name < b.name;
  };
  std::sort(r.ops.begin(), r.ops.end(), by_time);
  std::sort(r.kernels.begin(), r.kernels.end(), by_time);
  std::sort(r.uncosted.begin(), r.uncosted.end(), by_time);

  // Scopes in pre-order (children in first-seen order).
  std::vector<TraceScope> pre;
  std::vector<int> new_ix(r.scopes.size(), -1);
  std::vector<int> stack{0};
  while (!stack.empty()) {
    int s = stack.back();
    stack.pop_back();
    new_ix[static_cast<size_t>(s)] = static_cast<int>(pre.size());
    pre.push_back(r.scopes[static_cast<size_t>(s)]);
    const auto& ch = r.scopes[static_cast<size_t>(s)].children;
    for (auto it = ch.rbegin(); it != ch.rend(); ++it) stack.push_back(*it);
  }
  for (auto& s : pre)
    for (int& c : s.children) c = new_ix[static_cast<size_t>(c)];
  r.scopes = std::move(pre);
  r.total = r.scopes[0].row;
  r.total.name = "total";
  return r;
}

}  // namespace flopwise
