// bench/trace_read_bench.cc — the trace reader (src/measured/trace_read.cc, built in with
// FLOPWISE_TRACE_SIMDJSON_BENCH) with its events parsed by the hand parser or by simdjson 3 (DOM or
// On-Demand, bench/trace_simdjson_event.h). `trace_read_bench
// hand|dom|ondemand|dom-batch|ondemand-batch|capture FILE...` reads each trace and prints its record counts
// and a digest of every record (equal digests: the same records); `trace_read_bench
// --kernels` prints the kernel each simdjson API runs. Timed whole-process by farm-bench (bench/README.md).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "flopwise/errors.h"
#include "flopwise/torch_trace.h"
#include "trace_simdjson_event.h"

namespace {

struct Digest {
  uint64_t h = 1469598103934665603ull;
  void mix(const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  }
  template <class T>
  void num(T v) {
    mix(&v, sizeof v);
  }
  void str(const std::string& s) {
    num(s.size());
    mix(s.data(), s.size());
  }
};

uint64_t digest(const flopwise::TorchTrace& t) {
  Digest d;
  for (const auto& s : t.names) d.str(s);
  for (const auto& s : t.threads) d.str(s);
  for (const auto& c : t.calls) {
    d.str(c.op);
    for (const auto& s : c.types) d.str(s);
    for (const auto& s : c.concrete) d.str(s);
    for (const auto& arg : c.dims) {
      d.num(arg.size());
      for (const auto& shape : arg) {
        d.num(shape.size());
        for (int64_t x : shape) d.num(x);
      }
    }
  }
  for (const auto* table : {&t.cpu, &t.gpu})
    for (const auto& e : *table) {
      d.num(e.ts), d.num(e.dur), d.num(e.ext), d.num(e.corr), d.num(e.name), d.num(e.thread);
      d.num(e.call), d.num(e.hier), d.num(static_cast<int>(e.kind));
    }
  for (const auto& l : t.launches)
    d.num(l.corr), d.num(l.thread), d.num(l.ts), d.num(l.kernel), d.num(static_cast<int>(l.kind));
  for (const auto& [id, ts] : t.flow_starts) d.num(id), d.num(ts);
  for (const auto& [id, ts] : t.flow_ends) d.num(id), d.num(ts);
  for (uint32_t x : t.flow_start_thread) d.num(x);
  for (uint32_t x : t.flow_end_thread) d.num(x);
  d.str(t.device), d.num(t.device_memory), d.num(t.events);
  for (const auto& [dev, peak] : t.memory_peak) d.num(dev), d.num(peak);
  for (const auto& w : t.warnings) d.str(w);
  return d.h;
}

}  // namespace

int main(int argc, char** argv) {
  using flopwise::bench_trace::Mode;
  if (argc == 2 && std::strcmp(argv[1], "--kernels") == 0) {
    std::printf("DOM: %s (chosen at run time); On-Demand: %s (chosen when compiled)\n",
                simdjson::get_active_implementation()->name().c_str(),
                flopwise::bench_trace::kOnDemandKernel);
    return 0;
  }
  if (argc < 3) {
    std::fprintf(stderr, "usage: trace_read_bench hand|dom|ondemand TRACE... | --kernels\n");
    return 2;
  }
  constexpr std::pair<std::string_view, Mode> kModes[] = {{"hand", Mode::Hand},
                                                          {"dom", Mode::Dom},
                                                          {"ondemand", Mode::OnDemand},
                                                          {"dom-batch", Mode::DomBatch},
                                                          {"ondemand-batch", Mode::OnDemandBatch},
                                                          {"capture", Mode::Capture}};
  const auto* m =
      std::find_if(std::begin(kModes), std::end(kModes), [&](const auto& x) { return x.first == argv[1]; });
  if (m == std::end(kModes)) {
    std::fprintf(stderr, "unknown reader %s (hand, dom, ondemand)\n", argv[1]);
    return 2;
  }
  flopwise::bench_trace::mode = m->second;
  int rc = 0;
  for (int i = 2; i < argc; ++i) {
    try {
      flopwise::TorchTrace t = flopwise::read_torch_trace(argv[i]);
      std::printf("%s events %lld cpu %zu gpu %zu launches %zu names %zu calls %zu parts %d digest %016llx\n",
                  argv[i], static_cast<long long>(t.events), t.cpu.size(), t.gpu.size(), t.launches.size(),
                  t.names.size(), t.calls.size(), t.read_parts, static_cast<unsigned long long>(digest(t)));
    } catch (const std::exception& e) {
      std::printf("%s error: %s\n", argv[i], e.what());
      rc = 1;
    }
  }
  return rc;
}
