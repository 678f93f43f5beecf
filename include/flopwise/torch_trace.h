// include/flopwise/torch_trace.h — PyTorch profiler traces (Kineto's Chrome-trace JSON,
// `*.pt.trace.json[.gz]`): read in one streaming pass (no document in memory), joined with the static cost of
// every aten op (its recorded shapes and arguments through the TorchScript importer's aten table), and rolled
// up by module scope, op, kernel, profiler step and phase (forward, backward, optimizer).
//
// What the reader keeps of a trace, and how the analysis ties it together:
//   - cpu_op events (aten ops, autograd nodes, triton launches), user annotations (record_function labels,
//     ProfilerStep#N, Optimizer.step) and the `nn.Module: Class_N` python_function events of with_stack:
//     nested per thread by time, they give each op its module scope, its step and its phase; a TorchScript
//     run's ops carry their scope as "Module Hierarchy" ("TOP(ResNet)::forward.layer1(Sequential)::forward.")
//     and give the module tree its attribute names;
//   - kernel, gpu_memcpy and gpu_memset events: each belongs to the op that launched it, the innermost op
//     enclosing the runtime call its "correlation" names (else the op whose "External id" it carries); its
//     time is counted to that op's owner (see analyse_trace);
//   - fwdbwd flows: a backward autograd node takes the module scope of the forward op that recorded it;
//   - [memory] instant events: the peak of "Total Allocated" per device;
//   - deviceProperties: the GPU's name, matched to the roofline table;
//   - when asked (TraceReadOptions::census), what the census's communication breakdown reads of the GPU side
//     (flopwise/trace_census.h): the text report's communication section, from the same read.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "flopwise/aten_call.h"
#include "flopwise/roofline.h"
#include "flopwise/trace_census.h"

namespace flopwise {

namespace census {
class CensusFacts;  // src/measured/trace_census_facts.h
}

// The static cost of one call: from the cost rules where the aten table lowers it, else why not.
struct AtenCost {
  bool costed = false;
  int64_t macs = 0, flops = 0, bytes = 0;
  std::string dtype;  // of its largest contraction, else its first input ("float32", "float16")
  std::string why;    // not costed: the reason in a few words
};

// Costs a batch of distinct calls (index for index). The commands give analyse.h's cost_aten_calls (the
// aten table with torch's schemas, no LibTorch); a call it cannot price comes back not costed, with the
// reason.
using AtenCoster = std::function<std::vector<AtenCost>(const std::vector<AtenCall>&)>;

// The coster of src/measured/trace_price.cc: each call through the aten table, no LibTorch.
std::vector<AtenCost> cost_aten_calls(const std::vector<AtenCall>& calls);

// What the aten table does not price but the trace's own facts do: inductor's triton kernels
// (cost_inductor_kernel) and the tagged KV attention (MACs 2 * Hq * D * sum sq*sk; bytes of q, the output and
// the KV read). nullopt for any other call.
std::optional<AtenCost> cost_measured_call(const AtenCall& call, const AtenCoster& cost);

// A triton kernel of torch.compile's inductor (its launch's cpu_op "triton_{poi,red,per}_fused_<ops>_<n>"):
// bytes from its pointer arguments, FLOPs of the aten ops its name lists (through `cost`) over its element
// count (src/measured/inductor_kernels.cc); a triton attention kernel launched by name (SageAttention's
// sage_fwd) as SDPA of its q, k, v; nullopt for any other call, or one whose counts are not recorded.
std::optional<AtenCost> cost_inductor_kernel(const AtenCall& call, const AtenCoster& cost);

enum class TraceKind : uint8_t {
  CpuOp,       // cat cpu_op (and operator, the older name)
  Annotation,  // user_annotation: record_function labels, ProfilerStep#N, Optimizer.step#...
  Module,      // python_function "nn.Module: Class_N"
  Kernel,      // kernel
  Memcpy,      // gpu_memcpy
  Memset,      // gpu_memset
};

struct TraceEvent {        // 56 bytes: millions of them
  double ts = 0, dur = 0;  // microseconds
  int64_t ext = -1;        // "External id": an op's own; a kernel's launching op's
  int64_t corr = -1;       // GPU events: "correlation", the id of the runtime call that launched it
  uint32_t name = 0;       // index in TorchTrace::names
  uint32_t thread = 0;     // index in TorchTrace::threads (CPU: pid/tid; GPU: device/stream)
  int32_t call = -1;       // index in TorchTrace::calls (an op with recorded shapes)
  int32_t hier = -1;       // an op of a TorchScript run: its "Module Hierarchy" (index in names)
  TraceKind kind = TraceKind::CpuOp;
  bool replayed =
      false;  // an op copied from a graph's capture (graph_replay.h): its host time is not counted
};

// A CUDA (or HIP) runtime or driver call: the launch a GPU event's correlation names; the op it ran in is the
// innermost op enclosing it on its thread.
// A launch recorded while a stream was being captured into a graph names its kernel ("kernel" arg, as
// ROCm's runtime events carry it) but no kernel event follows it: the graph's replays run that kernel.
enum class LaunchKind : uint8_t { Call, GraphLaunch, BeginCapture, EndCapture };
struct TraceLaunch {
  int64_t corr = -1;
  uint32_t thread = 0;
  double ts = 0;
  uint32_t kernel = UINT32_MAX;  // the "kernel" it launches (index in TorchTrace::names), when recorded
  LaunchKind kind = LaunchKind::Call;
  bool census = false;  // read with TraceReadOptions::census: HTA counts it (a numeric dur >= 0, no stream)
};

// Kernels a CUDA/HIP graph replayed (their correlation names a cudaGraphLaunch / hipGraphLaunch: no op above
// them), and how many took the op of the kernel at the same position in a captured graph (graph_replay.h).
struct GraphReplaySummary {
  int64_t graph_launches = 0, replayed = 0, matched = 0;  // replayed GPU events; matched to a capture
  double replayed_us = 0, matched_us = 0;
  int64_t graphs_captured = 0;        // graphs found in the capture traces
  std::vector<std::string> captures;  // "FILE (batch size 32, FULL): 1 graph(s)"
  std::vector<std::string> notes;     // unmatched launches and why
};

// A serving engine's step, from its annotation (vLLM's and sglang's "execute_<n>_context_<c>(sq..sk..sqsq..
// sqsk..)_generation_<g>(...)"): tokens and the sums over its sequences that attention over a KV cache costs.
struct ServingStep {
  std::string name;
  int64_t query_tokens = 0, context_tokens = 0, generated_tokens = 0;  // sq: prefill's and decode's
  int64_t kv_tokens = 0;                                               // sk summed over the sequences
  int64_t sq_sk = 0;                                                   // sum of sq * sk
};

struct TorchTrace {
  std::string path;
  std::vector<std::string> names;     // interned event names
  std::vector<std::string> threads;   // "pid/tid" as written
  std::vector<AtenCall> calls;        // distinct (op, types, dims, concrete)
  std::vector<TraceEvent> cpu;        // CpuOp, Annotation, Module
  std::vector<TraceEvent> gpu;        // Kernel, Memcpy, Memset
  std::vector<TraceLaunch> launches;  // cuda_runtime / cuda_driver calls with a correlation id
  std::vector<std::pair<int64_t, double>> flow_starts, flow_ends;  // fwdbwd: (id, ts) on the event's thread
  std::vector<uint32_t> flow_start_thread, flow_end_thread;
  std::string device;                      // deviceProperties[0].name ("NVIDIA H200"); "" when absent
  int64_t device_memory = 0;               // its totalGlobalMem
  std::map<int64_t, int64_t> memory_peak;  // device id (-1: CPU) -> peak "Total Allocated" bytes
  int64_t events = 0;                      // trace events read
  int read_parts = 1;                      // threads whose reading of a part of the file was kept
  std::vector<std::string> warnings;
  std::optional<GraphReplaySummary> graph_replay;  // set where GPU events were replayed from a graph
  std::vector<ServingStep> serving_steps;          // from step annotations (tag_kv_attention)
  std::map<uint32_t, double> replay_thread_ts;  // a graph replay's thread (graph_replay.h) -> its launch's ts
  // Read with TraceReadOptions::census: what the census reads beyond these records (src/measured).
  std::shared_ptr<const census::CensusFacts> census;
};

struct TraceReadOptions {
  // A .gz that inflates to more than this many times its own size is refused as a gzip bomb (real traces
  // compress 5-30x).
  int64_t max_gzip_ratio = 1000;
  // Also keep what the census reads of the GPU side (TorchTrace::census; a few records beyond the reader's
  // own), for trace_communication.
  bool census = false;
};

// Reads a trace (JSON, or gzip-compressed JSON: detected by its magic bytes). Throws InputError (one line) on
// a missing, truncated, non-JSON or gzip-bomb file and on JSON that is not a PyTorch profiler trace.
TorchTrace read_torch_trace(const std::string& path, const TraceReadOptions& opts = {});

// A trace read with TraceReadOptions::census, as one rank of a run: what
// summarise_ranks({rank_breakdown(read_trace_census(path), &c)}, c) gives, from the same read (nullopt when
// read without). Its GPU side is t.gpu as read: call it before join_capture_traces re-points the kernels a
// graph replayed.
std::optional<RankRun> trace_communication(const TorchTrace& t);

// Whether `path` (JSON or gzip) starts like a PyTorch trace: a JSON document whose first 64 KiB name
// "traceEvents" and a Kineto field. Never throws.
bool looks_like_torch_trace(const std::string& path);

// The step annotations of `t` into t.serving_steps, and each attention op of a serving engine inside one
// (vllm::unified_attention*, sglang's paged attention, aiter::mha_batch_prefill) re-pointed at a call
// "flopwise::kv_attention"(q, k, sum sq*sk, sum sk) that cost_measured_call prices (serving_steps.cc).
void tag_kv_attention(TorchTrace& t);

// One row of a roll-up (a module scope, an op name, a kernel name).
struct TraceRow {
  std::string name;
  int64_t calls = 0;
  double cpu_us = 0;  // host time of the op events (scopes: of the ops counted there, not nested twice)
  double gpu_us = 0;  // kernel, memcpy and memset time attributed
  int64_t kernels = 0;
  int64_t macs = 0, flops = 0, bytes = 0;  // of the costed calls
  int64_t uncosted = 0;                    // calls whose cost is not known
  double uncosted_gpu_us = 0;              // their GPU time
  bool overflow = false;                   // a sum passed int64: counts unknown
  double bound_us = 0;                     // roofline bound of the costed calls on the trace's hardware
  double compute_bound_us = 0;             // the part of bound_us in compute-bound calls
  std::string dtype;                       // op and kernel rows: the dtype of its costed calls' MACs
  std::string why;                         // uncosted rows: why the cost rules could not price it
};

struct TraceScope {
  std::string path;   // "ResNet_0.Sequential_0.BasicBlock_1": the nn.Module stack's names, "" the root
  std::string label;  // the last level
  int depth = 0;
  TraceRow row;  // totals of the scope and everything under it
  double self_gpu_us = 0;
  std::vector<int> children;
};

struct TraceStep {
  std::string name;        // "ProfilerStep#3"; "whole trace" without steps
  double cpu_us = 0;       // the annotation's duration
  double gpu_span_us = 0;  // first kernel start to last kernel end of its kernels
  double gpu_busy_us = 0;  // union of its kernels' intervals
};

struct TraceReport {
  std::string path;
  std::string device;          // as the trace names it
  std::optional<Hardware> hw;  // the roofline device (matched, or --hardware)
  std::string hw_note;         // how it was matched, or why not
  std::vector<TraceStep> steps;
  std::map<std::string, TraceRow> phases;  // "forward", "backward", "optimizer", "other"
  std::vector<TraceScope> scopes;          // pre-order; [0] is the root (the whole trace)
  std::vector<TraceRow> ops;               // by op name: the costed (outermost) ops and the uncosted ones
  std::vector<TraceRow> kernels;           // by kernel name
  std::vector<TraceRow> uncosted;          // op names not costed (with why), by GPU time
  TraceRow total;
  double gpu_kernel_us = 0;        // sum of every kernel/memcpy/memset event's duration
  double unattributed_gpu_us = 0;  // of GPU events whose launching op is absent
  int64_t unattributed_kernels = 0;
  double gpu_busy_us = 0, gpu_span_us = 0;  // over the whole trace
  std::map<int64_t, int64_t> memory_peak;
  int64_t events = 0, cpu_ops = 0, gpu_events = 0, distinct_calls = 0;
  std::vector<std::string> warnings;
  std::optional<GraphReplaySummary> graph_replay;
  std::vector<ServingStep> serving_steps;
  std::optional<RankRun> communication;  // with TraceOptions::communication
};

struct TraceOptions {
  std::optional<Hardware> hardware;  // --hardware; else matched from the trace's device name
  // --capture: a graph capture trace, or a folder with execution_details.json naming them; "" looks for
  // capture_traces/execution_details.json beside the trace; "none" joins nothing (graph_replay.h).
  std::string capture;
  bool communication = false;  // TraceReport::communication: the trace's GPU time as HTA breaks a rank down
};

TraceReport analyse_trace(const TorchTrace& t, const AtenCoster& cost, const TraceOptions& opts = {});

// What the commands call (src/measured/trace_price.cc): read `path`, price its calls with cost_aten_calls,
// analyse. `timings`, when given, gets the seconds spent reading, pricing and in the rest of the analysis.
struct TraceTimings {
  double read_s = 0, price_s = 0, analyse_s = 0;
  size_t calls = 0;    // distinct calls priced
  int read_parts = 1;  // TorchTrace::read_parts
};
TraceReport analyse_trace_file(const std::string& path, const TraceOptions& opts = {},
                               TraceTimings* timings = nullptr);

// The class of an nn.Module scope label Kineto writes: "Conv2d_3" -> "Conv2d"; "" for a label of no class
// (a record_function label, a TorchScript attribute name).
std::string trace_scope_class(const std::string& label);

// The trace's module scopes matched to a model's static module tree (flopwise run MODEL --profile TRACE):
// static scope name ("" the root, "layer1.0.conv1") -> indices of TraceReport::scopes. A TorchScript run's
// scopes carry the attribute names (matched by name); an eager run's carry Class_N (matched by class, in call
// order, level by level from the scope of the tree's root class). Trace scopes left unmatched count to their
// nearest matched ancestor (their time is inside its inclusive time).
std::map<std::string, std::vector<int>> match_trace_scopes(const TraceReport& r, const ScopeNode& root);

// The roofline device of a trace's GPU name ("NVIDIA H200", "NVIDIA A100-SXM4-80GB", "Tesla V100-SXM2-16GB");
// nullopt when the table has none. `note` says which row and why.
std::optional<Hardware> match_trace_hardware(const std::string& device, int64_t memory, std::string* note);

}  // namespace flopwise
