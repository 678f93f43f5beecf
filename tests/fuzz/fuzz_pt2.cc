// tests/fuzz/fuzz_pt2.cc — libFuzzer target over the .pt2 path: bytes -> zip -> layout -> program JSON ->
// validation -> symbolic sizes -> the lowering through the aten table (src/pt2/pt2_lower.h) -> shape pass ->
// cost -> the JSON and text writers. A flopwise::Error is the expected answer to a bad archive; anything else
// escaping (another exception, a sanitizer report, a crash, a hang) is a finding.
//
//   build-fuzz/flopwise_fuzz_pt2 -max_total_time=60 -rss_limit_mb=2048 -timeout=10 CORPUS_DIR tests/fuzz/pt2
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "flopwise/analysed_report.h"
#include "flopwise/cost.h"
#include "flopwise/errors.h"
#include "flopwise/infer.h"
#include "flopwise/pt2_import.h"
#include "flopwise/writers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    flopwise::Model m =
        flopwise::import_pt2_bytes(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.pt2");
    flopwise::InferResult inf = flopwise::infer_shapes(m);
    flopwise::AnalysedReport r(flopwise::build_report(m, inf));
    std::ostringstream os;
    flopwise::write_json(os, r);
    flopwise::write_text(os, r, flopwise::TextOptions{-1, 3});
  } catch (const flopwise::Error&) {
  }
  return 0;
}
