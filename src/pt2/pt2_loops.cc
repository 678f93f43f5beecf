// src/pt2/pt2_loops.cc — torch.export's loops (pt2_lower.h), unrolled where the trip count is known at
// import: map (one body per slice of xs along dim 0, results stacked), scan (a carry threaded through the
// slices, the per-step outputs stacked), while_loop (its condition subgraph evaluated on the carried values
// before each iteration). A loop whose trip count depends on data is listed as not counted, with why.
#include "pt2/pt2_lower.h"

namespace flopwise::pt2 {

namespace {
constexpr int64_t kMaxIterations = 100000;   // a loop unrolled past this is left uncounted
constexpr size_t kMaxUnrolledNodes = 50000;  // as are the iterations past this many nodes (fuzz: an OOM)

// The operands after a loop's subgraphs, one list per argument (a single tensor as a list of one).
struct LoopOperands {
  std::vector<const Graph*> graphs;
  std::vector<std::vector<const Argument*>> lists;
};
LoopOperands operands(const Node& n) {
  LoopOperands r;
  for (const NamedArgument& a : n.inputs) {
    if (a.arg.kind == ArgKind::Graph && a.arg.graph) {
      r.graphs.push_back(a.arg.graph.get());
      continue;
    }
    std::vector<const Argument*> items;
    if (a.arg.kind == ArgKind::Tensors || a.arg.kind == ArgKind::OptionalTensors)
      for (const Argument& x : a.arg.items) items.push_back(&x);
    else
      items.push_back(&a.arg);
    r.lists.push_back(std::move(items));
  }
  return r;
}
}  // namespace

// while_loop(cond_fn, body_fn, carried_inputs, additional_inputs): the condition run on the carried values
// before each iteration, its result known at import, else the loop is not counted.
bool Pt2Lowerer::lower_while(const Node& n, const Graph& cond, const Graph& body, std::vector<JV> carried,
                             const std::vector<JV>& extra, std::string* why) {
  const size_t start = g_.nodes.size();
  for (int64_t it = 0; it < kMaxIterations; ++it) {
    if (g_.nodes.size() - start > kMaxUnrolledNodes) {
      *why = "more than " + std::to_string(kMaxUnrolledNodes) + " nodes unrolled: the loop is not counted";
      return false;
    }
    std::vector<JV> args = carried;
    args.insert(args.end(), extra.begin(), extra.end());
    auto pred = run_graph(cond, args);
    auto go = pred && !pred->empty() ? known_bool((*pred)[0]) : std::nullopt;
    if (!go) {
      *why = "whether iteration " + std::to_string(it + 1) + " runs depends on data: the loop is not counted";
      return false;
    }
    if (!*go) return bind_results(n.outputs, carried), true;
    auto next = run_graph(body, args);
    if (!next) return false;
    carried.assign(next->begin(),
                   next->begin() + static_cast<std::ptrdiff_t>(std::min(next->size(), carried.size())));
  }
  *why = "more than " + std::to_string(kMaxIterations) + " iterations: the loop is not counted";
  return false;
}

std::vector<JV> Pt2Lowerer::slices(const std::vector<JV>& xs, int64_t i) {
  std::vector<JV> r;
  for (const JV& x : xs) {
    int v = emit("Gather", {as_ir(x), const_int(i)}, {"slice"}, {{"axis", ai(0)}})[0];
    r.push_back(JV::of_ir(v));
  }
  return r;
}

JV Pt2Lowerer::stack(const std::vector<JV>& items) {
  std::vector<int> ins;
  for (const JV& x : items) ins.push_back(emit("Unsqueeze", {as_ir(x), const_ints({0})}, {"item"})[0]);
  if (ins.empty()) return JV();
  return JV::of_ir(emit("Concat", ins, {"stacked"}, {{"axis", ai(0)}})[0]);
}

bool Pt2Lowerer::lower_loop_hop(const Node& n, std::string_view hop, std::string* why) {
  if (hop != "map_impl" && hop != "scan" && hop != "while_loop") return false;
  LoopOperands ops = operands(n);
  auto values = [&](size_t k) {
    std::vector<JV> r;
    if (k < ops.lists.size())
      for (const Argument* a : ops.lists[k]) r.push_back(get(value_of(*a, AtenType{AtenType::Tensor})));
    return r;
  };
  auto trip_of = [&](const std::vector<JV>& xs) -> std::optional<int64_t> {
    if (xs.empty() || xs[0].kind != JV::Tensor) return std::nullopt;
    const Shape& s = facts(xs[0].ir).shape;
    if (!s.rank_known || s.rank() == 0 || !s.dims[0].is_known()) return std::nullopt;
    return s.dims[0].value();
  };
  if (hop == "while_loop")
    return ops.graphs.size() == 2 &&
           lower_while(n, *ops.graphs[0], *ops.graphs[1], values(0), values(1), why);
  if (ops.graphs.empty()) return false;
  const bool is_scan = hop == "scan";
  std::vector<JV> init = is_scan ? values(0) : std::vector<JV>{}, xs = values(is_scan ? 1 : 0),
                  extra = values(is_scan ? 2 : 1);
  auto trip = trip_of(xs);
  if (!trip || *trip > kMaxIterations) {
    *why = "its trip count (the length of xs) is not known at import: the loop is not counted";
    return false;
  }
  std::vector<JV> carry = init;
  std::vector<std::vector<JV>> per_step;
  const size_t start = g_.nodes.size();
  for (int64_t i = 0; i < *trip; ++i) {
    if (g_.nodes.size() - start > kMaxUnrolledNodes) {
      *why = "more than " + std::to_string(kMaxUnrolledNodes) + " nodes unrolled: the loop is not counted";
      return false;
    }
    std::vector<JV> args = carry, sl = slices(xs, i);
    args.insert(args.end(), sl.begin(), sl.end());
    args.insert(args.end(), extra.begin(), extra.end());
    auto out = run_graph(*ops.graphs[0], args);
    if (!out || out->size() < carry.size()) return false;
    std::copy(out->begin(), out->begin() + static_cast<std::ptrdiff_t>(carry.size()), carry.begin());
    per_step.emplace_back(out->begin() + static_cast<std::ptrdiff_t>(carry.size()), out->end());
  }
  std::vector<JV> results = carry;
  size_t ys = per_step.empty() ? 0 : per_step[0].size();
  for (size_t k = 0; k < ys; ++k) {
    std::vector<JV> items;
    for (const auto& step : per_step) items.push_back(step[k]);
    results.push_back(stack(items));
  }
  bind_results(n.outputs, results);
  return true;
}

}  // namespace flopwise::pt2
