// src/measured/trace_census_facts.h — what the census reads of a trace beyond an event's name and time: the
// args it keeps (stream, correlation, the collective an NCCL kernel records) and distributedInfo, read alike
// by the census reader (trace_census_read.cc) and the trace reader (trace_read.cc); and CensusFacts, the
// GPU-side facts rank_breakdown reads beyond the trace reader's own records, which it keeps when asked
// (TraceReadOptions::census), so that the text report's communication section needs no second read
// (trace_census_facts.cc joins them with the records: trace_communication). Internal header of src/measured.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flopwise/trace_census.h"
#include "trace_source.h"

namespace flopwise::census {

// "ProfilerStep#12" (spaces allowed around '#', as HTA's pattern): 12; else -1 (trace_count_diff.cc).
int64_t step_number(const std::string& name);

// The args the census reads; the rest are skipped.
enum class Arg : uint8_t {
  Other,
  Corr,
  Stream,
  Coll,
  Group,
  GroupDesc,
  InNelems,
  OutNelems,
  GroupSize,
  Dtype
};
Arg arg_of(std::string_view key);

// One event's census args.
struct Args {
  int64_t corr = -1;
  int32_t stream = -1;  // HTA: absent, or not an integer: -1 (the CPU side)
  bool is_coll = false;
  CensusCollective coll;
  std::string desc;
  void clear() {
    corr = -1, stream = -1, is_coll = false;
    coll = CensusCollective{}, desc.clear();
  }
  CensusCollective collective() const {  // the group with its description
    CensusCollective c = coll;
    if (!desc.empty()) c.group += (c.group.empty() ? "" : " ") + std::string("(") + desc + ")";
    return c;
  }
};

// Reads the value of arg `a` (its ':' consumed); Other is skipped.
void read_arg(trace_read::TraceParser& p, Arg a, Args& out);
// An event's "args" object (its value next): the census's args into `out`, correlation into *corr.
void read_args(trace_read::TraceParser& p, int64_t* corr, Args& out);
// distributedInfo (its value next): the rank and world size; -1 where absent.
void read_distributed(trace_read::TraceParser& p, std::string& key, int64_t* rank, int64_t* world);

// The facts of a trace's timed events (a string cat other than "Trace", numeric ts, dur >= 0) that
// rank_breakdown reads beyond what the trace reader keeps itself, in trace order: ProfilerStep#N events, the
// GPU-side events its GPU table (TorchTrace::gpu) lacks or holds otherwise than the census sees them, and the
// CPU-side events with a correlation it does not keep as launches. census() joins them with that table.
class CensusFacts {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  int64_t rank = -1, world_size = -1;  // distributedInfo

  // One timed event. main_gpu: its index in the reader's GPU table, where it keeps it there, else kNone;
  // gpu_count: the size of that table; in_launches: the reader keeps it as a launch marked
  // TraceLaunch::census; name_id(): the index of `name` in the trace's names.
  template <class NameId>
  void event(const std::string& name, double ts, double dur, const Args& a, bool in_launches,
             uint32_t main_gpu, uint32_t gpu_count, NameId name_id) {
    if (name.compare(0, 12, "ProfilerStep") == 0) {
      const int64_t n = step_number(name);
      if (n >= 0) steps_.push_back({n, ts, dur});
    }
    const bool plain = a.stream >= 0 && !a.is_coll;  // the GPU table's record is the census's
    if (main_gpu != kNone && plain) return;
    if (main_gpu != kNone) not_gpu_.push_back(main_gpu);
    if (a.stream != -1) {
      CensusGpuEvent g{ts, dur, a.stream >= 0 ? a.corr : -1, name_id(), -1};
      if (a.is_coll) {
        g.coll = static_cast<int32_t>(colls_.size());
        colls_.push_back(a.collective());
      }
      gpu_.emplace_back(main_gpu != kNone ? main_gpu : gpu_count, g);
    }
    if (a.stream < 0 && a.corr >= 0 && !in_launches) launches_.emplace_back(a.corr, ts);
  }
  // An event of the reader's GPU table that the census does not count (not timed as it reads times).
  void untimed(uint32_t main_gpu) { not_gpu_.push_back(main_gpu); }

  // A part read by another thread, after those before it: `names` maps its name indices to this trace's,
  // gpu_base is the size of this reader's GPU table before the part's.
  void merge(CensusFacts&& o, const std::vector<uint32_t>& names, uint32_t gpu_base);
  // The census's GPU side of `t` (read with these facts): t.gpu joined with the facts, in trace order.
  GpuCensus census(const TorchTrace& t) const;

 private:
  std::vector<CensusStep> steps_;
  std::vector<std::pair<uint32_t, CensusGpuEvent>> gpu_;  // (the GPU table's size where it was read, event)
  std::vector<uint32_t> not_gpu_;                         // of the GPU table: records census() leaves out
  std::vector<CensusCollective> colls_;
  std::vector<std::pair<int64_t, double>> launches_;  // (correlation, ts)
};

}  // namespace flopwise::census
