// src/measured/trace_ranks.cc — a distributed run's rank files as HTA breaks them down
// (flopwise/trace_census.h): per rank idle, compute and non-compute time over the GPU's span (HTA's
// get_temporal_breakdown), communication-computation overlap (get_comm_comp_overlap), step times, and the
// collectives' message sizes, times and bandwidths. Each rank is read, reduced to these figures and freed.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <mutex>
#include <string_view>
#include <unordered_set>

#include "census_parallel.h"
#include "flopwise/errors.h"
#include "flopwise/trace_census.h"

namespace flopwise {

namespace {

// HTA's kernel patterns (hta/common/types.py), first match wins: communication, memory, then the names that
// are not computation; every other GPU event computes.
enum class NameMatch { Prefix, Contains, PrefixThenContains };
struct KernelRule {
  KernelClass cls;
  NameMatch match;
  std::string_view text, then;
};
constexpr KernelRule kKernelRules[] = {
    {KernelClass::Communication, NameMatch::Prefix, "nccl", ""},
    {KernelClass::Communication, NameMatch::Prefix, "hip", ""},
    {KernelClass::Communication, NameMatch::Prefix, "hccl", ""},
    {KernelClass::Communication, NameMatch::Contains, "ncclKernel", ""},
    {KernelClass::Memory, NameMatch::Prefix, "Memcpy", ""},
    {KernelClass::Memory, NameMatch::Prefix, "Memset", ""},
    {KernelClass::Memory, NameMatch::Prefix, "dma", ""},
    {KernelClass::Other, NameMatch::Contains, "Memcpy", ""},
    {KernelClass::Other, NameMatch::Contains, "Memset", ""},
    {KernelClass::Other, NameMatch::Contains, "dma", ""},
    {KernelClass::Other, NameMatch::Contains, "Sync", ""},
    {KernelClass::Other, NameMatch::Prefix, "Stream Wait Event", ""},
    {KernelClass::Other, NameMatch::PrefixThenContains, "cuda", "LaunchKernel"},
    {KernelClass::Other, NameMatch::Prefix, "runFunction", ""},
    {KernelClass::Other, NameMatch::Prefix, "job_exe", ""},
    {KernelClass::Other, NameMatch::Prefix, "packet", ""},
    {KernelClass::Other, NameMatch::Prefix, "pe_exe", ""},
    {KernelClass::Other, NameMatch::Prefix, "cpum_exe_subgraph", ""},
    {KernelClass::Other, NameMatch::Prefix, "collective_subgraph_execution", ""},
};

bool rule_matches(const KernelRule& r, std::string_view name) {
  switch (r.match) {
    case NameMatch::Prefix:
      return name.substr(0, r.text.size()) == r.text;
    case NameMatch::Contains:
      return name.find(r.text) != std::string_view::npos;
    case NameMatch::PrefixThenContains:
      return name.substr(0, r.text.size()) == r.text &&
             name.find(r.then, r.text.size()) != std::string_view::npos;
  }
  return false;
}

// Bytes of one element of a recorded dtype ("Float", "BFloat16"); 0 when not known.
struct DtypeSize {
  std::string_view name;
  int64_t bytes;
};
constexpr DtypeSize kDtypeSizes[] = {
    {"Float", 4},
    {"Double", 8},
    {"Half", 2},
    {"BFloat16", 2},
    {"Int", 4},
    {"Long", 8},
    {"Short", 2},
    {"Byte", 1},
    {"Char", 1},
    {"Bool", 1},
    {"Float8_e4m3fn", 1},
    {"Float8_e5m2", 1},
    {"Float8_e4m3fnuz", 1},
    {"Float8_e5m2fnuz", 1},
    {"ComplexFloat", 8},
};
int64_t dtype_bytes(const std::string& dtype) {
  for (const auto& d : kDtypeSizes)
    if (d.name == dtype) return d.bytes;
  return 0;
}

// nccl-tests' bus bandwidth factor (doc/PERFORMANCE.md) by the collective's name without '_' and case.
struct BusFactor {
  std::string_view prefix;
  bool two_rounds;  // allreduce: 2(n-1)/n; the others listed (n-1)/n; the rest (broadcast, send/recv) 1
};
constexpr BusFactor kBusFactors[] = {
    {"allreduce", true}, {"allgather", false}, {"reducescatter", false}, {"alltoall", false}};
std::string squash(const std::string& s) {
  std::string out;
  for (char ch : s)
    if (ch != '_' && ch != ' ') out += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}
double bus_factor(const std::string& coll, int64_t n) {
  const std::string s = squash(coll);
  if (n <= 0) return 1;
  const double f = static_cast<double>(n - 1) / static_cast<double>(n);
  for (const auto& b : kBusFactors)
    if (s.compare(0, b.prefix.size(), b.prefix) == 0) return b.two_rounds ? 2 * f : f;
  return 1;
}

// An NCCL kernel of an older trace, which records no args: "ncclKernel_AllReduce_RING_LL_Sum_float(...)",
// "ncclDevKernel_AllGather_RING_LL(...)": "allreduce".
std::string collective_of_kernel(const std::string& name) {
  for (std::string_view pre : {std::string_view("ncclDevKernel_"), std::string_view("ncclKernel_")}) {
    size_t at = name.find(pre);
    if (at == std::string::npos) continue;
    size_t b = at + pre.size(), e = name.find_first_of("_(", b);
    return squash(name.substr(b, e == std::string::npos ? std::string::npos : e - b));
  }
  return "";
}

using Interval = std::pair<double, double>;
// Sorted, merged: HTA's merge_kernel_intervals (a new group where a start passes every earlier end).
std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const auto& iv : v) {
    if (!out.empty() && iv.first <= out.back().second)
      out.back().second = std::max(out.back().second, iv.second);
    else
      out.push_back(iv);
  }
  return out;
}
double length(const std::vector<Interval>& v) {
  double s = 0;
  for (const auto& iv : v) s += iv.second - iv.first;
  return s;
}
double overlap(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  double s = 0;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    double lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (hi > lo) s += hi - lo;
    (a[i].second < b[j].second ? i : j)++;
  }
  return s;
}

// The GPU events HTA's load_traces keeps: with two or more profiler steps, those launched before the last
// step starts (trace.py _filter_irrelevant_gpu_kernels); else all.
std::vector<bool> kept_gpu_events(const GpuCensus& c, const std::vector<CensusStep>& steps) {
  std::vector<bool> keep(c.gpu.size(), true);
  std::set<int64_t> step_numbers;
  double last_start = -1e300;
  for (const auto& s : steps) step_numbers.insert(s.number), last_start = std::max(last_start, s.ts);
  if (step_numbers.size() < 2) return keep;
  auto launched_before = [&](int64_t corr) {
    auto it = std::lower_bound(c.launched.begin(), c.launched.end(), corr,
                               [](const std::pair<int64_t, double>& l, int64_t x) { return l.first < x; });
    return it != c.launched.end() && it->first == corr && it->second < last_start;
  };
  for (size_t i = 0; i < c.gpu.size(); ++i) {
    const CensusGpuEvent& e = c.gpu[i];
    keep[i] = e.corr >= 0 ? launched_before(e.corr) : e.ts < last_start;
  }
  return keep;
}

void add_collective(const GpuCensus& c, const CensusGpuEvent& e, std::map<std::string, CollectiveRow>* rows) {
  CollectiveRow r;
  if (e.coll >= 0) {
    const CensusCollective& k = (*c.collectives)[static_cast<size_t>(e.coll)];
    r.name = k.name, r.group = k.group, r.dtype = k.dtype, r.group_size = k.group_size;
    const int64_t nelems = squash(k.name).compare(0, 9, "allgather") == 0 ? k.out_nelems : k.in_nelems;
    const int64_t size = dtype_bytes(k.dtype);
    if (nelems >= 0 && size > 0 && nelems <= INT64_MAX / size) r.bytes = nelems * size;
  } else {
    r.name = collective_of_kernel((*c.names)[e.name]);
    if (r.name.empty()) r.name = "(nccl kernel)";
  }
  std::string key = r.name + '\x1f' + r.group + '\x1f' + r.dtype + '\x1f' + std::to_string(r.bytes) + '\x1f' +
                    std::to_string(r.group_size);
  auto [it, fresh] = rows->try_emplace(key, r);
  ++it->second.count;
  it->second.time_us += e.dur;
}

}  // namespace

KernelClass classify_kernel(const std::string& name) {
  for (const auto& r : kKernelRules)
    if (rule_matches(r, name)) return r.cls;
  return KernelClass::Computation;
}

CensusLaunchTimes::CensusLaunchTimes(const std::vector<CensusGpuEvent>& gpu) {
  corr_.reserve(gpu.size());
  for (const auto& e : gpu)
    if (e.corr >= 0) corr_.push_back(e.corr);
  std::sort(corr_.begin(), corr_.end());
  corr_.erase(std::unique(corr_.begin(), corr_.end()), corr_.end());
  first_.assign(corr_.size(), NAN);
}
void CensusLaunchTimes::add(int64_t corr, double ts) {
  auto it = std::lower_bound(corr_.begin(), corr_.end(), corr);
  if (it == corr_.end() || *it != corr) return;
  double& f = first_[static_cast<size_t>(it - corr_.begin())];
  if (std::isnan(f) || ts < f) f = ts;
}
std::vector<std::pair<int64_t, double>> CensusLaunchTimes::take() {
  std::vector<std::pair<int64_t, double>> out;
  for (size_t i = 0; i < corr_.size(); ++i)
    if (!std::isnan(first_[i])) out.emplace_back(corr_[i], first_[i]);
  corr_.clear(), first_.clear();
  return out;
}

GpuCensus gpu_census(const TraceCensus& c) {
  GpuCensus g;
  g.path = c.path, g.rank = c.rank, g.names = &c.names, g.collectives = &c.collectives;
  g.steps = census_steps(c);
  g.gpu.reserve(static_cast<size_t>(
      std::count_if(c.events.begin(), c.events.end(), [](const CensusEvent& e) { return e.stream != -1; })));
  for (const CensusEvent& e : c.events)
    if (e.stream != -1) g.gpu.push_back({e.ts, e.dur, e.stream >= 0 ? e.corr : -1, e.name, e.coll});
  CensusLaunchTimes launches(g.gpu);
  for (const CensusEvent& e : c.events)
    if (e.stream < 0 && e.corr >= 0) launches.add(e.corr, e.ts);
  g.launched = launches.take();
  return g;
}

RankBreakdown rank_breakdown(const TraceCensus& c, std::map<std::string, CollectiveRow>* collectives) {
  return rank_breakdown(gpu_census(c), collectives);
}

RankBreakdown rank_breakdown(const GpuCensus& c, std::map<std::string, CollectiveRow>* collectives) {
  RankBreakdown b;
  b.rank = c.rank;
  b.path = c.path;
  for (const auto& s : c.steps)
    if (s.dur > 0) b.steps.push_back(s);
  const std::vector<bool> keep = kept_gpu_events(c, b.steps);
  std::vector<Interval> all, comp, comm;
  const std::vector<std::string>& names = *c.names;
  std::vector<int8_t> cls(names.size(), -1);
  for (size_t i = 0; i < c.gpu.size(); ++i) {
    if (!keep[i]) continue;
    const CensusGpuEvent& e = c.gpu[i];
    int8_t& k = cls[e.name];
    if (k < 0) k = static_cast<int8_t>(classify_kernel(names[e.name]));
    Interval iv{e.ts, e.ts + e.dur};
    all.push_back(iv);
    if (k == static_cast<int8_t>(KernelClass::Computation)) comp.push_back(iv);
    if (k == static_cast<int8_t>(KernelClass::Communication)) {
      comm.push_back(iv);
      if (collectives) add_collective(c, e, collectives);
    }
  }
  b.gpu_events = static_cast<int64_t>(all.size());
  b.comm_comp_overlap_pct = -1;  // no communication: no overlap to speak of
  if (all.empty()) return b;
  all = merged(std::move(all));
  comp = merged(std::move(comp));
  comm = merged(std::move(comm));
  b.kernel_time_us = all.back().second - all.front().first;
  b.idle_time_us = b.kernel_time_us - length(all);
  b.compute_time_us = length(comp);
  b.non_compute_time_us = b.kernel_time_us - b.compute_time_us - b.idle_time_us;
  b.comm_time_us = length(comm);
  b.comm_comp_overlap_pct = b.comm_time_us > 0 ? 100.0 * overlap(comm, comp) / b.comm_time_us : -1;
  return b;
}

RankRun summarise_ranks(std::vector<RankBreakdown> ranks, const std::map<std::string, CollectiveRow>& colls) {
  RankRun run;
  std::sort(ranks.begin(), ranks.end(), [](const auto& x, const auto& y) { return x.rank < y.rank; });
  for (size_t i = 1; i < ranks.size(); ++i)
    if (ranks[i].rank == ranks[i - 1].rank)
      throw InputError(ranks[i].path + " and " + ranks[i - 1].path + " are both rank " +
                       std::to_string(ranks[i].rank));
  for (const auto& r : ranks)
    if (r.gpu_events == 0)
      run.warnings.push_back("rank " + std::to_string(r.rank) + " (" + r.path +
                             ") has no GPU events: its times are 0, not measured");
  double lo = 1e300, hi = -1;
  for (const auto& r : ranks) {
    double t = r.kernel_time_us;
    if (!r.steps.empty()) {
      t = 0;
      for (const auto& s : r.steps) t += s.dur;
      t /= static_cast<double>(r.steps.size());
    }
    lo = std::min(lo, t);
    if (t > hi) hi = t, run.slowest_rank = r.rank;
  }
  run.step_time_min_us = ranks.empty() ? 0 : lo;
  run.step_time_max_us = ranks.empty() ? 0 : hi;
  for (auto [k, r] : colls) {
    const double mean_us = r.count > 0 ? r.time_us / static_cast<double>(r.count) : 0;
    if (r.bytes > 0 && mean_us > 0) {
      r.algbw_gbs = static_cast<double>(r.bytes) / (mean_us * 1e3);  // bytes per ns = GB/s
      r.busbw_gbs = r.algbw_gbs * bus_factor(r.name, r.group_size);
    }
    run.collectives.push_back(r);
  }
  std::sort(run.collectives.begin(), run.collectives.end(),
            [](const auto& x, const auto& y) { return x.time_us > y.time_us; });
  run.ranks = std::move(ranks);
  return run;
}

RankRun analyse_ranks(const std::vector<std::string>& files, int jobs) {
  std::vector<RankBreakdown> ranks(files.size());
  std::map<std::string, CollectiveRow> colls;
  std::mutex mu;
  census::for_each_file(files.size(), jobs, [&](size_t i) {
    std::map<std::string, CollectiveRow> mine;
    RankBreakdown b;
    {
      TraceCensus c = read_trace_census(files[i], CensusKeep::GpuSide);
      GpuCensus g = gpu_census(c);
      std::vector<CensusEvent>().swap(c.events);  // g has what the breakdown reads
      b = rank_breakdown(g, &mine);
    }  // the rank's events freed here
    if (b.rank < 0)
      throw InputError(files[i] + ": no distributedInfo.rank: not one rank of a distributed run");
    std::lock_guard<std::mutex> lock(mu);
    ranks[i] = std::move(b);
    for (auto& [k, r] : mine) {
      auto [it, fresh] = colls.try_emplace(k, r);
      if (!fresh) it->second.count += r.count, it->second.time_us += r.time_us;
    }
  });
  return summarise_ranks(std::move(ranks), colls);
}

}  // namespace flopwise
