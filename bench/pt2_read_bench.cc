// bench/pt2_read_bench.cc — the .pt2 reader's JSON parse, timed beside nlohmann-json's on the same text
// (bench/README.md, .pt2 reader): pt2_read_bench PROGRAM.json [REPEATS]. Prints the best of REPEATS.
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "pt2/program.h"
#include "pt2/sym_expr.h"

namespace {
template <class F>
double best_ms(int repeats, F f) {
  double best = 1e300;
  for (int i = 0; i < repeats; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best,
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  size_t nodes = 0;
  double reader = best_ms(repeats, [&] {
    flopwise::pt2::Program p = flopwise::pt2::read_program_json(text, argv[1]);
    flopwise::pt2::SymDims dims(flopwise::pt2::SymbolNames::from_program(p));
    for (const auto& [name, meta] : p.graph.tensor_values)
      for (const auto& s : meta.sizes) dims.dim(s);
    nodes = p.graph.nodes.size();
  });
  double dom = best_ms(repeats, [&] {
    nlohmann::json j = nlohmann::json::parse(text);
    nodes = std::max(nodes, j["graph_module"]["graph"]["nodes"].size());
  });
  double dom_simd = best_ms(repeats, [&] {
    simdjson::dom::parser parser;
    simdjson::dom::element e = parser.parse(text);
    nodes = std::max(nodes, simdjson::dom::array(e["graph_module"]["graph"]["nodes"]).size());
  });
  std::printf("  simdjson DOM parse alone (%s kernel): %.1f ms; On-Demand's kernel: %s\n",
              simdjson::get_active_implementation()->name().data(), dom_simd,
              simdjson::builtin_implementation()->name().data());
  std::printf(
      "%s: %.1f MB, %zu nodes\n  simdjson On-Demand -> Program (+ every size as a Dim): %.1f ms\n"
      "  nlohmann::json::parse alone (a DOM, nothing read from it): %.1f ms\n",
      argv[1], text.size() / 1e6, nodes, reader, dom);
}
