// src/analysis/parallel_config.cc — the --parallel spec and its checks, the ZeRO paper's model states per
// rank, DeepSpeed's estimators, a plan file (flopwise/parallel.h).
#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "flopwise/errors.h"
#include "flopwise/parallel.h"
#include "parallel_detail.h"

namespace flopwise {

using parallel_detail::ceil_div;

namespace {

[[noreturn]] void parallel_usage(const std::string& what) { throw UsageError("--parallel: " + what); }

int64_t spec_positive(const std::string& key, const std::string& v) {
  int64_t x = 0;
  const char* end = v.data() + v.size();
  auto [p, ec] = std::from_chars(v.data(), end, x);
  if (ec != std::errc() || p != end || x <= 0 || x > (int64_t{1} << 24))
    parallel_usage(key + "='" + v + "' is not a positive integer (at most 16777216)");
  return x;
}

// A word of `words` (index), else a usage error listing them.
size_t word_of(const std::string& key, const std::string& v, std::initializer_list<const char*> words) {
  size_t i = 0;
  std::string list;
  for (const char* w : words) {
    if (v == w) return i;
    list += (i++ ? " | " : "") + std::string(w);
  }
  parallel_usage(key + "='" + v + "' is not one of " + list);
}

void set_key(ParallelConfig& c, const std::string& key, const std::string& v) {
  if (key == "dp")
    c.dp = spec_positive(key, v);
  else if (key == "tp")
    c.tp = spec_positive(key, v);
  else if (key == "pp")
    c.pp = spec_positive(key, v);
  else if (key == "ep")
    c.ep = spec_positive(key, v);
  else if (key == "cp")
    c.cp = spec_positive(key, v);
  else if (key == "shard")
    c.shard = spec_positive(key, v);
  else if (key == "microbatches")
    c.microbatches = spec_positive(key, v);
  else if (key == "sp")
    c.sp = word_of(key, v, {"off", "on"}) == 1;
  else if (key == "zero")
    c.zero = static_cast<int>(word_of(key, v, {"0", "1", "2", "3"}));
  else if (key == "fsdp")
    c.fsdp = static_cast<Fsdp>(word_of(key, v, {"off", "on", "hybrid"}));
  else if (key == "recompute")
    c.recompute = static_cast<Recompute>(word_of(key, v, {"none", "selective", "full"}));
  else if (key == "stages") {
    std::stringstream ss(v);
    for (std::string s; std::getline(ss, s, '|');)
      if (!s.empty()) c.stage_starts.push_back(s);
  } else
    parallel_usage("unknown key '" + key +
                   "' (dp, tp, pp, ep, cp, sp, zero, fsdp, shard, microbatches, recompute, stages)");
}

void check_spec(const ParallelConfig& c) {
  if (c.dp % c.ep)
    parallel_usage("ep=" + std::to_string(c.ep) + " does not divide dp=" + std::to_string(c.dp));
  if (c.sp && c.tp == 1)
    parallel_usage("sp=on needs tp > 1 (sequence parallelism splits what tensor parallelism replicates)");
  if (c.fsdp != Fsdp::Off && c.zero != 0)
    parallel_usage("zero and fsdp both given: fsdp is ZeRO-3's sharding, give one");
  if (c.fsdp == Fsdp::Hybrid && c.dp % std::min(c.shard, c.dp))
    parallel_usage("shard=" + std::to_string(c.shard) + " does not divide dp=" + std::to_string(c.dp));
  if (!c.stage_starts.empty() && static_cast<int64_t>(c.stage_starts.size()) != c.pp - 1)
    parallel_usage("stages names " + std::to_string(c.stage_starts.size()) +
                   " scope(s); pp=" + std::to_string(c.pp) + " needs " + std::to_string(c.pp - 1));
  int64_t w = 1;
  for (int64_t f : {c.dp, c.tp, c.pp, c.cp})
    if (__builtin_mul_overflow(w, f, &w) || w > (int64_t{1} << 24))
      parallel_usage("world size dp*tp*pp*cp is past 16777216");
}

}  // namespace

int64_t ParallelConfig::world() const { return dp * tp * pp * cp; }

int ParallelConfig::stage() const { return fsdp != Fsdp::Off ? 3 : zero; }

int64_t ParallelConfig::state_shards() const {
  if (stage() == 0) return 1;
  return fsdp == Fsdp::Hybrid ? std::min(shard, dp) : dp;
}

ParallelConfig parse_parallel(const std::string& spec) {
  ParallelConfig c;
  if (spec.empty()) parallel_usage("empty (dp=8,tp=2,...)");
  std::stringstream ss(spec);
  for (std::string item; std::getline(ss, item, ',');) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      parallel_usage("'" + item + "' is not KEY=VALUE (dp=8,tp=2,...)");
    set_key(c, item.substr(0, eq), item.substr(eq + 1));
  }
  check_spec(c);
  return c;
}

std::string parallel_spec(const ParallelConfig& c) {
  static const char* fsdp[] = {"off", "on", "hybrid"};
  static const char* rec[] = {"none", "selective", "full"};
  std::string s = "dp=" + std::to_string(c.dp) + ",tp=" + std::to_string(c.tp) +
                  ",pp=" + std::to_string(c.pp) + ",ep=" + std::to_string(c.ep) +
                  ",cp=" + std::to_string(c.cp) + ",sp=" + (c.sp ? "on" : "off") +
                  ",zero=" + std::to_string(c.zero) + ",fsdp=" + fsdp[static_cast<int>(c.fsdp)];
  if (c.fsdp == Fsdp::Hybrid) s += ",shard=" + std::to_string(c.shard);
  return s + ",microbatches=" + std::to_string(c.microbatches) +
         ",recompute=" + rec[static_cast<int>(c.recompute)];
}

ModelStates zero_model_states(int64_t params, int stage, int64_t n, int64_t weight_bytes, int64_t grad_bytes,
                              int64_t k) {
  ModelStates m;
  m.weights = params * weight_bytes;
  m.grads = params * grad_bytes;
  m.optimizer = params * k;
  if (stage >= 1) m.optimizer = ceil_div(m.optimizer, n);
  if (stage >= 2) m.grads = ceil_div(m.grads, n);
  if (stage >= 3) m.weights = ceil_div(m.weights, n);
  return m;
}

int64_t deepspeed_estimate(int64_t params, int64_t largest_layer, int stage, int64_t n) {
  // int(16 * total_params / total_gpus), as DeepSpeed truncates
  if (stage >= 3) return 4 * largest_layer + 18 * params / n;
  return 4 * params + 16 * params / n;
}

const char* tp_role_name(TpRole r) {
  static const char* names[] = {"replicate", "colwise", "rowwise", "vocab", "sharded"};
  return names[static_cast<int>(r)];
}

TpRole parse_tp_role(const std::string& word) {
  static const std::pair<const char*, TpRole> words[] = {{"colwise", TpRole::Colwise},
                                                         {"rowwise", TpRole::Rowwise},
                                                         {"sequence", TpRole::Replicated},
                                                         {"replicate", TpRole::Replicated}};
  for (const auto& [w, r] : words)
    if (word == w) return r;
  throw UsageError("--parallel-plan: '" + word + "' is not one of colwise, rowwise, sequence, replicate");
}

std::vector<PlanRule> read_plan_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("--parallel-plan: cannot read '" + path + "'");
  std::vector<PlanRule> rules;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    line = line.substr(0, line.find('#'));
    std::stringstream ss(line);
    std::string glob, style, extra;
    if (!(ss >> glob)) continue;
    if (!(ss >> style) || (ss >> extra))
      throw UsageError("--parallel-plan: " + path + ":" + std::to_string(line_no) +
                       ": expected 'SCOPE_GLOB colwise|rowwise|sequence|replicate'");
    rules.push_back({glob, parse_tp_role(style)});
  }
  return rules;
}

}  // namespace flopwise
