// src/measured/trace_roll_up.cc — stage 3 of analyse_trace (trace_stages.h, start_report and roll_up_trace):
// the owners and GPU events of a nested, attributed trace summed into the TraceReport's rows.
//
// An owner counts once, with its host time, cost and bound, to its op row, each module scope from its own to
// the root, and its phase's row. A GPU event counts to its kernel row and, by its owner, to the same rows;
// an unattributed one to the root scope only. Steps take the GPU events of their owners' starts; rows are
// sorted by GPU time, then host time, then name; scopes are listed in pre-order.
#include <map>
#include <unordered_map>

#include "trace_stages.h"

namespace flopwise::trace_stages {

namespace {

inline void add_checked(int64_t& acc, int64_t v, bool& overflow) {
  if (__builtin_add_overflow(acc, v, &acc)) overflow = true;
}

using Intervals = std::vector<std::pair<double, double>>;

double union_us(Intervals& iv) {
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

double span_us(const Intervals& iv) {
  if (iv.empty()) return 0;
  double b = iv[0].first, e = iv[0].second;
  for (const auto& [x, y] : iv) b = std::min(b, x), e = std::max(e, y);
  return e - b;
}

// The report's rows by op name, kernel name and phase (each made on first use), and the module scopes.
class RowBook {
 public:
  RowBook(const TorchTrace& t, TraceReport& r, const std::vector<int>& scope_parent)
      : t_(t), r_(r), scope_parent_(scope_parent) {}

  TraceRow& op(uint32_t name) { return row(op_row_, r_.ops, name); }
  TraceRow& kernel(uint32_t name) { return row(kernel_row_, r_.kernels, name); }
  TraceRow& phase(uint8_t ph) { return phase_rows_[ph] ? *phase_rows_[ph] : new_phase(ph); }
  // fn on the row of scope sc and of each scope above it.
  template <class Fn>
  void scope_chain(int sc, Fn&& fn) {
    for (int s = sc; s >= 0; s = scope_parent_[static_cast<size_t>(s)])
      fn(r_.scopes[static_cast<size_t>(s)].row);
  }

 private:
  TraceRow& new_phase(uint8_t ph) {
    static const char* kPhase[] = {"forward", "backward", "optimizer"};
    phase_rows_[ph] = &r_.phases[kPhase[ph]];
    phase_rows_[ph]->name = kPhase[ph];
    return *phase_rows_[ph];
  }
  TraceRow& row(std::unordered_map<uint32_t, size_t>& ix, std::vector<TraceRow>& rows, uint32_t name) {
    auto [it, fresh] = ix.try_emplace(name, rows.size());
    if (fresh) {
      rows.emplace_back();
      rows.back().name = t_.names[name];
    }
    return rows[it->second];
  }

  const TorchTrace& t_;
  TraceReport& r_;
  const std::vector<int>& scope_parent_;
  std::unordered_map<uint32_t, size_t> op_row_, kernel_row_;
  TraceRow* phase_rows_[3] = {nullptr, nullptr, nullptr};  // r.phases' rows
};

using DtypeMacs = std::map<std::string, std::map<std::string, int64_t>>;  // op name -> dtype -> MACs

// Each owner to its op row, its scopes and its phase: a call, its host time, its cost and bound.
void roll_up_owners(const TorchTrace& t, const TraceNest& nest, const TraceAttribution& a, RowBook& book,
                    TraceReport& r, DtypeMacs& dtype_macs) {
  for (size_t i = 0; i < a.owner.size(); ++i) {
    if (a.owner[i] != static_cast<int>(i)) continue;
    const TraceEvent& e = t.cpu[i];
    const AtenCost* c = a.cost_of(t, i);
    const CallBound b = c ? a.bound_of(t, i) : CallBound{};
    ++r.cpu_ops;
    auto add = [&](TraceRow& row) {
      ++row.calls;
      if (!e.replayed) row.cpu_us += e.dur;  // a capture's op: its host time was the capture's
      if (c) {
        add_checked(row.macs, c->macs, row.overflow);
        add_checked(row.flops, c->flops, row.overflow);
        add_checked(row.bytes, c->bytes, row.overflow);
        row.bound_us += b.bound_us;
        row.compute_bound_us += b.compute_bound_us;
      } else {
        ++row.uncosted;
      }
    };
    TraceRow& orow = book.op(e.name);
    add(orow);
    if (!c && orow.why.empty()) orow.why = uncosted_why(t, a, static_cast<uint32_t>(i));
    if (c && c->macs > 0) dtype_macs[orow.name][c->dtype] += c->macs;
    book.scope_chain(nest.scope[i], add);
    add(book.phase(nest.phase[i]));
  }
}

// The GPU events' intervals: all of them, and per step.
struct GpuIntervals {
  Intervals all;
  std::vector<Intervals> step;
};

// A GPU event whose launching op is absent: to the totals (the root scope) and the step of its start.
void count_unattributed(const TraceEvent& g, const TraceNest& nest, TraceReport& r, GpuIntervals& iv) {
  r.unattributed_gpu_us += g.dur;
  ++r.unattributed_kernels;
  r.scopes[0].row.gpu_us += g.dur;
  r.scopes[0].self_gpu_us += g.dur;
  r.scopes[0].row.uncosted_gpu_us += g.dur;
  iv.step[nest.step_of(g.ts)].emplace_back(g.ts, g.ts + g.dur);
}

// A GPU event to its owner's op row, scopes and phase, and the step of its owner's start. A kernel an op
// launched beside the priced ops under it makes that op an uncosted call, counted once.
void count_kernel(const TorchTrace& t, const TraceEvent& g, const KernelOp& k, const TraceNest& nest,
                  RowBook& book, std::vector<uint8_t>& self_launch, TraceReport& r, GpuIntervals& iv) {
  const size_t o = static_cast<size_t>(k.owner);
  auto add = [&](TraceRow& row) {
    row.gpu_us += g.dur;
    ++row.kernels;
    if (!k.costed) row.uncosted_gpu_us += g.dur;
  };
  TraceRow& orow = book.op(t.cpu[o].name);
  TraceRow& prow = book.phase(nest.phase[o]);
  add(orow);
  book.scope_chain(nest.scope[o], add);
  add(prow);
  r.scopes[static_cast<size_t>(nest.scope[o])].self_gpu_us += g.dur;
  if (k.beside) {
    if (orow.why.empty()) orow.why = "its own kernels, beside the priced ops under it";
    if (!self_launch[static_cast<size_t>(
            k.op)]) {  // counted once as an uncosted call, wherever it is counted
      self_launch[static_cast<size_t>(k.op)] = 1;
      auto count = [](TraceRow& row) { ++row.calls, ++row.uncosted; };
      count(orow);
      book.scope_chain(nest.scope[o], count);
      count(prow);
    }
  }
  iv.step[nest.step_of(t.cpu[o].ts)].emplace_back(g.ts, g.ts + g.dur);
}

GpuIntervals roll_up_gpu(const TorchTrace& t, const TraceNest& nest, const TraceAttribution& a, RowBook& book,
                         TraceReport& r) {
  GpuIntervals iv;
  iv.step.resize(nest.step_count());
  iv.all.reserve(t.gpu.size());
  std::vector<uint8_t> self_launch(t.cpu.size(), 0);
  for (size_t k = 0; k < t.gpu.size(); ++k) {
    const TraceEvent& g = t.gpu[k];
    r.gpu_kernel_us += g.dur;
    iv.all.emplace_back(g.ts, g.ts + g.dur);
    TraceRow& krow = book.kernel(g.name);
    ++krow.calls;
    krow.gpu_us += g.dur;
    if (a.kernels[k].op < 0)
      count_unattributed(g, nest, r, iv);
    else
      count_kernel(t, g, a.kernels[k], nest, book, self_launch, r, iv);
  }
  r.gpu_span_us = span_us(iv.all);
  r.gpu_busy_us = union_us(iv.all);
  if (r.unattributed_kernels > 0)
    r.warnings.push_back(
        std::to_string(r.unattributed_kernels) +
        " GPU event(s) whose launching op is not in the trace (no cpu_op with their External "
        "id): counted in the totals, not to an op");
  return iv;
}

void roll_up_steps(const TorchTrace& t, const TraceNest& nest, GpuIntervals& iv, TraceReport& r) {
  for (size_t s = 0; s < nest.step_count(); ++s) {
    TraceStep st;
    if (!nest.steps.empty()) {
      st.name = t.names[nest.steps[s].name];
      st.cpu_us = nest.steps[s].end - nest.steps[s].ts;
    } else {
      st.name = "whole trace";
    }
    st.gpu_span_us = span_us(iv.step[s]);
    st.gpu_busy_us = union_us(iv.step[s]);
    r.steps.push_back(st);
  }
}

// Faster than the bound: float32 products ran on tensor cores (TF32), or the device is not the row's.
void warn_tf32(TraceReport& r) {
  if (!r.hw || r.hw->tf32) return;
  std::vector<std::string> fast;
  for (const auto& row : r.ops)
    if (row.bound_us > 1.02 * std::max(0.0, row.gpu_us - row.uncosted_gpu_us) && row.macs > 0 &&
        fast.size() < 3)
      fast.push_back(row.name);
  if (fast.empty()) return;
  std::string list;
  for (const auto& f : fast) list += (list.empty() ? "" : ", ") + f;
  r.warnings.push_back(list + " ran faster than " + r.hw->name +
                       "'s float32 bound: TF32 tensor cores were on (torch.backends.cuda.matmul.allow_tf32, "
                       "cudnn.allow_tf32); --hardware " +
                       r.hw->name + ":tf32 bounds them at the TF32 rate");
}

// Op rows' dtypes (the one with most MACs), the uncosted rows, every table by time.
void finish_rows(const DtypeMacs& dtype_macs, TraceReport& r) {
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
}

// Scopes in pre-order (children in first-seen order); the root's row is the total.
void preorder_scopes(TraceReport& r) {
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
}

}  // namespace

TraceReport start_report(const TorchTrace& t, const TraceOptions& opts) {
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
  return r;
}

void roll_up_trace(const TorchTrace& t, TraceNest&& nest, const TraceAttribution& a, TraceReport& r) {
  if (nest.overlaps > 0)
    r.warnings.push_back(
        std::to_string(nest.overlaps) +
        " event(s) end after the event that encloses them (overlapping times; nested anyway)");
  r.scopes = std::move(nest.scopes);
  RowBook book(t, r, nest.scope_parent);
  DtypeMacs dtype_macs;
  roll_up_owners(t, nest, a, book, r, dtype_macs);
  GpuIntervals iv = roll_up_gpu(t, nest, a, book, r);
  roll_up_steps(t, nest, iv, r);
  warn_tf32(r);
  finish_rows(dtype_macs, r);
  preorder_scopes(r);
}

}  // namespace flopwise::trace_stages
