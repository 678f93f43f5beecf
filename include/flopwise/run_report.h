// include/flopwise/run_report.h — the run report (flopwise/run.h) written and read: its one JSON writer and
// one reader (flopwise.run/1, src/writers/run_report_io.cc), the text report of each engine with its scope
// table, --verify's result, and the Chrome trace of the profiled ops (src/writers/run_report.cc). The
// command (src/cli/run_cmd.cc) measures, src/measured/run_join.cc joins, these write.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "flopwise/cost.h"
#include "flopwise/run.h"
#include "flopwise/verify.h"

namespace flopwise {

// What the text writers take beside the report.
struct RunTextOptions {
  double peak_tflops = 0;           // --peak-tflops: % of peak per scope when > 0
  size_t matched_trace_scopes = 0;  // a trace's run: how many of the trace's scopes were matched
};

// "libtorch", "onnxruntime", "pytorch-trace": the runtime header's "engine".
const char* run_engine_name(RunEngine e);

// The JSON document (flopwise.run/1), indented by one space per level, with a final newline.
std::string run_report_json(const RunReport& r);

// Whether `path` is a JSON run report (its "schema" is "flopwise.run/1"). Never throws.
bool is_run_report(const std::string& path);

// Reads a run report; throws InputError naming the file and what is wrong (not JSON, another schema, no
// scopes or summary, a member of the wrong type, a measured unit whose counts are not numbers >= 0 or whose
// parts do not sum to it). Members a report lacks keep their defaults (numbers: NaN where a figure may be
// unknown; RunRuntime::threads: -1).
RunReport read_run_report(const std::string& path);

// "12.35" (fixed, `prec` decimals); "-" for NaN.
std::string fmt(double v, int prec = 2);
// "CUDAExecutionProvider" -> "CUDA".
std::string short_provider(const std::string& p);
// The text report of a run, by its engine: how it was measured, the latency summary, the scope table (and an
// ONNX Runtime profile's op types and the kernels it could not map). `rep`: the static report it joined.
void write_run_text(std::ostream& os, const Report& rep, const RunReport& run, const RunTextOptions& o);
// One line per scope row: class, MACs, FLOPs, measured ms, %, calls, FLOP/s, and the bound where given.
void write_scope_table(std::ostream& os, const std::vector<RunScopeRow>& rows, const RunTextOptions& o);
// --verify's result: ops matched, shapes compared, every disagreement.
void write_verify_text(std::ostream& os, const VerifyResult& v);
// The profiled ops of the runtime's response `rt` as a Chrome Trace Event file at `path`, each op nested in
// its scopes' spans.
void write_trace(const std::string& path, const nlohmann::json& rt);

}  // namespace flopwise
