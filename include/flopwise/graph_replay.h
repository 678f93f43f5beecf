// include/flopwise/graph_replay.h — kernels replayed from CUDA/HIP graphs tied back to the ops that recorded
// them. A serving engine (vLLM, sglang, xDiT) captures a step once into a graph and replays it: the replay's
// kernels have no CPU op above them, only the cudaGraphLaunch / hipGraphLaunch their correlation names. The
// capture trace (the profiler run while the graph was recorded) has every op with its shapes, and each launch
// it made with the kernel's name but no kernel event (a captured launch does not run). Each replayed kernel
// takes the op, shapes, scope and FLOPs of the captured launch at the same position of the same graph.
#pragma once

#include <string>
#include <vector>

#include "flopwise/torch_trace.h"

namespace flopwise {

// A capture trace, with what execution_details.json says of it.
struct CaptureTrace {
  std::string file;
  int64_t batch_size = -1;  // -1: not given
  std::string mode;         // "FULL", "PIECEWISE", "DECODE" ...
  TorchTrace trace;
};

// The capture traces `where` names: a capture trace itself, or a folder whose execution_details.json lists
// them ([{"file": ..., "batch_size": 32, "mode": "FULL"}]; a folder without one: each *.json[.gz] in it).
// Throws InputError on a missing path, bad JSON or a listed file that cannot be read.
std::vector<CaptureTrace> read_capture_traces(const std::string& where);

// Where the capture traces of the trace at `trace_path` are found without --capture: the folder
// capture_traces/ beside it when it holds execution_details.json; "" when there is none.
std::string capture_folder_beside(const std::string& trace_path);

// Joins the replayed kernels of `exec` to the captured graphs: the graphs of each capture are its launches
// between hipStreamBeginCapture and hipStreamEndCapture (one graph when those are absent) that no GPU event
// ran; a graph launch's kernels, in time order, take the graph whose kernel names match them in order (the
// next graph in capture order first, as piecewise graphs replay in that order). Each matched kernel is
// re-pointed at a copy of the capture's ops that enclose its launch, on a thread of its own placed at the
// graph launch's time and marked `replayed` (their host time is not counted). Returns what was matched;
// empty (graph_launches 0) when no GPU event was replayed from a graph.
GraphReplaySummary join_graph_replays(TorchTrace& exec, const std::vector<CaptureTrace>& captures);

// What analyse_trace_file calls after reading a trace with graph launches: `capture` as TraceOptions::capture
// says ("" the folder beside, "none" nothing); sets t.graph_replay (unmatched kernels stay with the graph
// launch, unpriced). A folder beside that cannot be read is a warning; one --capture names throws InputError.
void join_capture_traces(TorchTrace& t, const std::string& capture);

}  // namespace flopwise
