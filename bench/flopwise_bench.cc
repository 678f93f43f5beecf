// bench/flopwise_bench.cc — Google Benchmark of the library path: analyse() (import -> pins -> infer ->
// report). Bundled models come from models/; set FLOPWISE_BENCH_MODELS=DIR to add DIR/*.onnx (run_bench.sh
// puts the generated resnet50 graph-only and inline files there).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "flopwise/analyse.h"

namespace fs = std::filesystem;

namespace {

void bm_analyse(benchmark::State& state, const std::string& path) {
  for (auto _ : state) {
    flopwise::Pins pins;
    pins.dims = {{"batch", 1}, {"seq", 64}};
    flopwise::Analysis a = flopwise::analyse(path, pins, flopwise::find_convention("default"));
    benchmark::DoNotOptimize(a.report.totals.flops.v);
  }
}

void register_dir(const fs::path& dir, const std::string& prefix) {
  if (!fs::is_directory(dir)) return;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().extension() != ".onnx") continue;
    std::string label = prefix + fs::relative(e.path(), dir).string();
    std::string path = e.path().string();
    benchmark::RegisterBenchmark(label.c_str(), [path](benchmark::State& s) {
      bm_analyse(s, path);
    })->Unit(benchmark::kMillisecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_dir(fs::path(FLOPWISE_SOURCE_DIR) / "models", "models/");
  if (const char* extra = std::getenv("FLOPWISE_BENCH_MODELS")) register_dir(extra, "bench/");
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
