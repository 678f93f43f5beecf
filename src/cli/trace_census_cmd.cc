// src/cli/trace_census_cmd.cc — the census views of PyTorch traces (flopwise/trace_census.h): `flopwise diff
// A B` of two traces or `--a DIR --b DIR` of two sets of rank files (counts and time by name in HTA's
// TraceDiff categories, with the priced diff of two single traces), and `flopwise trace DIR` of a distributed
// run's rank files (diff_cmd.cc and trace_cmd.cc hand them over).
#include <CLI/CLI.hpp>
#include <fstream>

#include "commands.h"
#include "flopwise/errors.h"
#include "flopwise/trace_census_report.h"
#include "output.h"

namespace flopwise {

namespace {

// "first", or a comma list of integers ("0,3", "1009").
void parse_pick(const std::string& text, const char* what, std::vector<int64_t>* list, bool* first) {
  if (text.empty()) return;
  if (text == "first") {
    *first = true;
    return;
  }
  size_t at = 0;
  while (at <= text.size()) {
    size_t comma = text.find(',', at);
    std::string part = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    char* end = nullptr;
    long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || v < 0)
      throw UsageError(std::string(what) + " takes 'first' or a comma list of numbers, not '" + text + "'");
    list->push_back(v);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
}

CensusSelection selection(const std::string& ranks, const std::string& steps) {
  CensusSelection s;
  parse_pick(ranks, "--ranks", &s.ranks, &s.first_rank);
  parse_pick(steps, "--steps", &s.steps, &s.first_step);
  return s;
}

}  // namespace

void add_trace_set_options(CLI::App& app, TraceSetArgs& t) {
  app.add_option("--a", t.a, "traces: a directory of rank files (or one trace) as side A");
  app.add_option("--b", t.b, "traces: a directory of rank files (or one trace) as side B");
  app.add_option("--ranks", t.ranks,
                 "traces: the ranks counted on both sides: 'first' or 0,1,...; default all");
  app.add_option(
      "--steps", t.steps,
      "traces: the profiler steps counted on both sides: 'first' or 1009,1010,...; default the whole "
      "trace");
  app.add_option("--a-ranks", t.a_ranks, "traces: side A's ranks (over --ranks)");
  app.add_option("--b-ranks", t.b_ranks, "traces: side B's ranks (over --ranks)");
  app.add_option("--a-steps", t.a_steps, "traces: side A's steps (over --steps)");
  app.add_option("--b-steps", t.b_steps, "traces: side B's steps (over --steps)");
}

bool trace_set_given(const TraceSetArgs& t) { return !t.a.empty() || !t.b.empty(); }

int run_trace_count_diff(const TraceSetArgs& t, const std::string& format, const std::string& output,
                         int top) {
  if (t.a.empty() || t.b.empty()) throw UsageError("--a and --b go together: one side each");
  static const char* const kFormats[] = {"text", "json", "csv", "markdown", "md", "html"};
  if (std::find(std::begin(kFormats), std::end(kFormats), format) == std::end(kFormats))
    throw UsageError("a diff of PyTorch traces is written as text, json, csv, markdown or html, not " +
                     format);
  const std::vector<std::string> fa = census_files(t.a), fb = census_files(t.b);
  CensusSelection sa =
      selection(t.a_ranks.empty() ? t.ranks : t.a_ranks, t.a_steps.empty() ? t.steps : t.a_steps);
  CensusSelection sb =
      selection(t.b_ranks.empty() ? t.ranks : t.b_ranks, t.b_steps.empty() ? t.steps : t.b_steps);
  CountDiff d = diff_census(summarise_census(fa, sa), summarise_census(fb, sb));
  // Two single traces: the priced diff (FLOPs and GPU time by scope, op and kernel) too.
  std::optional<TraceReport> ra, rb;
  std::optional<TraceDiff> priced;
  if (fa.size() == 1 && fb.size() == 1 && format != "csv") {
    ra = analyse_trace_file(fa[0]);
    rb = analyse_trace_file(fb[0]);
    priced = diff_traces(*ra, *rb);
  }
  CountDiffOptions o{top < 0 && format != "json" ? 20 : top, priced ? &*priced : nullptr};
  std::ofstream file;
  std::ostream& os = output_stream(output, file);
  if (format == "json")
    write_count_diff_json(os, d, o);
  else if (format == "csv")
    write_count_diff_csv(os, d);
  else if (format == "markdown" || format == "md")
    write_count_diff_markdown(os, d, o);
  else if (format == "html")
    write_count_diff_html(os, d, o);
  else
    write_count_diff_text(os, d, o);
  os.flush();
  return kExitOk;
}

void append_trace_communication(std::ostream& os, const std::string& path, int top) {
  std::map<std::string, CollectiveRow> colls;
  RankBreakdown b = rank_breakdown(read_trace_census(path, CensusKeep::GpuSide), &colls);
  if (b.comm_time_us <= 0) return;
  RankRun run = summarise_ranks({b}, colls);
  os << "\ncommunication (NCCL/RCCL kernels, as HTA classifies them; flopwise trace DIR for every rank)\n";
  write_ranks_text(os, run, top);
}

int run_trace_ranks(const std::string& dir, const std::string& format, const std::string& output, int top) {
  if (format == "html")
    throw UsageError("a directory of rank files is written as text, json or csv, not html");
  RankRun run = analyse_ranks(census_files(dir));
  std::ofstream file;
  std::ostream& os = output_stream(output, file);
  if (format == "json")
    write_ranks_json(os, run);
  else if (format == "csv")
    write_ranks_csv(os, run);
  else
    write_ranks_text(os, run, top);
  os.flush();
  return kExitOk;
}

}  // namespace flopwise
