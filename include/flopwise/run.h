// include/flopwise/run.h — what `flopwise run` measures, as types: the run report (JSON schema
// flopwise.run/1: the model, the runtime header, the summary, the scope rows, the op rows, the time no op
// covered), and the joins that make one from a measurement and the static report (src/measured/run_join.cc):
// a LibTorch run (flopwise-runtime's response), an ONNX Runtime profile, a PyTorch profiler trace. Its one
// writer and one reader are flopwise/run_report.h's (src/writers/run_report_io.cc), beside the static
// report's.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "flopwise/calibration.h"
#include "flopwise/ort_profile.h"
#include "flopwise/torch_trace.h"
#include "flopwise/verify.h"

namespace flopwise {

// Which engine measured the run: the runtime header's fields differ by engine.
enum class RunEngine { LibTorch, OnnxRuntime, PyTorchTrace };

// A forward's (or backward's) wall time over the measured iterations.
struct RunLatency {
  double median = 0, p10 = 0, p90 = 0, min = 0;
};

// The runtime header: how and where the run was measured.
struct RunRuntime {
  RunEngine engine = RunEngine::LibTorch;
  std::string timing;   // how the latency was clocked, in words
  std::string profile;  // OnnxRuntime, PyTorchTrace: the profile's path
  std::string device;   // LibTorch: "cpu" | "cuda"; PyTorchTrace: the trace's GPU name ("" when absent)
  // LibTorch (flopwise-runtime's response).
  std::string device_name, torch_version, blas, op_clock;
  int64_t threads = 0, warmup = 0, iters = 0, profile_iters = 0;
  struct Tf32 {
    bool cudnn = false, cublas = false;
  };
  std::optional<Tf32> tf32;  // CUDA only: the flags the run had
  // OnnxRuntime.
  std::vector<std::string> providers;       // of the profile's kernels, sorted
  std::vector<std::string> input_bindings;  // input shapes and dims read off the profile ("batch=1")
  int64_t runs = 0, warmup_runs = 0, measured_runs = 0;
  // PyTorchTrace.
  int64_t steps = 0, matched_scopes = 0, trace_scopes = 0;
};

// The static totals the report was joined with (Report::totals; a count not known is written as its
// value with complete = false).
struct RunStaticTotals {
  int64_t params = 0, macs = 0, flops = 0;
  bool complete = false;
};

struct RunSummary {
  RunLatency fwd_latency_ms;
  double samples_per_s = 0;
  int64_t batch = 1;
  double fwd_flops_per_s = 0;
  double profiled_fwd_ms = 0, profiled_op_sum_ms = 0, coverage = 0;
  std::optional<double> profiling_overhead;  // LibTorch: the profiled forwards over the clean ones, minus 1
  std::optional<RunLatency> bwd_latency_ms;  // LibTorch --backward
  double fwd_bwd_flops_per_s = 0;            // with bwd_latency_ms
  std::string backward_note;                 // with bwd_latency_ms
  std::optional<double> peak_tflops;         // --peak-tflops
  std::optional<double> warmup_run_ms;       // OnnxRuntime, more than one run: the first run's
};

// One row per static scope, pre-order (to --depth).
struct RunScopeRow {
  std::string name, cls;
  int64_t depth = 0;
  std::optional<int64_t> params, macs, flops;  // nullopt: not known
  double latency_ms = 0, self_ms = 0, pct = 0, calls = 0;
  std::optional<double> flops_per_s;
  std::optional<double> pct_of_peak;  // --peak-tflops, with exceeds_peak
  bool exceeds_peak = false;
  std::optional<double> bound_ms;  // --hardware, with below_bound
  bool below_bound = false;
  std::optional<double> warmup_ms;                    // OnnxRuntime, more than one run
  std::optional<std::vector<std::string>> providers;  // OnnxRuntime
};

// One row per op name (LibTorch, traces) or op type of the original graph (ONNX Runtime), by time.
struct RunOpRow {
  std::string op;
  std::optional<int64_t> nodes;  // OnnxRuntime: the graph's nodes of the type
  double latency_ms = 0, pct = 0;
  std::optional<int64_t> flops;
  std::optional<double> flops_per_s;
};

// An ONNX Runtime kernel and the original nodes its time went to.
struct RunKernel {
  std::string kernel, op, provider, method;
  double latency_ms = 0;
  std::vector<std::pair<std::string, double>> nodes;  // (node, share)
  std::optional<std::string> counted_to;              // listed kernels: the node it counts to (none: null)
};

// How an ONNX Runtime profile's kernels were mapped back to the graph.
struct RunAttribution {
  double node_time_ms = 0, attributed_pct = 0, outside_runs_ms = 0;
  // % of the kernel time per mapping method (MapMethod order; written as the JSON object by_method_pct).
  std::vector<std::pair<std::string, double>> by_method;
  int64_t split_kernels = 0;
  std::vector<RunKernel> listed;   // kernels with no original node (inserted, or not mapped)
  std::vector<RunKernel> kernels;  // every kernel
};

// A unit of the report at the runtime's granularity with its measured time per forward: what
// `flopwise calibrate` fits (flopwise/calibration.h).
struct RunUnit {
  CostUnit unit;
  double ms = 0, min_ms = 0;  // the median (or mean) run's and the fastest run's; 0: not measured
  bool has_min = true;        // a report without "min_ms" (older writers): the fastest is not known
};

struct RunUnits {
  Granularity granularity = Granularity::Node;
  int64_t not_numbers = 0;  // units whose counts are not numbers, left out
  std::vector<RunUnit> units;
};

struct RunReport {
  std::string model, model_format, convention;
  RunRuntime runtime;
  RunStaticTotals static_totals;
  RunSummary summary;
  std::vector<RunScopeRow> scopes;
  std::vector<RunOpRow> op_types;
  double unattributed_ms = 0;                 // the forward time no op covered
  std::optional<RunAttribution> attribution;  // OnnxRuntime
  std::optional<RunUnits> measured_units;
  std::optional<VerifyResult> verify;  // LibTorch --verify
  // Read from a report without op rows (a LibTorch run written before they were kept).
  bool has_op_types = true;
};

// What the joins take from the command's options: the scope table's depth, --peak-tflops, and each static
// scope's roofline bound on --hardware (scope path -> ms; empty without --hardware).
struct RunJoinOptions {
  std::string model;    // the model's path as given
  std::string profile;  // --profile: the ONNX Runtime profile's or the trace's path
  int depth = -1;
  double peak_tflops = 0;
  std::map<std::string, double> bound_ms;
};

// A join's report, and every static scope's measured ms (the HTML page's latency metric; the report's rows
// stop at --depth).
struct RunJoin {
  RunReport report;
  std::map<std::string, double> scope_ms;
};

// A scope and its ancestors, root first: "a.b.c" -> "", "a", "a.b", "a.b.c".
std::vector<std::string> scope_ancestors(const std::string& scope);

// A LibTorch run: flopwise-runtime's response (flopwise.runtime/1) on the static report `rep`; each op's
// time counts to its scope and the scope's ancestors (a scope the static tree lacks: its nearest ancestor).
RunJoin join_runtime_response(const Report& rep, const nlohmann::json& response, const RunJoinOptions& o);

// An ONNX Runtime profile attributed on `model` (attribute_profile): the first run is the warm-up (reported
// apart), the rest are measured (medians); with one run, that run is both. `bindings`: the input shapes and
// dims read off the profile.
RunJoin join_ort_profile(const Model& model, const Report& rep, const OrtProfile& prof,
                         const ProfileAttribution& at, const std::vector<std::string>& bindings,
                         const RunJoinOptions& o);

// A PyTorch profiler trace on the static tree (match_trace_scopes): a scope's time is the GPU time of the
// kernels its ops launched, per step (the mean of the trace's steps); the forward latency is each step's GPU
// busy time. `matched_trace_scopes` gets how many of the trace's scopes were matched.
RunJoin join_torch_trace(const Report& rep, const TraceReport& tr, const RunJoinOptions& o,
                         size_t* matched_trace_scopes = nullptr);

}  // namespace flopwise
