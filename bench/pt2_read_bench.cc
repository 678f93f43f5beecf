// bench/pt2_read_bench.cc — the .pt2 reader's JSON read timed, beside the bare parses of simdjson's DOM and
// nlohmann-json on the same text (bench/README.md, .pt2 reader):
//   pt2_read_bench PROGRAM.json [REPEATS] [--reader-only]
// Prints the reader's median and best of REPEATS (ms, µs a node) and the process's peak RSS.
#include <simdjson.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "pt2/program.h"
#include "pt2/sym_expr.h"

namespace {
struct Times {
  double median, best;
};
template <class F>
Times time_ms(int repeats, F f) {
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t[0]};
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  bool reader_only = argc > 3 && std::strcmp(argv[3], "--reader-only") == 0;
  size_t nodes = 0;
  Times reader = time_ms(repeats, [&] {
    flopwise::pt2::Program p = flopwise::pt2::read_program_json(text, argv[1]);
    flopwise::pt2::SymDims dims(flopwise::pt2::SymbolNames::from_program(p));
    for (const auto& [name, meta] : p.graph.tensor_values)
      for (const auto& s : meta.sizes) dims.dim(s);
    nodes = p.graph.nodes.size();
  });
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  std::printf(
      "%s: %.1f MB, %zu nodes\n  reader -> Program (+ every size as a Dim): median %.1f ms, best %.1f ms "
      "(%.2f us/node median), peak RSS %.0f MB\n",
      argv[1], text.size() / 1e6, nodes, reader.median, reader.best, 1e3 * reader.median / nodes,
      ru.ru_maxrss / 1024.0);
  if (reader_only) return 0;
  Times dom_simd = time_ms(repeats, [&] {
    simdjson::dom::parser parser;
    simdjson::dom::element e = parser.parse(text);
    nodes = std::max(nodes, simdjson::dom::array(e["graph_module"]["graph"]["nodes"]).size());
  });
  Times dom = time_ms(repeats, [&] {
    nlohmann::json j = nlohmann::json::parse(text);
    nodes = std::max(nodes, j["graph_module"]["graph"]["nodes"].size());
  });
  std::printf(
      "  simdjson DOM parse alone (%s kernel; On-Demand's: %s): median %.1f ms\n"
      "  nlohmann::json::parse alone (nothing read from it): median %.1f ms\n",
      simdjson::get_active_implementation()->name().data(), simdjson::builtin_implementation()->name().data(),
      dom_simd.median, dom.median);
}
