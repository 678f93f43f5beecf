// tests/fuzz/fuzz_pt2.cc — libFuzzer target over the .pt2 reader (src/pt2): bytes -> zip -> layout -> program
// JSON -> validation -> every symbolic size as a Dim. A flopwise::Error is the expected answer to a bad
// archive; anything else escaping (another exception, a sanitizer report, a crash, a hang) is a finding.
//
//   build-fuzz/flopwise_fuzz_pt2 -max_total_time=60 -rss_limit_mb=2048 -timeout=10 CORPUS_DIR tests/fuzz/pt2
#include <cstddef>
#include <cstdint>
#include <string>

#include "flopwise/errors.h"
#include "pt2/program.h"
#include "pt2/sym_expr.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    flopwise::pt2::Program p = flopwise::pt2::read_pt2_bytes(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.pt2");
    flopwise::pt2::SymDims dims(flopwise::pt2::SymbolNames::from_program(p));
    for (const auto& [name, meta] : p.graph.tensor_values)
      for (const auto& s : meta.sizes) dims.dim(s);
  } catch (const flopwise::Error&) {
  }
  return 0;
}
