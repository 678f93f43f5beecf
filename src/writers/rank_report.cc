// src/writers/rank_report.cc — a distributed run's ranks (flopwise/trace_census_report.h): JSON
// "flopwise.trace_ranks/1", text and CSV of each rank's temporal breakdown and communication overlap, step
// time spread, and the collectives table.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "flopwise/json_text.h"
#include "flopwise/run_report.h"
#include "flopwise/trace_census_report.h"

namespace flopwise {

namespace rank_writers {

std::string right(const std::string& s, size_t w) {
  return s.size() >= w ? s : std::string(w - s.size(), ' ') + s;
}
std::string left(const std::string& s, size_t w) {
  return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}
double share_pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0; }
double mean_step(const RankBreakdown& r) {
  if (r.steps.empty()) return r.kernel_time_us;
  double t = 0;
  for (const auto& s : r.steps) t += s.dur;
  return t / static_cast<double>(r.steps.size());
}

}  // namespace rank_writers

void write_ranks_json(std::ostream& os, const RankRun& run) {
  using namespace rank_writers;
  using ojson = nlohmann::ordered_json;
  ojson j;
  j["schema"] = "flopwise.trace_ranks/1";
  j["flopwise_version"] = flopwise_version();
  ojson ranks = ojson::array();
  for (const auto& r : run.ranks) {
    ojson x = {{"rank", r.rank},
               {"path", r.path},
               {"idle_time_us", r.idle_time_us},
               {"compute_time_us", r.compute_time_us},
               {"non_compute_time_us", r.non_compute_time_us},
               {"kernel_time_us", r.kernel_time_us},
               {"idle_time_pct", share_pct(r.idle_time_us, r.kernel_time_us)},
               {"compute_time_pct", share_pct(r.compute_time_us, r.kernel_time_us)},
               {"non_compute_time_pct", share_pct(r.non_compute_time_us, r.kernel_time_us)},
               {"communication_time_us", r.comm_time_us}};
    x["comm_comp_overlap_pct"] =
        r.comm_comp_overlap_pct < 0 ? ojson(nullptr) : ojson(r.comm_comp_overlap_pct);
    x["steps"] = r.steps.size();
    x["mean_step_time_us"] = mean_step(r);
    x["gpu_events"] = r.gpu_events;
    ranks.push_back(x);
  }
  j["ranks"] = ranks;
  j["slowest_rank"] = run.slowest_rank;
  j["step_time_min_us"] = run.step_time_min_us;
  j["step_time_max_us"] = run.step_time_max_us;
  j["step_time_spread_us"] = run.step_time_max_us - run.step_time_min_us;
  ojson colls = ojson::array();
  for (const auto& c : run.collectives) {
    ojson x = {{"collective", c.name}, {"group", c.group}, {"dtype", c.dtype}};
    x["group_size"] = c.group_size < 0 ? ojson(nullptr) : ojson(c.group_size);
    x["message_bytes"] = c.bytes < 0 ? ojson(nullptr) : ojson(c.bytes);
    x["count"] = c.count;
    x["time_us"] = c.time_us;
    x["algbw_gbs"] = c.bytes < 0 ? ojson(nullptr) : ojson(c.algbw_gbs);
    x["busbw_gbs"] = c.bytes < 0 ? ojson(nullptr) : ojson(c.busbw_gbs);
    colls.push_back(x);
  }
  j["collectives"] = colls;
  j["warnings"] = run.warnings;
  os << j.dump(1) << "\n";
}

void write_ranks_text(std::ostream& os, const RankRun& run, int top) {
  using namespace rank_writers;
  os << run.ranks.size()
     << " ranks; GPU time as HTA's temporal breakdown (kernel time = first kernel start to "
     << "last kernel end)\n\n";
  os << left("rank", 6) << right("kernel us", 12) << right("idle us", 12) << right("idle %", 8)
     << right("compute us", 12) << right("comp %", 8) << right("non-comp us", 13) << right("overlap %", 11)
     << right("step us", 12) << "\n";
  for (const auto& r : run.ranks)
    os << left(std::to_string(r.rank), 6) << right(fmt(r.kernel_time_us, 1), 12)
       << right(fmt(r.idle_time_us, 1), 12) << right(fmt(share_pct(r.idle_time_us, r.kernel_time_us), 2), 8)
       << right(fmt(r.compute_time_us, 1), 12)
       << right(fmt(share_pct(r.compute_time_us, r.kernel_time_us), 2), 8)
       << right(fmt(r.non_compute_time_us, 1), 13)
       << right(r.comm_comp_overlap_pct < 0 ? "-" : fmt(r.comm_comp_overlap_pct, 2), 11)
       << right(fmt(mean_step(r), 1), 12) << "\n";
  os << "\nstep time: " << fmt(run.step_time_min_us, 1) << " to " << fmt(run.step_time_max_us, 1)
     << " us (spread " << fmt(run.step_time_max_us - run.step_time_min_us, 1) << " us); slowest rank "
     << run.slowest_rank << "\n";
  for (const auto& w : run.warnings) os << "warning: " << w << "\n";
  if (run.collectives.empty()) return;
  os << "\ncollectives (all ranks; bandwidth over the mean kernel time, bus factor as nccl-tests)\n";
  os << left("collective", 16) << left("group", 18) << left("dtype", 10) << right("ranks", 6)
     << right("bytes", 14) << right("count", 7) << right("time us", 12) << right("algbw GB/s", 12)
     << right("busbw GB/s", 12) << "\n";
  int shown = 0;
  for (const auto& c : run.collectives) {
    if (top >= 0 && shown++ >= top) break;
    os << left(c.name, 16) << left(c.group.empty() ? "-" : c.group, 18)
       << left(c.dtype.empty() ? "-" : c.dtype, 10)
       << right(c.group_size < 0 ? "-" : std::to_string(c.group_size), 6)
       << right(c.bytes < 0 ? "unknown" : std::to_string(c.bytes), 14) << right(std::to_string(c.count), 7)
       << right(fmt(c.time_us, 1), 12) << right(c.bytes < 0 ? "-" : fmt(c.algbw_gbs, 2), 12)
       << right(c.bytes < 0 ? "-" : fmt(c.busbw_gbs, 2), 12) << "\n";
  }
}

void write_ranks_csv(std::ostream& os, const RankRun& run) {
  using namespace rank_writers;
  os << "rank,idle_time_us,compute_time_us,non_compute_time_us,kernel_time_us,comm_comp_overlap_pct,"
        "mean_step_time_us\n";
  for (const auto& r : run.ranks)
    os << r.rank << "," << fmt(r.idle_time_us, 2) << "," << fmt(r.compute_time_us, 2) << ","
       << fmt(r.non_compute_time_us, 2) << "," << fmt(r.kernel_time_us, 2) << ","
       << (r.comm_comp_overlap_pct < 0 ? "" : fmt(r.comm_comp_overlap_pct, 2)) << "," << fmt(mean_step(r), 2)
       << "\n";
}

}  // namespace flopwise
