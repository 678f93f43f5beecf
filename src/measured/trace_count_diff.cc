// src/measured/trace_count_diff.cc — counts and times by name of one side's trace files (a trace, or a set of
// rank files), per profiler step as HTA assigns events to steps, and the diff of two sides in HTA's TraceDiff
// categories (flopwise/trace_census.h).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <unordered_map>

#include "census_parallel.h"
#include "flopwise/errors.h"
#include "flopwise/trace_census.h"
#include "trace_census_facts.h"

namespace flopwise {

namespace census {

constexpr std::string_view kStepPrefix = "ProfilerStep";

int64_t step_number(const std::string& name) {
  if (name.compare(0, kStepPrefix.size(), kStepPrefix) != 0) return -1;
  size_t i = kStepPrefix.size();
  while (i < name.size() && name[i] == ' ') ++i;
  if (i >= name.size() || name[i] != '#') return -1;
  ++i;
  while (i < name.size() && name[i] == ' ') ++i;
  if (i >= name.size() || name[i] < '0' || name[i] > '9') return -1;
  return std::strtoll(name.c_str() + i, nullptr, 10);
}

}  // namespace census

namespace {

using census::step_number;

// One file's counts per step (-1: outside every step), per side.
struct FileCounts {
  std::string path, device;
  int64_t rank = -1;
  std::map<int64_t, std::map<std::string, CountTime>> cpu, gpu;
};

FileCounts count_file(const std::string& path) {
  TraceCensus c = read_trace_census(path);
  std::vector<int64_t> step = census_event_steps(c, census_steps(c));
  FileCounts f{path, c.device, c.rank, {}, {}};
  for (size_t i = 0; i < c.events.size(); ++i) {
    const CensusEvent& e = c.events[i];
    auto& side = e.stream == -1 ? f.cpu : f.gpu;
    CountTime& ct = side[step[i]][c.names[e.name]];
    ++ct.count;
    ct.time_us += e.dur;
  }
  return f;
}

CountChange change_of(double a, double b, bool in_a, bool in_b) {
  if (!in_a) return CountChange::Added;
  if (!in_b) return CountChange::Deleted;
  return b > a ? CountChange::Increased : b < a ? CountChange::Decreased : CountChange::Unchanged;
}

std::vector<CountDiffRow> diff_side(const std::map<std::string, CountTime>& a,
                                    const std::map<std::string, CountTime>& b) {
  std::vector<CountDiffRow> rows;
  std::map<std::string, std::pair<const CountTime*, const CountTime*>> both;
  for (const auto& [n, ct] : a) both[n].first = &ct;
  for (const auto& [n, ct] : b) both[n].second = &ct;
  for (const auto& [n, p] : both) {
    CountDiffRow r;
    r.name = n;
    if (p.first) r.a = *p.first;
    if (p.second) r.b = *p.second;
    const bool in_a = r.a.count > 0, in_b = r.b.count > 0;
    r.change = change_of(static_cast<double>(r.a.count), static_cast<double>(r.b.count), in_a, in_b);
    r.time_change = change_of(r.a.time_us, r.b.time_us, in_a, in_b);
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace

std::vector<CensusStep> census_steps(const TraceCensus& c) {
  std::vector<int64_t> number(c.names.size(), -2);
  std::vector<CensusStep> steps;
  for (const CensusEvent& e : c.events) {
    int64_t& n = number[e.name];
    if (n == -2) n = step_number(c.names[e.name]);
    if (n >= 0) steps.push_back({n, e.ts, e.dur});
  }
  return steps;
}

std::vector<int64_t> census_event_steps(const TraceCensus& c, const std::vector<CensusStep>& steps) {
  std::vector<int64_t> out(c.events.size(), -1);
  auto step_at = [&](double ts) {
    int64_t s = -1;  // HTA: the last step in trace order whose [ts, ts + dur) holds it
    for (const CensusStep& st : steps)
      if (st.ts <= ts && ts < st.ts + st.dur) s = st.number;
    return s;
  };
  std::unordered_map<int64_t, size_t> launch;  // correlation -> its CPU-side event
  for (size_t i = 0; i < c.events.size(); ++i) {
    const CensusEvent& e = c.events[i];
    if (e.stream < 0) {
      out[i] = step_at(e.ts);
      if (e.corr != -1) launch[e.corr] = i;
    }
  }
  for (size_t i = 0; i < c.events.size(); ++i) {
    const CensusEvent& e = c.events[i];
    if (e.stream > 0 && e.corr >= 0) {
      auto it = launch.find(e.corr);
      if (it != launch.end()) out[i] = out[it->second];
    } else if (e.stream == 0 && c.cats[e.cat] == "cpu_op") {  // triton launches: stream 0, no correlation
      out[i] = step_at(e.ts);
    }
  }
  return out;
}

std::vector<std::string> census_files(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {path};
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    const std::string p = entry.path().string();
    auto ends = [&](std::string_view s) {
      return p.size() >= s.size() && p.compare(p.size() - s.size(), s.size(), s) == 0;
    };
    if (entry.is_regular_file(ec) && (ends(".json") || ends(".json.gz"))) files.push_back(p);
  }
  if (ec) throw InputError(path + ": cannot list the directory (" + ec.message() + ")");
  std::sort(files.begin(), files.end());
  if (files.empty()) throw InputError(path + ": no *.json or *.json.gz trace files in the directory");
  return files;
}

CensusSummary summarise_census(const std::vector<std::string>& files, const CensusSelection& sel) {
  std::vector<FileCounts> per(files.size());
  census::for_each_file(files.size(), 0, [&](size_t i) { per[i] = count_file(files[i]); });
  for (size_t i = 0; i < per.size(); ++i)
    if (per[i].rank < 0) per[i].rank = static_cast<int64_t>(i);  // no distributedInfo: the file's place
  std::set<int64_t> ranks;
  for (const auto& f : per) ranks.insert(f.rank);
  std::set<int64_t> want_ranks(sel.ranks.begin(), sel.ranks.end());
  if (sel.first_rank) want_ranks = {*ranks.begin()};
  for (int64_t r : want_ranks)
    if (!ranks.count(r)) throw UsageError("rank " + std::to_string(r) + " is not among the traces' ranks");
  CensusSummary s;
  std::set<int64_t> steps;  // of the ranks counted
  for (const auto& f : per)
    if (want_ranks.empty() || want_ranks.count(f.rank))
      for (const auto& [st, m] : f.cpu)
        if (st >= 0) steps.insert(st);
  std::set<int64_t> want_steps(sel.steps.begin(), sel.steps.end());
  if (sel.first_step) {
    if (steps.empty()) throw UsageError("--steps first: the traces have no ProfilerStep#N annotations");
    want_steps = {*steps.begin()};
  }
  for (int64_t st : want_steps)
    if (!steps.count(st)) throw UsageError("step " + std::to_string(st) + " is not among the traces' steps");
  auto add = [&](const std::map<int64_t, std::map<std::string, CountTime>>& from,
                 std::map<std::string, CountTime>& to) {
    for (const auto& [st, m] : from) {
      if (!want_steps.empty() && !want_steps.count(st)) continue;
      for (const auto& [n, ct] : m) {
        to[n].count += ct.count;
        to[n].time_us += ct.time_us;
      }
    }
  };
  for (const auto& f : per) {
    if (!want_ranks.empty() && !want_ranks.count(f.rank)) continue;
    s.paths.push_back(f.path);
    s.ranks.push_back(f.rank);
    if (!f.device.empty()) s.devices.push_back(f.device);
    add(f.cpu, s.cpu);
    add(f.gpu, s.gpu);
  }
  s.steps.assign(want_steps.empty() ? steps.begin() : want_steps.begin(),
                 want_steps.empty() ? steps.end() : want_steps.end());
  return s;
}

const char* count_change_name(CountChange c) {
  static const char* const kNames[] = {"added", "deleted", "increased", "decreased", "unchanged"};
  return kNames[static_cast<int>(c)];
}

CountDiff diff_census(CensusSummary a, CensusSummary b) {
  CountDiff d;
  d.ops = diff_side(a.cpu, b.cpu);
  d.kernels = diff_side(a.gpu, b.gpu);
  d.a = std::move(a);
  d.b = std::move(b);
  return d;
}

}  // namespace flopwise
