// src/writers/trace_serving.h — the parts of a trace's report that serving traces add (trace_serving.cc):
// the graph-replay join's line and object. Internal header of src/writers, included by trace_report.cc.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "flopwise/torch_trace.h"

namespace flopwise {

// "graph replay:" lines of the text report; nothing when the trace replayed no graph.
void write_graph_replay_text(std::ostream& os, const TraceReport& r);
// "time by kind:" GPU time per step in attention, MoE, GEMM, communication, other and idle, for a serving
// trace (one replayed from a graph, or with vLLM / sglang / aiter ops); nothing for any other trace.
void write_serving_kinds_text(std::ostream& os, const TraceReport& r);
// The "graph_replay" member of the JSON report (null when the trace replayed no graph).
nlohmann::ordered_json graph_replay_json(const TraceReport& r);
// The "serving" member: GPU time per step by kind (us) and the step annotations' tokens (null when not a
// serving trace).
nlohmann::ordered_json serving_json(const TraceReport& r);

}  // namespace flopwise
