// include/flopwise/ort_profile.h — ONNX Runtime profiles (SessionOptions.enable_profiling) read and joined
// with the static report: each profiled kernel mapped back to the original graph's nodes, its time split over
// the module scopes it covers.
//
// ORT writes one JSON array of Chrome-trace events: "Session" events (model_loading_uri,
// session_initialization, and one "model_run" per InferenceSession.run) and one "Node" event per executed
// kernel per run, named after the kernel's node with "_kernel_time" appended, with args op_name, provider,
// input_type_shape and output_type_shape. With graph optimisations on, ORT fuses and renames nodes; how each
// name is mapped back is in attribute_profile().
#pragma once

#include <map>
#include <string>
#include <vector>

#include "flopwise/cost.h"
#include "flopwise/ir.h"

namespace flopwise {

struct OrtKernel {
  std::string key;         // the event name without "_kernel_time": the node name in ORT's optimised graph
  std::string op;          // op_name: the kernel's op type ("FusedConv", "BiasGelu", "Conv")
  std::string provider;    // "CPUExecutionProvider", "CUDAExecutionProvider", ...
  std::vector<double> us;  // duration per run (microseconds; 0 in a run where it did not execute)
  std::vector<std::vector<int64_t>> in_shapes, out_shapes;  // from its first event; -1 where not given
};

struct OrtProfile {
  std::string path;
  std::vector<double> run_ms;      // wall time of each run (model_run events), in order
  std::vector<OrtKernel> kernels;  // in the execution order of their first run
  size_t events = 0;               // Node events read
  double outside_runs_us = 0;      // Node time outside every model_run (when runs are delimited)
};

// Reads an ORT profile. Throws InputError (one line) on a missing, truncated or non-JSON file, on JSON
// that is not a profile, and on a profile without node events.
OrtProfile read_ort_profile(const std::string& path);

// How a kernel was mapped back to the original graph.
enum class MapMethod {
  name,       // its name is a node's name (optimisations off, or a node ORT kept)
  output,     // named after an original value ("<value>_nchwc", NCHWc layout transformer)
  fusion,     // named "<node>/<Fusion>/" after the node the fusion started from (MatMulScaleFusion)
  structure,  // a name ORT made up ("BiasGelu_token_3"): matched by its place in the run and the graph
  inserted,   // a kernel ORT inserted (ReorderOutput, MemcpyToHost): counted to the node run before it
  none,       // not mapped: its time is listed as unattributed (and counted at the root)
};
const char* map_method_name(MapMethod m);

struct KernelAttribution {
  MapMethod method = MapMethod::none;
  std::vector<std::pair<int, double>> nodes;  // (node index in the main graph, share of the kernel's time)
};

struct ProfileAttribution {
  std::vector<KernelAttribution> kernels;  // parallel to OrtProfile::kernels
  // Per run: microseconds per scope path ("" is the root, which holds everything) and per op type of
  // the original graph; unattributed time counts at the root only.
  std::vector<std::map<std::string, double>> scope_us, scope_self_us, op_type_us;
  std::map<std::string, std::vector<std::string>> scope_providers;  // providers of the kernels in a scope
  std::map<std::string, int> scope_kernels;                         // kernels touching a scope, per run
  std::map<MapMethod, double> method_us;                            // over all runs
  double total_us = 0;                                              // all Node time, all runs
  int split_kernels = 0;  // kernels whose time was split over more than one node
};

// Maps every kernel of `p` onto `model`'s nodes and rolls their time up by module scope. `report` is
// build_report(model, ...) (its node costs split fused kernels). Throws InputError when the profile is
// of another model (kernels named after nodes the graph lacks, or with other output shapes).
ProfileAttribution attribute_profile(const Model& model, const Report& report, const OrtProfile& p);

// Shapes of the graph's inputs as the profile saw them: read off the kernels that cover a node consuming
// the input (`at`: the profile attributed on the model before its inputs were pinned). Inputs it cannot
// tell are absent.
std::map<std::string, std::vector<int64_t>> profile_input_shapes(const Model& model, const OrtProfile& p,
                                                                 const ProfileAttribution& at);

}  // namespace flopwise
