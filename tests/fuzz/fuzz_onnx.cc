// tests/fuzz/fuzz_onnx.cc — libFuzzer target over the ONNX path (issue 16): bytes -> import -> shape pass ->
// cost -> every report writer, plus the LLM and memory passes. A flopwise::Error is the expected answer to a
// bad file; anything else escaping (another exception, a sanitizer report, a crash, a hang) is a finding.
//
//   cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DFLOPWISE_FUZZ=ON -DFLOPWISE_WITH_TORCH=OFF
//   make -C build-fuzz flopwise_fuzz
//   build-fuzz/flopwise_fuzz -max_total_time=180 -rss_limit_mb=2048 -timeout=10 CORPUS_DIR
//   tests/fuzz/regressions
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "flopwise/analysed_report.h"
#include "flopwise/convention.h"
#include "flopwise/cost.h"
#include "flopwise/errors.h"
#include "flopwise/infer.h"
#include "flopwise/llm.h"
#include "flopwise/moe.h"
#include "flopwise/onnx_import.h"
#include "flopwise/peak_memory.h"
#include "flopwise/writers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    flopwise::Model m =
        flopwise::import_onnx_bytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz.onnx");
    flopwise::InferResult inf = flopwise::infer_shapes(m);
    flopwise::AnalysedReport r(flopwise::build_report(m, inf));
    r.moe = flopwise::find_moe(m, r);
    auto kv = flopwise::find_kv_cache(m);
    r.peak_memory = std::make_shared<flopwise::PeakMemory>(flopwise::peak_memory(m, kv));
    std::ostringstream os;
    flopwise::write_text(os, r, flopwise::TextOptions{-1, 3});
    flopwise::write_json(os, r);
    flopwise::write_csv(os, r);
    flopwise::write_markdown(os, r, flopwise::TextOptions{-1, 3});
    flopwise::write_html(os, r);
    flopwise::write_netron(os, r);
    flopwise::CostOptions causal;
    causal.causal = true;
    flopwise::build_report(m, inf, flopwise::default_convention(), causal);
  } catch (const flopwise::Error&) {
  }
  return 0;
}
