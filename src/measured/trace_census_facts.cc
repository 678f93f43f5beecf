// src/measured/trace_census_facts.cc — the census facts the trace reader keeps (trace_census_facts.h) joined
// with its GPU table and launches into the census's GPU side, and reduced to the trace's communication
// figures as one rank (flopwise/torch_trace.h, trace_communication): what rank_breakdown gives on the census
// reader's read of the same file.
#include "trace_census_facts.h"

#include <array>
#include <iterator>
#include <map>
#include <optional>

#include "flopwise/torch_trace.h"

namespace flopwise {

namespace census {

struct ArgName {
  std::string_view key;
  Arg arg;
};
constexpr ArgName kArgs[] = {
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
// kArgs by key length: no two keys have one length, so a length names the one key to compare (read per args
// key of every event: a compare, not nine).
constexpr size_t kLongestArg = 25;
constexpr std::array<int8_t, kLongestArg + 1> kArgByLength = [] {
  std::array<int8_t, kLongestArg + 1> ix{};
  for (auto& i : ix) i = -1;
  for (size_t i = 0; i < std::size(kArgs); ++i) {
    if (kArgs[i].key.size() > kLongestArg || ix[kArgs[i].key.size()] >= 0)
      throw "two census args of one length";
    ix[kArgs[i].key.size()] = static_cast<int8_t>(i);
  }
  return ix;
}();
Arg arg_of(std::string_view k) {
  if (k.size() > kLongestArg || kArgByLength[k.size()] < 0) return Arg::Other;
  const ArgName& a = kArgs[static_cast<size_t>(kArgByLength[k.size()])];
  return a.key == k ? a.arg : Arg::Other;
}

void read_arg(trace_read::TraceParser& p, Arg a, Args& out) {
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

void read_distributed(trace_read::TraceParser& p, std::string& key, int64_t* rank, int64_t* world) {
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

void read_args(trace_read::TraceParser& p, int64_t* corr, Args& out) {
  if (p.ws() != '{') return p.skip();
  if (!p.open('{', '}')) return;
  do {
    Arg a = arg_of(p.key());
    p.expect(':');
    if (a == Arg::Corr)
      *corr = p.integer().value_or(-1);
    else
      read_arg(p, a, out);
  } while (p.more('}'));
}

void CensusFacts::merge(CensusFacts&& o, const std::vector<uint32_t>& names, uint32_t gpu_base) {
  steps_.insert(steps_.end(), o.steps_.begin(), o.steps_.end());
  const int32_t colls = static_cast<int32_t>(colls_.size());
  for (auto [at, e] : o.gpu_) {
    e.name = names[e.name];
    if (e.coll >= 0) e.coll += colls;
    gpu_.emplace_back(at + gpu_base, e);
  }
  for (uint32_t i : o.not_gpu_) not_gpu_.push_back(i + gpu_base);
  for (auto& c : o.colls_) colls_.push_back(std::move(c));
  launches_.insert(launches_.end(), o.launches_.begin(), o.launches_.end());
}

GpuCensus CensusFacts::census(const TorchTrace& t) const {
  GpuCensus g;
  g.path = t.path, g.rank = rank, g.names = &t.names, g.collectives = &colls_, g.steps = steps_;
  g.gpu.reserve(t.gpu.size() + gpu_.size() - std::min(t.gpu.size(), not_gpu_.size()));
  size_t x = 0, left_out = 0;
  for (size_t i = 0;; ++i) {
    for (; x < gpu_.size() && gpu_[x].first <= i; ++x) g.gpu.push_back(gpu_[x].second);
    if (i == t.gpu.size()) break;
    if (left_out < not_gpu_.size() && not_gpu_[left_out] == i) {
      ++left_out;
      continue;
    }
    const TraceEvent& e = t.gpu[i];
    g.gpu.push_back({e.ts, e.dur, e.corr, e.name, -1});
  }
  CensusLaunchTimes launched(g.gpu);
  for (const TraceLaunch& l : t.launches)
    if (l.census) launched.add(l.corr, l.ts);
  for (const auto& [corr, ts] : launches_) launched.add(corr, ts);
  g.launched = launched.take();
  return g;
}

}  // namespace census

std::optional<RankRun> trace_communication(const TorchTrace& t) {
  if (!t.census) return std::nullopt;
  std::map<std::string, CollectiveRow> colls;
  RankBreakdown b = rank_breakdown(t.census->census(t), &colls);
  return summarise_ranks({std::move(b)}, colls);
}

}  // namespace flopwise
