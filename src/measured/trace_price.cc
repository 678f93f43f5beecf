// src/measured/trace_price.cc — the cost of recorded aten calls (flopwise/torch_trace.h, cost_aten_calls):
// each call lowered through the neutral aten table (flopwise/aten_lower.h, lower_aten_calls; no LibTorch),
// and the shape pass and the cost rules price the IR, exactly as for a .pt's or a .pt2's ops.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <thread>

#include "flopwise/aten_call.h"
#include "flopwise/aten_lower.h"
#include "flopwise/aten_schema.h"
#include "flopwise/cost.h"
#include "flopwise/graph_replay.h"
#include "flopwise/infer.h"
#include "flopwise/torch_trace.h"

namespace flopwise {

namespace {

AtenCost cost_model(Model& m) {
  AtenCost c;
  if (m.graph.nodes.empty()) {
    c.costed = true;  // nothing to run: a no-op (a view of nothing, a constant)
    return c;
  }
  InferResult inf = infer_shapes(m);
  Report r = build_report(m, std::move(inf));
  if (!r.unsupported.empty()) {
    std::string ops;
    for (const auto& [op, nodes] : r.unsupported) ops += (ops.empty() ? "" : ", ") + op;
    c.why = "no cost rule (" + ops + ")";
    return c;
  }
  const Totals& t = r.totals;
  if (!t.complete() || !t.macs.known || !t.flops.known || !t.memory_bytes.known) {
    c.why = "counts not known from the recorded shapes";
    return c;
  }
  c.costed = true;
  c.macs = t.macs.v;
  c.flops = t.flops.v;
  c.bytes = t.memory_bytes.v;
  int64_t best = -1;
  for (const auto& n : r.nodes)
    if (n.mac_dtype != DType::Undefined && n.cost.macs.known && n.cost.macs.v > best)
      best = n.cost.macs.v, c.dtype = dtype_name(n.mac_dtype);
  if (c.dtype.empty() && !m.graph.inputs.empty())
    c.dtype = dtype_name(m.graph.values[m.graph.inputs[0]].dtype);
  return c;
}

}  // namespace

std::vector<AtenCost> cost_aten_calls(const std::vector<AtenCall>& calls) {
  std::vector<AtenCost> out(calls.size());
  std::vector<std::string> whys;
  std::vector<Model> models = lower_aten_calls(calls, &whys);
  for (size_t i = 0; i < calls.size() && i < models.size(); ++i) {
    if (!whys[i].empty()) {  // not an aten op: inductor's triton kernels, KV attention (src/measured)
      if (auto k = cost_measured_call(calls[i], cost_aten_calls))
        out[i] = *k;
      else
        out[i].why = whys[i];
      continue;
    }
    try {
      out[i] = cost_model(models[i]);
    } catch (const std::exception& e) {
      out[i].why = e.what();
    }
  }
  return out;
}

TraceReport analyse_trace_file(const std::string& path, const TraceOptions& opts, TraceTimings* timings) {
  using clock = std::chrono::steady_clock;
  auto seconds = [](clock::time_point a, clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  auto t0 = clock::now();
  // The aten schemas are parsed on another core while this one reads the trace.
  std::future<void> loading;
  if (std::thread::hardware_concurrency() >= 2)
    loading = std::async(std::launch::async, [] { aten_schemas(); });
  TraceReadOptions read;
  read.census = opts.communication;  // the census facts kept by the same read
  TorchTrace t = read_torch_trace(path, read);
  // The communication figures: where a graph's replayed kernels will be re-pointed, from the trace as read;
  // else after the analysis, in the memory of the CPU events (the peak is the analysis's, not raised).
  std::optional<RankRun> communication;
  if (t.census && std::any_of(t.launches.begin(), t.launches.end(),
                              [](const TraceLaunch& l) { return l.kind == LaunchKind::GraphLaunch; }))
    communication = trace_communication(t);
  join_capture_traces(t, opts.capture);  // kernels replayed from a CUDA/HIP graph: their capture's ops
  tag_kv_attention(t);                   // attention over a KV cache: the step annotation's sums
  auto t1 = clock::now();
  double price_s = 0;
  AtenCoster priced = [&](const std::vector<AtenCall>& calls) {
    auto c0 = clock::now();
    std::vector<AtenCost> out = cost_aten_calls(calls);
    price_s = seconds(c0, clock::now());
    return out;
  };
  TraceReport r = analyse_trace(t, priced, opts);
  if (t.census && !communication) {
    std::vector<TraceEvent>().swap(t.cpu);  // the report has what it needed: its memory for the census's
    communication = trace_communication(t);
  }
  r.communication = std::move(communication);
  if (timings)
    *timings = TraceTimings{seconds(t0, t1), price_s, seconds(t1, clock::now()) - price_s, t.calls.size(),
                            t.read_parts};
  return r;
}

}  // namespace flopwise
