// src/writers/trace_serving.cc — what serving traces add to a trace's report (trace_serving.h): how many
// kernels replayed from CUDA/HIP graphs took their captured op, and from which capture traces.
#include "trace_serving.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <string_view>

namespace flopwise {

namespace {

std::string replay_pct(double part, double whole) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f %%", whole > 0 ? 100.0 * part / whole : 0.0);
  return b;
}

// What an op's GPU time is spent on, by a fragment of its name; the first row that matches wins.
enum ServingKind { kAttention, kMoE, kGemm, kCommunication, kOtherKind, kServingKinds };
constexpr const char* kServingKindName[kServingKinds] = {"attention", "MoE", "GEMM", "communication",
                                                         "other"};
struct ServingKindRow {
  std::string_view fragment;
  ServingKind kind;
};
constexpr std::array<ServingKindRow, 24> kServingKindRows = {{
    {"c10d::", kCommunication},
    {"nccl", kCommunication},
    {"rccl", kCommunication},
    {"all_reduce", kCommunication},
    {"allreduce", kCommunication},
    {"all_gather", kCommunication},
    {"allgather", kCommunication},
    {"reduce_scatter", kCommunication},
    {"symm_mem::", kCommunication},
    {"moe", kMoE},
    {"grouped_mm", kMoE},
    {"expert", kMoE},
    {"attention", kAttention},
    {"attn", kAttention},
    {"mha", kAttention},
    {"sage_", kAttention},
    {"fmha", kAttention},
    {"linear", kGemm},
    {"gemm", kGemm},
    {"matmul", kGemm},
    {"::mm", kGemm},
    {"addmm", kGemm},
    {"bmm", kGemm},
    {"_scaled_mm", kGemm},
}};
// Engines whose ops make a trace a serving one (the kind line is printed for it).
constexpr std::array<std::string_view, 5> kServingPrefixes = {"vllm::", "sglang",
                                                              "sgl_kernel::", "aiter::", "_C::"};

ServingKind serving_kind_of(const std::string& op) {
  for (const auto& row : kServingKindRows)
    if (op.find(row.fragment) != std::string::npos) return row.kind;
  return kOtherKind;
}

bool serving_trace(const TraceReport& r) {
  if (r.graph_replay) return true;
  return std::any_of(r.ops.begin(), r.ops.end(), [](const TraceRow& o) {
    return std::any_of(kServingPrefixes.begin(), kServingPrefixes.end(),
                       [&](std::string_view p) { return o.name.rfind(p, 0) == 0; });
  });
}

// GPU time per step in each kind (ms), and the idle time of the GPU's span.
std::array<double, kServingKinds + 1> serving_kind_ms(const TraceReport& r) {
  std::array<double, kServingKinds + 1> ms{};
  const double steps = static_cast<double>(std::max<size_t>(1, r.steps.size()));
  for (const TraceRow& o : r.ops) ms[serving_kind_of(o.name)] += o.gpu_us / 1000 / steps;
  ms[kServingKinds] = std::max(0.0, r.gpu_span_us - r.gpu_busy_us) / 1000 / steps;
  return ms;
}

}  // namespace

void write_serving_kinds_text(std::ostream& os, const TraceReport& r) {
  if (!serving_trace(r)) return;
  for (const ServingStep& s : r.serving_steps)
    os << "tokens:         " << s.query_tokens << " (context " << s.context_tokens << ", generated "
       << s.generated_tokens << "), KV tokens " << s.kv_tokens << ", sum sq*sk " << s.sq_sk
       << " (step annotation)\n";
  std::array<double, kServingKinds + 1> ms = serving_kind_ms(r);
  char b[64];
  os << "time by kind:   per step, GPU ms";
  for (int k = 0; k < kServingKinds; ++k) {
    std::snprintf(b, sizeof b, "%s %.3f", kServingKindName[k], ms[static_cast<size_t>(k)]);
    os << (k ? ", " : " ") << b;
  }
  std::snprintf(b, sizeof b, "%.3f", ms[kServingKinds]);
  os << "; idle " << b << " (by op name; unattributed kernels in none)\n";
}

void write_graph_replay_text(std::ostream& os, const TraceReport& r) {
  if (!r.graph_replay) return;
  const GraphReplaySummary& g = *r.graph_replay;
  os << "graph replay:   " << g.replayed << " GPU events replayed by " << g.graph_launches
     << " graph launch(es); " << g.matched << " matched to their captured op ("
     << replay_pct(g.matched_us, g.replayed_us) << " of their time)";
  if (g.captures.empty()) os << "; no capture trace (--capture DIR): unpriced";
  os << "\n";
  for (const auto& c : g.captures) os << "  capture:      " << c << "\n";
  for (const auto& n : g.notes) os << "  not matched:  " << n << "\n";
}

nlohmann::ordered_json graph_replay_json(const TraceReport& r) {
  if (!r.graph_replay) return nullptr;
  const GraphReplaySummary& g = *r.graph_replay;
  return {{"graph_launches", g.graph_launches},
          {"replayed", g.replayed},
          {"matched", g.matched},
          {"replayed_us", g.replayed_us},
          {"matched_us", g.matched_us},
          {"graphs_captured", g.graphs_captured},
          {"captures", g.captures},
          {"notes", g.notes}};
}

nlohmann::ordered_json serving_json(const TraceReport& r) {
  if (!serving_trace(r)) return nullptr;
  nlohmann::ordered_json j, kinds, steps = nlohmann::ordered_json::array();
  std::array<double, kServingKinds + 1> ms = serving_kind_ms(r);
  for (int k = 0; k < kServingKinds; ++k) kinds[kServingKindName[k]] = ms[static_cast<size_t>(k)] * 1000;
  kinds["idle"] = ms[kServingKinds] * 1000;
  for (const ServingStep& s : r.serving_steps)
    steps.push_back({{"name", s.name},
                     {"query_tokens", s.query_tokens},
                     {"context_tokens", s.context_tokens},
                     {"generated_tokens", s.generated_tokens},
                     {"kv_tokens", s.kv_tokens},
                     {"sq_sk", s.sq_sk}});
  j["gpu_us_per_step_by_kind"] = kinds;
  j["steps"] = steps;
  return j;
}

}  // namespace flopwise
