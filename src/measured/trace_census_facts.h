// src/measured/trace_census_facts.h — what the census reads of a trace beyond an event's name and time: the
// args it keeps (stream, correlation, the collective an NCCL kernel records) and distributedInfo, read alike by
// the census reader (trace_census_read.cc) and the trace reader (trace_read.cc); and CensusFacts, the GPU-side
// facts rank_breakdown reads, which the trace reader keeps beside its own records when asked
// (TraceReadOptions::census), so that the text report's communication section needs no second read. Internal
// header of src/measured.
#pragma once

#include <cstdint>
#include <map>
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
enum class Arg : uint8_t { Other, Corr, Stream, Coll, Group, GroupDesc, InNelems, OutNelems, GroupSize, Dtype };
struct ArgName {
  std::string_view key;
  Arg arg;
};
inline constexpr ArgName kArgs[] = {
    {"correlation", Arg::Corr},
    {"stream", Arg::Stream},
    {"Collective name", Arg::Coll},
    {"Process Group Name", Arg::Group},
    {"Process Group Description", Arg::GroupDesc},
    {"In msg nelems", Arg::InNelems},
    {"Out msg nelems", Arg::OutNelems},
    {"Group size", Arg::GroupSize},
    {"dtype", Arg::Dtype},
};
inline Arg arg_of(std::string_view k) {
  for (const auto& a : kArgs)
    if (a.key == k) return a.arg;
  return Arg::Other;
}

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
inline void read_arg(trace_read::TraceParser& p, Arg a, Args& out) {
  switch (a) {
    case Arg::Corr:
      out.corr = p.integer().value_or(-1);
      break;
    case Arg::Stream: {
      auto s = p.integer();
      out.stream = s && *s >= INT32_MIN && *s <= INT32_MAX ? static_cast<int32_t>(*s) : -1;
      break;
    }
    case Arg::Coll:
      p.text(out.coll.name);
      out.is_coll = true;
      break;
    case Arg::Group:
      p.text(out.coll.group);
      break;
    case Arg::GroupDesc:
      p.text(out.desc);
      break;
    case Arg::InNelems:
      out.coll.in_nelems = p.integer().value_or(-1);
      break;
    case Arg::OutNelems:
      out.coll.out_nelems = p.integer().value_or(-1);
      break;
    case Arg::GroupSize:
      out.coll.group_size = p.integer().value_or(-1);
      break;
    case Arg::Dtype:
      p.text(out.coll.dtype);
      break;
    case Arg::Other:
      p.skip();
  }
}

// distributedInfo (its value next): the rank and world size; -1 where absent.
inline void read_distributed(trace_read::TraceParser& p, std::string& key, int64_t* rank, int64_t* world) {
  if (p.ws() != '{') return p.skip();
  if (!p.open('{', '}')) return;
  do {
    p.string(key);
    p.expect(':');
    if (key == "rank")
      *rank = p.integer().value_or(-1);
    else if (key == "world_size")
      *world = p.integer().value_or(-1);
    else
      p.skip();
  } while (p.more('}'));
}

// The facts of a trace's timed events (a string cat other than "Trace", numeric ts, dur >= 0) that
// rank_breakdown reads, kept in trace order: ProfilerStep#N events, GPU-side events, and the CPU-side events
// with a correlation that the trace reader does not keep as launches itself.
class CensusFacts {
 public:
  int64_t rank = -1, world_size = -1;  // distributedInfo

  // One timed event; `in_launches`: the reader keeps it as a launch marked TraceLaunch::census; name_id():
  // the index of `name` in the trace's names.
  template <class NameId>
  void event(const std::string& name, double ts, double dur, const Args& a, bool in_launches, NameId name_id) {
    if (name.compare(0, 12, "ProfilerStep") == 0) {
      const int64_t n = step_number(name);
      if (n >= 0) steps_.push_back({n, ts, dur});
    }
    if (a.stream != -1) {
      CensusGpuEvent g{ts, dur, a.stream >= 0 ? a.corr : -1, name_id(), -1};
      if (a.is_coll) {
        g.coll = static_cast<int32_t>(colls_.size());
        colls_.push_back(a.collective());
      }
      gpu_.push_back(g);
    }
    if (a.stream < 0 && a.corr >= 0 && !in_launches) launches_.emplace_back(a.corr, ts);
  }

  // A part read by another thread, after those before it; `names`: its name indices in this trace's.
  void merge(CensusFacts&& o, const std::vector<uint32_t>& names) {
    steps_.insert(steps_.end(), o.steps_.begin(), o.steps_.end());
    const int32_t colls = static_cast<int32_t>(colls_.size());
    for (CensusGpuEvent e : o.gpu_.take()) {
      e.name = names[e.name];
      if (e.coll >= 0) e.coll += colls;
      gpu_.push_back(e);
    }
    for (auto& c : o.colls_) colls_.push_back(std::move(c));
    launches_.insert(launches_.end(), o.launches_.begin(), o.launches_.end());
  }

  // The communication section's figures (one rank's breakdown and its collectives), the facts freed.
  RankRun finish(const TorchTrace& t) {
    GpuCensus g;
    g.path = t.path, g.rank = rank, g.names = t.names;
    g.steps = std::move(steps_), g.gpu = gpu_.take(), g.collectives = std::move(colls_);
    CensusLaunchTimes launched(g.gpu);
    for (const TraceLaunch& l : t.launches)
      if (l.census) launched.add(l.corr, l.ts);
    for (const auto& [corr, ts] : launches_) launched.add(corr, ts);
    std::vector<std::pair<int64_t, double>>().swap(launches_);
    g.launched = launched.take();
    std::map<std::string, CollectiveRow> colls;
    RankBreakdown b = rank_breakdown(g, &colls);
    g = GpuCensus{};
    return summarise_ranks({std::move(b)}, colls);
  }

 private:
  std::vector<CensusStep> steps_;
  trace_read::Blocks<CensusGpuEvent> gpu_;
  std::vector<CensusCollective> colls_;
  std::vector<std::pair<int64_t, double>> launches_;  // (correlation, ts)
};

}  // namespace flopwise::census
