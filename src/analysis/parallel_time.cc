// src/analysis/parallel_time.cc — the step time of --parallel on a device (flopwise/parallel.h): each rank's
// compute from the roofline, each collective from the interconnect (interconnect.def; ring factors as NCCL's
// busbw), the pipeline bubble, MFU and tokens per second, and the largest micro-batch the memory holds.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "parallel_detail.h"

namespace flopwise {

namespace {

struct Link {
  const char* device;
  double memory_gb, per_node, intra_gbs, inter_gbs, latency_us;
  const char* source;
};

constexpr Link kLinks[] = {
#define LINK(device, mem, node, intra, inter, lat, src) {device, mem, node, intra, inter, lat, src},
#include "interconnect.def"
#undef LINK
};

const Link* link_of(const std::string& device) {
  for (const Link& l : kLinks)
    if (device == l.device) return &l;
  return nullptr;
}

// The stride between a group's ranks in Megatron's order (tp innermost, then cp, dp, pp): a group stays in a
// node when stride x size fits its GPUs.
int64_t stride_of(const std::string& group, const ParallelConfig& c) {
  if (group == "tp") return 1;
  if (group == "cp") return c.tp;
  if (group == "dp" || group == "ep" || group == "dp-shard") return c.tp * c.cp;
  if (group == "dp-replicate") return c.tp * c.cp * c.shard;
  return c.tp * c.cp * c.dp;  // pp
}

double collective_seconds(const Collective& col, const ParallelConfig& c, const Link& l) {
  const bool intra = static_cast<double>(stride_of(col.group, c) * col.group_size) <= l.per_node;
  const double bw = (intra ? l.intra_gbs : l.inter_gbs) * 1e9;
  return static_cast<double>(col.count) *
         (l.latency_us * 1e-6 + static_cast<double>(col.sent_per_call()) / bw);
}

// The stage a collective belongs to ("stage 3: gradients" -> 3), or `n` for one of every rank.
size_t stage_of(const std::string& where, size_t n) {
  if (where.rfind("stage ", 0) != 0 || where.find(':') == std::string::npos) return n;
  const size_t k = static_cast<size_t>(std::atoll(where.c_str() + 6));
  return k < n ? k : n;
}

}  // namespace

namespace parallel_detail {

double node_seconds(const Report& report, size_t i, const Hardware& hw, const NodeShare& s) {
  NodeBound nb;
  if (!node_bound(report, i, hw, &nb)) return 0;
  const double share =
      nb.flops > 0 ? static_cast<double>(s.fwd_flops) / nb.flops : 1.0 / static_cast<double>(s.keep_div);
  return nb.seconds * share;
}

StepTime step_time(const ParallelReport& p, const Hardware& hw) {
  StepTime t;
  const Link* l = link_of(hw.name);
  if (!l || p.ranks.empty()) return t;
  const ParallelConfig& c = p.cfg;
  const double m = static_cast<double>(c.microbatches);
  double slowest = 0;
  for (const RankRole& r : p.ranks) slowest = std::max(slowest, r.compute_seconds);
  t.compute_s = slowest * m;
  t.bubble_s = slowest * static_cast<double>(c.pp - 1);
  // Per stage: its own collectives ("stage k: ...") and the ones every rank has; the slowest stage counts.
  std::vector<double> exposed(p.ranks.size(), 0), hidden(p.ranks.size(), 0);
  for (const Collective& col : p.comm) {
    const double s = collective_seconds(col, c, *l);
    const bool overlapped = col.group == "dp" || col.group == "dp-shard" || col.group == "dp-replicate";
    const size_t k = stage_of(col.where, p.ranks.size());
    for (size_t i = 0; i < p.ranks.size(); ++i)
      if (k == p.ranks.size() || k == i) (overlapped ? hidden : exposed)[i] += s;
  }
  for (size_t i = 0; i < p.ranks.size();
       ++i) {  // data-parallel traffic overlapped with the backward's compute
    t.comm_s = std::max(t.comm_s, exposed[i] + hidden[i]);
    t.exposed_comm_s =
        std::max(t.exposed_comm_s, exposed[i] + std::max(0.0, hidden[i] - t.compute_s * 2 / 3));
  }
  t.step_s = t.compute_s + t.bubble_s + t.exposed_comm_s;
  t.overlap =
      "tensor, context, expert and pipeline collectives on the critical path; data-parallel ones overlapped "
      "with "
      "the backward (two thirds of the compute), only their excess exposed";
  const bool fp32 = p.precision == Precision::Fp32;
  const double peak = hw.peak[static_cast<size_t>(fp32 ? (hw.tf32 ? PeakType::TF32 : PeakType::Float32)
                                                       : PeakType::BFloat16)];
  // the model's FLOPs (recompute and replicated work apart) over what the world could do in the step
  if (t.step_s > 0 && peak > 0)
    t.mfu = static_cast<double>(p.model_flops) * m * static_cast<double>(c.dp) /
            (t.step_s * static_cast<double>(c.world()) * peak);
  if (t.step_s > 0) t.tokens_per_s = static_cast<double>(p.tokens) * m * static_cast<double>(c.dp) / t.step_s;
  // Activations and the transient grow with the micro-batch: the largest multiple of the analysed one that
  // fits.
  const double memory = l->memory_gb * 1e9;
  int64_t most = -1;
  for (const RankRole& r : p.ranks) {
    const double per = static_cast<double>(r.peak_bytes - r.model_states_bytes);
    const double room = memory - static_cast<double>(r.model_states_bytes);
    const int64_t k = per > 0 ? static_cast<int64_t>(std::floor(std::max(0.0, room) / per)) : -1;
    if (k >= 0) most = most < 0 ? k : std::min(most, k);
  }
  t.max_microbatch = most;
  t.known = true;
  return t;
}

}  // namespace parallel_detail

}  // namespace flopwise
