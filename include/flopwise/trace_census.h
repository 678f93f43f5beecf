// include/flopwise/trace_census.h — PyTorch profiler traces as Holistic Trace Analysis (HTA) reads them:
// every timed event counted by name (CPU ops, runtime calls, annotations, kernels alike), the counts and
// times of two traces or two sets of rank files compared with HTA's TraceDiff categories, and a distributed
// run's ranks broken down as HTA's get_temporal_breakdown and get_comm_comp_overlap do, with its collectives.
// The priced view of one trace (FLOPs per op and scope) is flopwise/torch_trace.h's; this is the census.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace flopwise {

// One timed event: any event with a "cat" and a numeric "dur" (HTA keeps these; cat "Trace" excepted).
struct CensusEvent {
  double ts = 0, dur = 0;  // microseconds
  int64_t corr = -1;       // args.correlation: a kernel's and its runtime launch's
  uint32_t name = 0;       // index in TraceCensus::names
  uint16_t cat = 0;        // index in TraceCensus::cats
  int32_t stream = -1;     // args.stream: -1 on the CPU side (HTA's device split)
  int32_t coll = -1;       // index in TraceCensus::collectives when the event records one
};

// What torch 2.x records on an NCCL/RCCL kernel (and on record_param_comms): the collective and its message.
struct CensusCollective {
  std::string name;   // "Collective name": allreduce, allgather, ...; else from the kernel name
  std::string group;  // "Process Group Name" (and its description)
  int64_t in_nelems = -1, out_nelems = -1, group_size = -1;
  std::string dtype;  // "Float", "BFloat16", ...
};

struct TraceCensus {
  std::string path;
  int64_t rank = -1, world_size = -1;  // distributedInfo; -1 when absent
  std::string device;                  // deviceProperties[0].name
  std::vector<std::string> names, cats;
  std::vector<CensusEvent> events;
  std::vector<CensusCollective> collectives;
  int64_t skipped = 0;  // events with a cat and a dur that is not a number
};

// What a census keeps: every timed event, or (GpuSide) what rank_breakdown reads: the GPU-side events and, of
// the CPU side, the ProfilerStep annotations and the events with a correlation (a training trace's 1.4 M ops
// left out of its 3.8 M events).
enum class CensusKeep { All, GpuSide };
// Reads the timed events of a trace (JSON or gzip) in one streaming pass. Throws InputError (one line).
TraceCensus read_trace_census(const std::string& path, CensusKeep keep = CensusKeep::All);

// A ProfilerStep#N annotation on the CPU side.
struct CensusStep {
  int64_t number = 0;
  double ts = 0, dur = 0;
};
std::vector<CensusStep> census_steps(const TraceCensus& c);
// Each event's step number as HTA assigns it (hta/common/trace.py add_iteration): a CPU event the step whose
// [ts, ts + dur) holds its start; a GPU event its launch's (the CPU event of its correlation); else -1.
std::vector<int64_t> census_event_steps(const TraceCensus& c, const std::vector<CensusStep>& steps);

// ---- counts by name, and the diff of two sides ----

// Which ranks and steps a side counts: empty = all; "first" picks the lowest (HTA's default).
struct CensusSelection {
  std::vector<int64_t> ranks, steps;
  bool first_rank = false, first_step = false;
};
struct CountTime {
  int64_t count = 0;
  double time_us = 0;
};
struct CensusSummary {
  std::vector<std::string> paths;
  std::vector<int64_t> ranks, steps;     // those counted
  std::map<std::string, CountTime> cpu;  // stream -1: ops, annotations, runtime calls
  std::map<std::string, CountTime> gpu;  // kernels, memcpy, memset
  std::vector<std::string> devices;
};
// The trace files of a side: `path` itself, or the *.json / *.json.gz files of a directory.
std::vector<std::string> census_files(const std::string& path);
// Reads the files (in parallel, each read, summarised and freed in turn) and counts what `sel` selects.
CensusSummary summarise_census(const std::vector<std::string>& files, const CensusSelection& sel);

// HTA's ops_diff categories, by count: added (absent in A), deleted (absent in B), increased, decreased,
// unchanged.
enum class CountChange { Added, Deleted, Increased, Decreased, Unchanged };
const char* count_change_name(CountChange c);
struct CountDiffRow {
  std::string name;
  CountTime a, b;
  CountChange change = CountChange::Unchanged;
  CountChange time_change = CountChange::Unchanged;  // the same categories by total time
};
struct CountDiff {
  CensusSummary a, b;
  std::vector<CountDiffRow> ops, kernels;  // by name
};
CountDiff diff_census(CensusSummary a, CensusSummary b);

// ---- a distributed run's ranks ----

enum class KernelClass { Communication, Memory, Computation, Other };
// HTA's get_kernel_type (hta/common/types.py patterns): NCCL/RCCL/HCCL kernels communicate, Memcpy/Memset
// move memory, the rest computes.
KernelClass classify_kernel(const std::string& name);

struct RankBreakdown {
  int64_t rank = -1;
  std::string path;
  double idle_time_us = 0, compute_time_us = 0, non_compute_time_us = 0, kernel_time_us = 0;
  double comm_time_us = 0;           // union of the communication kernels' intervals
  double comm_comp_overlap_pct = 0;  // of that, the part a computation kernel overlaps
  std::vector<CensusStep> steps;     // ProfilerStep annotations
  int64_t gpu_events = 0;
};
struct CollectiveRow {
  std::string name, group, dtype;
  int64_t group_size = -1, bytes = -1;  // the message: nelems (out for allgather) x dtype size; -1 unknown
  int64_t count = 0;
  double time_us = 0;                   // summed over ranks
  double algbw_gbs = 0, busbw_gbs = 0;  // bytes / mean time; x the collective's bus factor (nccl-tests)
};
struct RankRun {
  std::vector<RankBreakdown> ranks;  // by rank
  std::vector<CollectiveRow> collectives;
  int64_t slowest_rank = -1;
  double step_time_min_us = 0, step_time_max_us = 0;  // over ranks, of each rank's mean step time
  std::vector<std::string> warnings;
};
// The rank files of `dir` (each carrying distributedInfo.rank), read `jobs` at a time (0: the cores, at most
// 8); memory is `jobs` ranks' events at once, each summarised and freed.
RankRun analyse_ranks(const std::vector<std::string>& files, int jobs = 0);

// What rank_breakdown reads of one trace, and nothing else: made from the census reader's read (gpu_census),
// or from the trace reader's records and the few facts it keeps beside them (TraceReadOptions::census,
// trace_communication in flopwise/torch_trace.h), so the trace's text report has its communication section
// from one read.
struct CensusGpuEvent {  // an event with args.stream != -1 (HTA's GPU side)
  double ts = 0, dur = 0;
  int64_t corr = -1;  // its launch's correlation where args.stream >= 0; else -1
  uint32_t name = 0;  // index in GpuCensus::names
  int32_t coll = -1;  // index in GpuCensus::collectives when the event records one
};
struct GpuCensus {
  std::string path;
  int64_t rank = -1;  // distributedInfo
  // The trace's names and collectives, not copied: they outlive the GpuCensus.
  const std::vector<std::string>* names = nullptr;
  const std::vector<CensusCollective>* collectives = nullptr;
  std::vector<CensusStep> steps;    // every ProfilerStep#N event, either side, in trace order
  std::vector<CensusGpuEvent> gpu;  // in trace order
  // (correlation, earliest start) of the CPU-side events (args.stream < 0) with a correlation some GPU event
  // names, by correlation.
  std::vector<std::pair<int64_t, double>> launched;
};
GpuCensus gpu_census(const TraceCensus& c);  // refers to c's names and collectives
// GpuCensus::launched from launches given one by one, each (correlation, start).
class CensusLaunchTimes {
 public:
  explicit CensusLaunchTimes(const std::vector<CensusGpuEvent>& gpu);  // the correlations they name
  void add(int64_t corr, double ts);
  std::vector<std::pair<int64_t, double>> take();

 private:
  std::vector<int64_t> corr_;  // sorted, distinct
  std::vector<double> first_;  // of each: the earliest start added; NaN: none
};

RankBreakdown rank_breakdown(const GpuCensus& c, std::map<std::string, CollectiveRow>* collectives);
RankBreakdown rank_breakdown(const TraceCensus& c, std::map<std::string, CollectiveRow>* collectives);
// The run's figures from its ranks' breakdowns and collectives (keyed as rank_breakdown fills them): the
// ranks sorted (two of one rank refused), step spread, slowest rank, the collectives' bandwidths.
RankRun summarise_ranks(std::vector<RankBreakdown> ranks, const std::map<std::string, CollectiveRow>& colls);

}  // namespace flopwise
