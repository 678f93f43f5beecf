// src/analyse/aten_cost.cc — the cost of recorded aten calls (flopwise/torch_trace.h, cost_aten_calls): the
// TorchScript plugin lowers each call through the aten table (src/torch/trace_calls.cc), and the shape pass
// and the cost rules price the IR, exactly as for a .pt's ops. Without the plugin no call is costed, and each
// says why.
#include <dlfcn.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <thread>

#include "../torch/torch_plugin.h"
#include "flopwise/analyse.h"
#include "flopwise/cost.h"
#include "flopwise/infer.h"
#include "flopwise/torch_trace.h"

namespace flopwise {

namespace {

// The plugin's entry point, loaded once (thread-safe: analyse_trace_file loads it while the trace is read);
// without it, why no call can be costed.
struct LowerCalls {
  FlopwiseTorchLowerCallsFn fn = nullptr;
  std::string why;
};
const LowerCalls& lower_calls() {
  static const LowerCalls loaded = [] {
    LowerCalls l;
    std::string plugin = find_torch_plugin();
    if (plugin.empty()) {
      l.why = "TorchScript plugin not built (LibTorch, Debian libtorch-dev): costs need its aten table";
    } else if (void* h = dlopen(plugin.c_str(), RTLD_NOW | RTLD_LOCAL); !h) {
      l.why = std::string("cannot load ") + plugin + ": " + dlerror();
    } else {
      l.fn = reinterpret_cast<FlopwiseTorchLowerCallsFn>(dlsym(h, "flopwise_torch_lower_calls"));
      if (!l.fn) l.why = plugin + " has no flopwise_torch_lower_calls (an older plugin)";
    }
    return l;
  }();
  return loaded;
}

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
  FlopwiseTorchLowerCallsFn fn = lower_calls().fn;
  if (!fn) {
    for (auto& c : out) c.why = lower_calls().why;
    return out;
  }
  std::vector<Model> models;
  std::vector<std::string> whys;
  fn(&calls, &models, &whys);
  for (size_t i = 0; i < calls.size() && i < models.size(); ++i) {
    if (!whys[i].empty()) {
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
  // LibTorch's start-up (dlopen, its operator registry: nearly all of the pricing time of a large trace) runs
  // on another core while this one reads the trace.
  std::future<void> loading;
  if (std::thread::hardware_concurrency() >= 2)
    loading = std::async(std::launch::async, [] { lower_calls(); });
  TorchTrace t = read_torch_trace(path);
  auto t1 = clock::now();
  double price_s = 0;
  AtenCoster priced = [&](const std::vector<AtenCall>& calls) {
    auto c0 = clock::now();
    std::vector<AtenCost> out = cost_aten_calls(calls);
    price_s = seconds(c0, clock::now());
    return out;
  };
  TraceReport r = analyse_trace(t, priced, opts);
  if (timings)
    *timings = TraceTimings{seconds(t0, t1), price_s, seconds(t1, clock::now()) - price_s, t.calls.size(),
                            t.read_parts};
  return r;
}

}  // namespace flopwise
