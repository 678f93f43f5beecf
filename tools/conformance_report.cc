// tools/conformance_report.cc — per-case results of the ONNX backend node-test conformance check.
// Prints, for every case whose outputs are all tensors, flopwise's verdict and ONNX's, then a summary
// by failure category. Same preparation and rules as tests/test_conformance.cc.
//
//   conformance_report [--failures] [--seed] [--no-onnx] [--dump] [--dir DIR] [SUBSTRING...]
//     --failures  print only cases flopwise fails
//     --seed      print flopwise failures as expectation lines (`name<TAB>reason`)
//     --no-onnx   skip ONNX's own shape inference
//     --dump      also print every top-level value flopwise infers (shape, known contents)
//     SUBSTRING   only cases whose name contains one of these
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "flopwise/infer.h"
#include "flopwise/onnx_import.h"
#include "onnx_oracle.h"

namespace {

// "unsupported op: Foo (...)" -> "unsupported op: Foo"; "unknown: output 0 ..." -> "unknown".
std::string category(const std::string& reason) {
  if (reason.rfind("unsupported op: ", 0) == 0) return reason.substr(0, reason.find(" ("));
  if (reason.rfind("shape contradiction", 0) == 0) return "shape contradiction";
  return reason.substr(0, reason.find(':'));
}

void dump_values(const fwconf::BackendCase& c) {
  try {
    flopwise::Model m = flopwise::import_onnx_bytes(c.bytes, c.name);
    flopwise::InferResult r = flopwise::infer_shapes(m, {});
    for (const auto& v : m.graph.values) {
      std::string data;
      if (v.data) {
        const auto& d = *v.data;
        for (size_t i = 0; i < d.size() && i < 8; ++i)
          data += (i ? "," : "") + (d.is_float ? std::to_string(d.floats[i]) : d.ints[i].str());
        data = " = [" + data + (d.size() > 8 ? ",...]" : "]");
      }
      std::printf("    %-50s %-8s %s%s\n", v.name.c_str(), flopwise::dtype_name(v.dtype),
                  v.shape.str().c_str(), data.c_str());
    }
    for (const auto& w : r.warnings) std::printf("    warning: %s\n", w.c_str());
  } catch (const std::exception& e) {
    std::printf("    exception: %s\n", e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool failures_only = false, seed = false, run_onnx = true, dump = false;
  std::string root = fwconf::backend_node_dir();
  std::vector<std::string> filters;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--failures")
      failures_only = true;
    else if (a == "--seed")
      seed = true;
    else if (a == "--no-onnx")
      run_onnx = false;
    else if (a == "--dump")
      dump = true;
    else if (a == "--dir" && i + 1 < argc)
      root = argv[++i];
    else if (a == "-h" || a == "--help") {
      std::printf("usage: %s [--failures] [--seed] [--no-onnx] [--dump] [--dir DIR] [SUBSTRING...]\n",
                  argv[0]);
      return 0;
    } else
      filters.push_back(a);
  }
  auto names = fwconf::list_backend_cases(root);
  if (names.empty()) {
    std::fprintf(stderr, "no test_* directories under %s\n", root.c_str());
    return 2;
  }
  int judged = 0, ours = 0, theirs = 0;
  std::map<std::string, int> categories;
  for (const auto& name : names) {
    if (!filters.empty()) {
      bool hit = false;
      for (const auto& f : filters) hit |= name.find(f) != std::string::npos;
      if (!hit) continue;
    }
    fwconf::BackendCase c = fwconf::load_backend_case(root, name);
    if (!c.tensor_outputs) continue;
    ++judged;
    fwconf::Verdict v = fwconf::judge_flopwise(c);
    fwconf::Verdict o;
    if (run_onnx) o = fwconf::judge_onnx(c);
    ours += v.pass;
    theirs += o.pass;
    if (!v.pass) ++categories[category(v.reason)];
    if (seed) {
      if (!v.pass) std::printf("%s\t%s\n", name.c_str(), v.reason.c_str());
      continue;
    }
    if (failures_only && v.pass) continue;
    std::printf("%-60s flopwise %s%s%s", name.c_str(), v.pass ? "PASS" : "FAIL", v.pass ? "" : ": ",
                v.reason.c_str());
    if (run_onnx)
      std::printf("  | onnx %s%s%s", o.pass ? "PASS" : "FAIL", o.pass ? "" : ": ", o.reason.c_str());
    std::printf("\n");
    if (dump) dump_values(c);
  }
  if (seed) return 0;
  std::printf("\njudged %d cases; flopwise %d pass (%.1f %%)", judged, ours,
              judged ? 100.0 * ours / judged : 0.0);
  if (run_onnx) std::printf("; onnx %d pass (%.1f %%)", theirs, judged ? 100.0 * theirs / judged : 0.0);
  std::printf("\nflopwise failures by category:\n");
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto& [k, n] : categories) sorted.push_back({-n, k});
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [n, k] : sorted) std::printf("  %4d  %s\n", -n, k.c_str());
  return 0;
}
