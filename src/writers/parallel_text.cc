// src/writers/parallel_text.cc — the --parallel section (flopwise/parallel.h) as text in the reference
// profile's layout (world, data and model parallel sizes, per-GPU figures), as the JSON report's "parallel"
// member, and as markdown rows.
#include <cstdio>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "flopwise/json_text.h"
#include "flopwise/parallel.h"
#include "flopwise/writers.h"

namespace flopwise {

namespace {

std::string bytes_text(int64_t b) { return human(static_cast<double>(b)) + "B"; }

std::string percent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", 100 * f);
  return buf;
}

std::string step_seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s >= 1 ? "%.3f s" : "%.3f ms", s >= 1 ? s : s * 1e3);
  return buf;
}

const char* fsdp_name(Fsdp f) {
  static const char* names[] = {"off", "on", "hybrid"};
  return names[static_cast<int>(f)];
}

const char* recompute_name(Recompute r) {
  static const char* names[] = {"none", "selective", "full"};
  return names[static_cast<int>(r)];
}

void write_header(std::ostream& os, const ParallelReport& p) {
  const ParallelConfig& c = p.cfg;
  os << "\n-------------------------- Parallel training (--parallel) --------------------------\n";
  summary_line(os, "world size", std::to_string(c.world()));
  summary_line(os, "data parallel size", std::to_string(c.dp));
  summary_line(os, "model parallel size",
               std::to_string(c.tp * c.pp * c.cp) + " (tp " + std::to_string(c.tp) + " x pp " +
                   std::to_string(c.pp) + " x cp " + std::to_string(c.cp) + ")");
  summary_line(os, "expert parallel size", std::to_string(c.ep));
  summary_line(os, "sequence parallel", c.sp ? "on" : "off");
  summary_line(os, "ZeRO stage / FSDP",
               std::to_string(c.stage()) + " / " + fsdp_name(c.fsdp) + " (model states sharded over " +
                   std::to_string(c.state_shards()) + ")");
  summary_line(os, "precision", precision_name(p.precision));
  summary_line(os, "micro-batches / recompute",
               std::to_string(c.microbatches) + " / " + recompute_name(c.recompute));
  if (c.pp > 1) summary_line(os, "pipeline bubble (P-1)/(M+P-1)", percent(p.bubble));
  // the reference profile's per-GPU lines (DeepSpeed's: "of model" is per GPU x mp_size), of the largest rank
  const RankRole* most = nullptr;
  for (const RankRole& r : p.ranks)
    if (!most || r.params > most->params) most = &r;
  if (most) {
    const int64_t mp = c.tp * c.pp * c.cp;
    summary_line(os, "params per gpu", human(static_cast<double>(most->params)));
    summary_line(os, "params of model = params per GPU * mp_size",
                 human(static_cast<double>(most->params * mp)));
    summary_line(os, "fwd MACs per GPU", human(static_cast<double>(most->fwd_macs)));
    summary_line(os, "fwd flops per GPU", human(static_cast<double>(most->fwd_flops)));
    summary_line(os, "fwd flops of model = fwd flops per GPU * mp_size",
                 human(static_cast<double>(most->fwd_flops * mp)));
  }
  summary_line(os, "params of model", human(static_cast<double>(p.model_params)));
  summary_line(os, "DeepSpeed's model-state estimate",
               bytes_text(p.deepspeed_bytes) + " per GPU (largest layer " +
                   human(static_cast<double>(p.largest_layer)) + " params)");
}

void write_ranks(std::ostream& os, const ParallelReport& p) {
  os << "\nPer GPU (each stage's tensor-parallel ranks alike; activations per micro-batch):\n";
  os << std::left << std::setw(10) << "rank" << std::right;
  for (const char* h : {"params", "fwd MACs", "step FLOPs", "weights", "grads", "optimizer", "states",
                        "activations", "in flight", "peak"})
    os << std::setw(12) << h;
  os << "\n";
  for (const RankRole& r : p.ranks) {
    os << std::left << std::setw(10) << r.name << std::right << std::setw(12)
       << human(static_cast<double>(r.params)) << std::setw(12) << human(static_cast<double>(r.fwd_macs))
       << std::setw(12) << human(static_cast<double>(r.flops)) << std::setw(12) << bytes_text(r.weights_bytes)
       << std::setw(12) << bytes_text(r.grads_bytes) << std::setw(12) << bytes_text(r.optimizer_bytes)
       << std::setw(12) << bytes_text(r.model_states_bytes) << std::setw(12) << bytes_text(r.activation_bytes)
       << std::setw(12) << r.in_flight << std::setw(12) << bytes_text(r.peak_bytes) << "\n";
    if (p.cfg.pp > 1) os << "          " << r.first << " .. " << r.last << "\n";
  }
}

void write_comm(std::ostream& os, const ParallelReport& p) {
  os << "\nCollectives per step and GPU (message: the whole tensor; sent: per call on a ring, NCCL's "
        "busbw):\n";
  if (p.comm.empty()) os << "  none\n";
  for (const Collective& c : p.comm)
    os << "  " << std::left << std::setw(15) << c.collective << std::setw(13)
       << (c.group + "(" + std::to_string(c.group_size) + ")") << std::right << std::setw(6) << c.count
       << " x " << std::setw(10) << bytes_text(c.bytes) << "  sent " << std::setw(10)
       << bytes_text(c.sent_per_call()) << "  " << c.where << "\n";
}

void write_plan(std::ostream& os, const ParallelReport& p, size_t limit) {
  if (p.cfg.tp <= 1) return;
  os << "\nTensor-parallel plan (weighted products; --parallel-plan overrides):\n";
  for (size_t i = 0; i < p.plan.modules.size() && i < limit; ++i) {
    // the reason where the structure's rule did not decide it alone (GQA's few heads, a router, a plan file)
    const std::string& why = i < p.plan.module_reasons.size() ? p.plan.module_reasons[i] : std::string();
    const bool plain = why.empty() || why.rfind("its input", 0) == 0 || why.rfind("token embedding", 0) == 0;
    const std::string role = tp_role_name(p.plan.modules[i].second);
    os << "  " << std::left << std::setw(44) << p.plan.modules[i].first << std::right
       << (plain ? role : role + std::string(role.size() < 10 ? 10 - role.size() : 1, ' ') + why) << "\n";
  }
  if (p.plan.modules.size() > limit)
    os << "  ... " << p.plan.modules.size() - limit << " more (JSON: parallel.plan)\n";
}

void write_time(std::ostream& os, const ParallelReport& p) {
  const StepTime& t = p.time;
  if (!t.known) return;
  os << "\n";
  summary_line(os, "step time",
               step_seconds_text(t.step_s) + " (compute " + step_seconds_text(t.compute_s) + ", bubble " +
                   step_seconds_text(t.bubble_s) + ", exposed traffic " +
                   step_seconds_text(t.exposed_comm_s) + " of " + step_seconds_text(t.comm_s) + ")");
  summary_line(os, "MFU", percent(t.mfu));
  if (p.tokens > 0) summary_line(os, "tokens/s", human(t.tokens_per_s));
  if (t.max_microbatch >= 0)
    summary_line(os, "largest micro-batch that fits",
                 std::to_string(t.max_microbatch) + " x the analysed batch");
  summary_line(os, "overlap assumed", t.overlap);
}

}  // namespace

void write_parallel_text(std::ostream& os, const ParallelReport& p) {
  write_header(os, p);
  write_ranks(os, p);
  write_comm(os, p);
  write_plan(os, p, 24);
  write_time(os, p);
  for (const std::string& w : p.warnings) os << "warning: " << w << "\n";
}

std::string parallel_json_text(const ParallelReport& p) {
  using J = nlohmann::ordered_json;
  J doc;
  doc["spec"] = parallel_spec(p.cfg);
  doc["world_size"] = p.cfg.world();
  doc["zero_stage"] = p.cfg.stage();
  doc["precision"] = precision_name(p.precision);
  doc["bubble"] = p.bubble;
  doc["deepspeed_model_states_bytes"] = p.deepspeed_bytes;
  J ranks = J::array();
  for (const RankRole& r : p.ranks)
    ranks.push_back({{"name", r.name},
                     {"first", r.first},
                     {"last", r.last},
                     {"params", r.params},
                     {"macs", r.macs},
                     {"flops", r.flops},
                     {"fwd_macs", r.fwd_macs},
                     {"fwd_flops", r.fwd_flops},
                     {"weights_bytes", r.weights_bytes},
                     {"grads_bytes", r.grads_bytes},
                     {"optimizer_bytes", r.optimizer_bytes},
                     {"model_states_bytes", r.model_states_bytes},
                     {"activation_bytes", r.activation_bytes},
                     {"in_flight", r.in_flight},
                     {"peak_bytes", r.peak_bytes}});
  doc["ranks"] = ranks;
  J comm = J::array();
  for (const Collective& c : p.comm)
    comm.push_back({{"collective", c.collective},
                    {"group", c.group},
                    {"group_size", c.group_size},
                    {"count", c.count},
                    {"bytes", c.bytes},
                    {"sent_bytes", c.sent_per_call()},
                    {"where", c.where}});
  doc["comm"] = comm;
  J plan = J::array();
  for (size_t i = 0; i < p.plan.modules.size(); ++i)
    plan.push_back({{"scope", p.plan.modules[i].first},
                    {"style", tp_role_name(p.plan.modules[i].second)},
                    {"why", i < p.plan.module_reasons.size() ? p.plan.module_reasons[i] : ""}});
  doc["plan"] = plan;
  if (p.time.known)
    doc["time"] = {{"step_s", p.time.step_s},
                   {"compute_s", p.time.compute_s},
                   {"bubble_s", p.time.bubble_s},
                   {"comm_s", p.time.comm_s},
                   {"exposed_comm_s", p.time.exposed_comm_s},
                   {"mfu", p.time.mfu},
                   {"tokens_per_s", p.time.tokens_per_s},
                   {"max_microbatch", p.time.max_microbatch},
                   {"overlap", p.time.overlap}};
  doc["warnings"] = p.warnings;
  return json_text(doc, 2);
}

void write_parallel_markdown(std::ostream& os, const ParallelReport& p) {
  os << "\n## Parallel training (`--parallel " << parallel_spec(p.cfg) << "`)\n\n";
  os << "| rank | params | fwd+bwd FLOPs | weights | grads | optimizer | model states | activations | in "
        "flight | "
        "peak |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const RankRole& r : p.ranks)
    os << "| " << r.name << " | " << r.params << " | " << r.flops << " | " << r.weights_bytes << " | "
       << r.grads_bytes << " | " << r.optimizer_bytes << " | " << r.model_states_bytes << " | "
       << r.activation_bytes << " | " << r.in_flight << " | " << r.peak_bytes << " |\n";
  os << "\n| collective | group | count | bytes | what |\n|---|---|---:|---:|---|\n";
  for (const Collective& c : p.comm)
    os << "| " << c.collective << " | " << c.group << " (" << c.group_size << ") | " << c.count << " | "
       << c.bytes << " | " << c.where << " |\n";
}

std::vector<std::pair<std::string, std::string>> parallel_summary_rows(const ParallelReport& p) {
  std::vector<std::pair<std::string, std::string>> rows;
  rows.emplace_back("parallel (--parallel)",
                    parallel_spec(p.cfg) + ", world size " + std::to_string(p.cfg.world()));
  for (const RankRole& r : p.ranks)
    rows.emplace_back(r.name + " per GPU",
                      human(static_cast<double>(r.params)) + " params, " +
                          human(static_cast<double>(r.flops)) + " FLOPs a micro-batch, states " +
                          bytes_text(r.model_states_bytes) + ", activations " +
                          bytes_text(r.activation_bytes) + " x " + std::to_string(r.in_flight) + ", peak " +
                          bytes_text(r.peak_bytes));
  int64_t sent = 0;
  for (const Collective& c : p.comm) sent += c.sent_per_call() * c.count;
  rows.emplace_back("sent per GPU a step",
                    bytes_text(sent) + " in " + std::to_string(p.comm.size()) + " kinds of collective");
  if (p.time.known)
    rows.emplace_back("step time", step_seconds_text(p.time.step_s) + ", MFU " + percent(p.time.mfu));
  return rows;
}

void write_parallel_diff(std::ostream& os, const ParallelReport& a, const ParallelReport& b, bool markdown) {
  auto sent = [](const ParallelReport& p) {
    int64_t n = 0;
    for (const Collective& c : p.comm) n += c.sent_per_call() * c.count;
    return n;
  };
  os << (markdown ? "\n## Per GPU (`--parallel " : "\nPer GPU (--parallel ") << parallel_spec(a.cfg)
     << (markdown ? "`): A -> B\n\n| rank | figure | A | B | change |\n|---|---|---:|---:|---:|\n"
                  : "): A -> B\n");
  const size_t n = std::max(a.ranks.size(), b.ranks.size());
  for (size_t i = 0; i < n; ++i) {
    const RankRole none;
    const RankRole& x = i < a.ranks.size() ? a.ranks[i] : none;
    const RankRole& y = i < b.ranks.size() ? b.ranks[i] : none;
    const std::pair<const char*, std::pair<int64_t, int64_t>> rows[] = {
        {"params", {x.params, y.params}},
        {"step FLOPs", {x.flops, y.flops}},
        {"model states bytes", {x.model_states_bytes, y.model_states_bytes}},
        {"activation bytes", {x.activation_bytes, y.activation_bytes}},
        {"peak bytes", {x.peak_bytes, y.peak_bytes}},
        {"bytes sent a step", {i ? 0 : sent(a), i ? 0 : sent(b)}}};
    for (const auto& [what, v] : rows) {
      const std::string change =
          (v.second >= v.first ? "+" : "") + human(static_cast<double>(v.second - v.first));
      if (markdown)
        os << "| stage " << i << " | " << what << " | " << v.first << " | " << v.second << " | " << change
           << " |\n";
      else
        os << "  stage " << std::left << std::setw(4) << i << std::setw(20) << what << std::right
           << std::setw(12) << human(static_cast<double>(v.first)) << " -> " << std::setw(12)
           << human(static_cast<double>(v.second)) << "  " << change << "\n";
    }
  }
}

}  // namespace flopwise
