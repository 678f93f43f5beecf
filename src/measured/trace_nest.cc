// src/measured/trace_nest.cc — stage 1 of analyse_trace (trace_stages.h, nest_trace): a trace's CPU events
// nested by time.
//
// The CPU events of each thread nest by time (an event inside another's [ts, ts + dur) is its child). Walking
// them in time order gives every event its parent, and then:
//   - its module scope: the nn.Module events above it, record_function labels (not ProfilerStep#N); a
//     TorchScript run's op: the levels of its "Module Hierarchy"; a backward autograd node takes the scope of
//     the forward op its fwdbwd flow starts at;
//   - its phase: backward under an autograd engine node, optimizer under an Optimizer.* label, else forward;
//   - its step: the ProfilerStep#N annotation whose span holds its start (TraceNest::step_of).
// A runtime call (a launch) ran in the innermost op enclosing it on its thread: the calls are probes in the
// same sweep, and their correlation ids index the ops (LaunchIndex).
#include <map>
#include <unordered_map>

#include "trace_stages.h"

namespace flopwise::trace_stages {

namespace {

// Time order; an enclosing event first (longer first at the same start).
// The keys are sorted where they lie, not the events through indices (millions of events: cache misses).
std::vector<uint32_t> time_order(const std::vector<TraceEvent>& ev) {
  struct Key {  // 16 bytes (a 1 GB trace: 1.4 M of them); the duration is looked up on a tie of starts
    double ts;
    uint32_t i;
  };
  const size_t n = ev.size();
  std::vector<Key> keys(n);
  for (uint32_t i = 0; i < n; ++i) keys[i] = {ev[i].ts, i};
  sort_runs(keys, [&ev](const Key& a, const Key& b) {
    if (a.ts != b.ts) return a.ts < b.ts;
    if (ev[a.i].dur != ev[b.i].dur) return ev[a.i].dur > ev[b.i].dur;
    return a.i < b.i;
  });
  std::vector<uint32_t> order(n);
  for (size_t k = 0; k < n; ++k) order[k] = keys[k].i;
  return order;
}

std::vector<StepSpan> profiler_steps(const TorchTrace& t) {
  std::vector<StepSpan> steps;
  for (const auto& e : t.cpu)
    if (e.kind == TraceKind::Annotation && starts_with(t.names[e.name], "ProfilerStep#"))
      steps.push_back({e.ts, e.ts + e.dur, e.name});
  std::sort(steps.begin(), steps.end(), [](const StepSpan& a, const StepSpan& b) { return a.ts < b.ts; });
  return steps;
}

// A stack of open events per thread, pushed in time order; the runtime calls, in time order too, are probed
// between the pushes: each finds the innermost op open on its thread.
class ThreadSweep {
 public:
  explicit ThreadSweep(const TorchTrace& t)
      : t_(t), stacks_(t.threads.size()), launch_op_(t.launches.size(), -1) {
    std::vector<std::pair<double, uint32_t>> keys(t.launches.size());
    for (uint32_t l = 0; l < keys.size(); ++l) keys[l] = {t.launches[l].ts, l};
    sort_runs(keys);
    probes_.resize(keys.size());
    for (size_t k = 0; k < keys.size(); ++k) probes_[k] = keys[k].second;
  }

  // Probes the calls before ts (at ts too when inclusive); probing all of them frees their time order.
  void probe_until(double ts, bool inclusive) {
    for (; next_ < probes_.size(); ++next_) {
      const TraceLaunch& l = t_.launches[probes_[next_]];
      if (inclusive ? l.ts > ts : l.ts >= ts) break;
      if (l.thread >= stacks_.size()) continue;
      auto& st = stacks_[l.thread];
      while (!st.empty() && end_of(st.back()) < l.ts) st.pop_back();
      for (auto it = st.rbegin(); it != st.rend(); ++it)
        if (t_.cpu[*it].kind == TraceKind::CpuOp) {
          launch_op_[probes_[next_]] = static_cast<int>(*it);
          break;
        }
    }
    if (next_ == probes_.size()) std::vector<uint32_t>().swap(probes_), next_ = 0;
  }

  // Opens event i on its thread: its parent is the innermost event still open there. Whether i ends after it.
  bool push(uint32_t i, std::vector<int>& parent) {
    const TraceEvent& e = t_.cpu[i];
    auto& st = stacks_[e.thread];
    while (!st.empty() && end_of(st.back()) <= e.ts) st.pop_back();
    bool overlaps = false;
    if (!st.empty()) {
      parent[i] = static_cast<int>(st.back());
      overlaps = e.ts + e.dur > end_of(st.back()) + 0.01;
    }
    st.push_back(i);
    return overlaps;
  }

  // The op of each probed call; -1: it ran in none.
  const std::vector<int>& launch_ops() const { return launch_op_; }

 private:
  double end_of(uint32_t i) const { return t_.cpu[i].ts + t_.cpu[i].dur; }

  const TorchTrace& t_;
  std::vector<std::vector<uint32_t>> stacks_;
  std::vector<uint32_t> probes_;  // launches by ts
  size_t next_ = 0;
  std::vector<int> launch_op_;  // of each launch; -1: none
};

// Parents, overlaps and the launch index, in one sweep over the time order.
void link_parents(const TorchTrace& t, TraceNest& nest) {
  ThreadSweep sweep(t);  // the launches sorted before the per-event tables exist
  nest.parent.assign(t.cpu.size(), -1);
  int64_t overlaps = 0;
  for (uint32_t i : nest.order) {
    sweep.probe_until(t.cpu[i].ts, false);
    overlaps += sweep.push(i, nest.parent);
  }
  sweep.probe_until(1e300, true);
  nest.overlaps = overlaps;
  nest.launcher = LaunchIndex(t.launches, sweep.launch_ops());
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

// Module scopes and phases, visited in time order (a parent before its children).
class ScopeWalk {
 public:
  ScopeWalk(const TorchTrace& t, TraceNest& nest);
  void visit(uint32_t i);

 private:
  using FlowKey = std::pair<uint32_t, double>;  // (thread, ts) of the event a flow starts or ends at
  int child_scope(int parent, const std::string& label);
  int hierarchy_scope(uint32_t i, int p);

  const TorchTrace& t_;
  TraceNest& nest_;
  std::map<std::pair<int, std::string>, int> scope_ix_;
  std::map<FlowKey, int64_t> flow_start_at_, flow_end_at_;  // the forward op, the backward node: flow id
  std::unordered_map<int64_t, int> scope_of_flow_;          // flow id -> scope of its forward op
  std::unordered_map<int32_t, std::vector<std::string>> hier_levels_;
  std::vector<int> base_;  // of each event: the scope below any TorchScript module levels (Module Hierarchy)
};

ScopeWalk::ScopeWalk(const TorchTrace& t, TraceNest& nest) : t_(t), nest_(nest), base_(t.cpu.size(), 0) {
  for (size_t i = 0; i < t.flow_starts.size(); ++i)
    flow_start_at_[{t.flow_start_thread[i], t.flow_starts[i].second}] = t.flow_starts[i].first;
  for (size_t i = 0; i < t.flow_ends.size(); ++i)
    flow_end_at_[{t.flow_end_thread[i], t.flow_ends[i].second}] = t.flow_ends[i].first;
  nest.scopes.emplace_back();
  nest.scopes[0].path = "";
  nest.scopes[0].label = "(trace)";
  nest.scope_parent = {-1};
  nest.scope.assign(t.cpu.size(), 0);
  nest.phase.assign(t.cpu.size(), Forward);
}

int ScopeWalk::child_scope(int parent, const std::string& label) {
  auto& scopes = nest_.scopes;
  auto [it, fresh] = scope_ix_.try_emplace({parent, label}, static_cast<int>(scopes.size()));
  if (fresh) {
    TraceScope s;
    s.label = label;
    s.path = parent == 0 ? s.label : scopes[static_cast<size_t>(parent)].path + "." + s.label;
    s.depth = scopes[static_cast<size_t>(parent)].depth + 1;
    scopes.push_back(std::move(s));
    scopes[static_cast<size_t>(parent)].children.push_back(it->second);
    nest_.scope_parent.push_back(parent);
  }
  return it->second;
}

// A TorchScript run's op: its module levels from the hierarchy, under the scope the run is in (not under an
// enclosing op's levels: aten::_convolution inside aten::conv2d names the same levels again).
int ScopeWalk::hierarchy_scope(uint32_t i, int p) {
  const int32_t hier = t_.cpu[i].hier;
  auto [hit, fresh] = hier_levels_.try_emplace(hier);
  if (fresh) hit->second = module_hierarchy(t_.names[static_cast<size_t>(hier)]);
  int sc = p >= 0 ? base_[static_cast<size_t>(p)] : 0;
  base_[i] = sc;
  for (const auto& level : hit->second) sc = child_scope(sc, level);
  return sc;
}

void ScopeWalk::visit(uint32_t i) {
  const TraceEvent& e = t_.cpu[i];
  const std::string& name = t_.names[e.name];
  const int p = nest_.parent[i];
  const bool op = e.kind == TraceKind::CpuOp;
  int sc = p >= 0 ? nest_.scope[static_cast<size_t>(p)] : 0;
  uint8_t ph = p >= 0 ? nest_.phase[static_cast<size_t>(p)] : static_cast<uint8_t>(Forward);
  if (op && !flow_end_at_.empty()) {  // a backward node: the scope of the forward op its flow starts at
    auto f = flow_end_at_.find({e.thread, e.ts});
    if (f != flow_end_at_.end()) {
      auto s = scope_of_flow_.find(f->second);
      if (s != scope_of_flow_.end()) sc = s->second;
    }
  }
  if (e.kind == TraceKind::Module || (e.kind == TraceKind::Annotation && !starts_with(name, "ProfilerStep#")))
    sc = child_scope(sc, name);
  if (e.hier >= 0)
    sc = hierarchy_scope(i, p);
  else
    base_[i] = p >= 0 && t_.cpu[static_cast<size_t>(p)].hier >= 0 && op ? base_[static_cast<size_t>(p)] : sc;
  if (op && starts_with(name, "autograd::engine::evaluate_function")) ph = Backward;
  if (e.kind == TraceKind::Annotation && starts_with(name, "Optimizer.")) ph = Optimizer;
  nest_.scope[i] = sc;
  nest_.phase[i] = ph;
  if (op && !flow_start_at_.empty()) {
    auto f = flow_start_at_.find({e.thread, e.ts});
    if (f != flow_start_at_.end() && !scope_of_flow_.count(f->second)) scope_of_flow_[f->second] = sc;
  }
}

}  // namespace

// The dense table is filled from the launches directly (no pairs of every launch on the way).
LaunchIndex::LaunchIndex(const std::vector<TraceLaunch>& launches, const std::vector<int>& launch_op) {
  size_t in_ops = 0;
  for (size_t l = 0; l < launches.size(); ++l) {
    if (launch_op[l] < 0) continue;
    ++in_ops;
    lo_ = std::min(lo_, launches[l].corr), hi_ = std::max(hi_, launches[l].corr);
  }
  const bool dense = in_ops > 0 && static_cast<uint64_t>(hi_) - static_cast<uint64_t>(lo_) <
                                       4 * static_cast<uint64_t>(in_ops) + 1024;
  if (dense) dense_.assign(static_cast<size_t>(hi_ - lo_) + 1, -1);
  if (!dense) sorted_.reserve(in_ops);
  for (size_t l = 0; l < launches.size(); ++l) {
    const int op = launch_op[l];
    if (op < 0) continue;
    if (!dense) {
      sorted_.emplace_back(launches[l].corr, op);
      continue;
    }
    int& at = dense_[static_cast<size_t>(launches[l].corr - lo_)];
    if (at < 0 || op < at) at = op;
  }
  sort_runs(sorted_);
}

TraceNest nest_trace(const TorchTrace& t) {
  TraceNest nest;
  nest.order = time_order(t.cpu);
  nest.steps = profiler_steps(t);
  link_parents(t, nest);
  ScopeWalk walk(t, nest);
  for (uint32_t i : nest.order) walk.visit(i);
  return nest;
}

}  // namespace flopwise::trace_stages
