// src/measured/trace_stages.h — the three stages of analyse_trace (flopwise/torch_trace.h), private to
// src/measured. Each stage reads the trace and what the stages before it returned, and returns a small
// struct:
//   1. nest      (trace_nest.cc)      TraceNest: time order, each CPU event's parent, module scope, phase and
//                                     step; the op each runtime call (launch) ran in, by correlation id;
//   2. attribute (trace_attribute.cc) TraceAttribution: each call priced through the AtenCoster (FLOPs,
//                                     bytes) and bounded on the device, each CPU event's owner (the op its
//                                     time counts to), each GPU event's launching op and owner;
//   3. roll up   (trace_roll_up.cc)   the TraceReport: rows per op, kernel, module scope, phase and step.
// analyse_trace (trace_attribute.cc) only calls them in this order.
#pragma once

#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flopwise/torch_trace.h"

namespace flopwise::trace_stages {

// Whether s starts with the literal p (its length known at compile time: no call into the library).
template <size_t N>
bool starts_with(const std::string& s, const char (&p)[N]) {
  return s.size() >= N - 1 && std::memcmp(s.data(), p, N - 1) == 0;
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

// ---- 1. nest -------------------------------------------------------------------------------------------

// A ProfilerStep#N annotation: [ts, end), its name (index in TorchTrace::names).
struct StepSpan {
  double ts, end;
  uint32_t name;
};

enum Phase : uint8_t { Forward, Backward, Optimizer };

// Correlation id -> the op whose runtime call has that id (the first op, should two calls share one): a
// table indexed by correlation where the ids are dense (CUPTI numbers them in order), else sorted pairs.
class LaunchIndex {
 public:
  LaunchIndex() = default;
  // launch_op: the op each of launches ran in; -1: none.
  LaunchIndex(const std::vector<TraceLaunch>& launches, const std::vector<int>& launch_op);
  int op(int64_t corr) const {  // -1: no op ran a call of that id
    if (!dense_.empty()) return corr >= lo_ && corr <= hi_ ? dense_[static_cast<size_t>(corr - lo_)] : -1;
    auto it = std::lower_bound(sorted_.begin(), sorted_.end(), std::make_pair(corr, INT32_MIN));
    return it != sorted_.end() && it->first == corr ? it->second : -1;
  }

 private:
  int64_t lo_ = INT64_MAX, hi_ = INT64_MIN;
  std::vector<int> dense_;                       // [corr - lo_]; empty when the ids are sparse
  std::vector<std::pair<int64_t, int>> sorted_;  // (corr, op), when sparse
};

// Indices are of TorchTrace::cpu (events) and of scopes (module scopes).
struct TraceNest {
  std::vector<uint32_t> order;     // events in time order, an enclosing event first (freed by attribute)
  std::vector<int> parent;         // the innermost event enclosing each on its thread; -1: none (freed too)
  int64_t overlaps = 0;            // events ending after the event that encloses them
  LaunchIndex launcher;            // correlation id -> the op its runtime call ran in
  std::vector<StepSpan> steps;     // ProfilerStep#N annotations, by start
  std::vector<TraceScope> scopes;  // module scopes interned by (parent, label); [0] the root, rows empty
  std::vector<int> scope_parent;   // of each scope; -1: the root
  std::vector<int> scope;          // of each event
  std::vector<uint8_t> phase;      // of each event (Phase)

  size_t step_of(double ts) const {  // the last step starting at or before ts; 0 before the first or without
    if (steps.empty()) return 0;
    auto it = std::upper_bound(steps.begin(), steps.end(), ts,
                               [](double x, const StepSpan& s) { return x < s.ts; });
    return it == steps.begin() ? 0 : static_cast<size_t>(it - steps.begin() - 1);
  }
  size_t step_count() const { return std::max<size_t>(1, steps.size()); }
};

TraceNest nest_trace(const TorchTrace& t);

// ---- 2. attribute --------------------------------------------------------------------------------------

// A priced call's roofline bound on the report's device.
struct CallBound {
  double bound_us = 0, compute_bound_us = 0;  // compute_bound_us: bound_us where compute bounds it, else 0
};

// A GPU event's op (indices of TorchTrace::cpu).
struct KernelOp {
  int op = -1;          // the op that launched it; -1: not in the trace (unattributed)
  int owner = -1;       // the op its time counts to: op's owner, else op itself
  bool costed = false;  // owner is priced
  bool beside = false;  // op owns nothing (priced ops under it own their kernels): op's own kernel
};

struct TraceAttribution {
  std::vector<AtenCost> costs;  // of each distinct call (TorchTrace::calls)
  std::vector<int> owner;       // of each CPU event: the op its time counts to; -1: passed down to ops below
  // Of each priced call, on the report's device (none without one): [0] as a product, [1] as a convolution
  // (a trace does not record the TF32 flags: PyTorch's defaults, cuDNN's on, cuBLAS's off).
  std::vector<std::array<CallBound, 2>> bounds;
  std::vector<uint8_t> conv_name;  // of each name (TorchTrace::names): 1 where it names a convolution
  std::vector<KernelOp> kernels;   // of each GPU event (TorchTrace::gpu)

  // The cost of event i's call where the rules price it, else nullptr.
  const AtenCost* cost_of(const TorchTrace& t, size_t i) const {
    const TraceEvent& e = t.cpu[i];
    if (e.kind != TraceKind::CpuOp || e.call < 0) return nullptr;
    const AtenCost& c = costs[static_cast<size_t>(e.call)];
    return c.costed ? &c : nullptr;
  }
  // The bound of priced event i (zero without a device).
  CallBound bound_of(const TorchTrace& t, size_t i) const {
    const TraceEvent& e = t.cpu[i];
    if (bounds.empty()) return {};
    return bounds[static_cast<size_t>(e.call)][conv_name[e.name]];
  }
};

// Frees nest.order and nest.parent once the owners are known (roll up reads neither).
TraceAttribution attribute_trace(const TorchTrace& t, TraceNest& nest, const AtenCoster& cost,
                                 const std::optional<Hardware>& hw);

// Why an owner has no cost: its call's reason, else that it recorded no shapes (an aten op) or is not one.
const char* uncosted_why(const TorchTrace& t, const TraceAttribution& a, uint32_t event);

// ---- 3. roll up ----------------------------------------------------------------------------------------

// The report's fields copied from the trace, and its roofline device (--hardware, else matched by name).
TraceReport start_report(const TorchTrace& t, const TraceOptions& opts);

// Rows of r (started by start_report) per op, kernel, module scope (nest.scopes move into r), phase and step.
void roll_up_trace(const TorchTrace& t, TraceNest&& nest, const TraceAttribution& a, TraceReport& r);

}  // namespace flopwise::trace_stages
