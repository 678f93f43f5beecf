// include/flopwise/run_report.h — the writers of a run report (`flopwise run`): the JSON document
// flopwise.run/1, the text report with its scope table, --verify's result, and the Chrome trace of the
// profiled ops. Implemented in src/writers/run_report.cc; the command (src/cli/run_cmd.cc) measures and
// joins, these write.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "flopwise/cost.h"
#include "flopwise/verify.h"

namespace flopwise {

// What the run writers take from the command's options.
struct RunTextOptions {
  std::string model;       // the model's path as given
  double peak_tflops = 0;  // --peak-tflops: % of peak per scope when > 0
};

// "12.35" (fixed, `prec` decimals); "-" for NaN.
std::string fmt(double v, int prec = 2);
// A scope and its ancestors, root first: "a.b.c" -> "", "a", "a.b", "a.b.c".
std::vector<std::string> scope_ancestors(const std::string& scope);
// "CUDAExecutionProvider" -> "CUDA".
std::string short_provider(const std::string& p);
// The flopwise.run/1 document: the model, convention, the engine's header (`runtime`), the static totals, the
// summary, the scope rows, the op rows and the time no op covered.
nlohmann::json run_doc(const RunTextOptions& o, const Report& rep, nlohmann::json runtime, nlohmann::json sum,
                       nlohmann::json rows, nlohmann::json ops, double unattributed_ms);
// The LibTorch run's text report: device, timing, latency summary, the scope table.
void write_run_text(std::ostream& os, const Report& rep, const nlohmann::json& rt, const nlohmann::json& sum,
                    const nlohmann::json& rows, const RunTextOptions& o);
// One line per scope row: class, MACs, FLOPs, measured ms, %, calls, FLOP/s, and the bound where given.
void write_scope_table(std::ostream& os, const nlohmann::json& rows, const RunTextOptions& o);
// --verify's result: ops matched, shapes compared, every disagreement.
void write_verify_text(std::ostream& os, const VerifyResult& v);
// The profiled ops of the runtime's response `rt` as a Chrome Trace Event file at `path`, each op nested in
// its scopes' spans.
void write_trace(const std::string& path, const nlohmann::json& rt);

}  // namespace flopwise
