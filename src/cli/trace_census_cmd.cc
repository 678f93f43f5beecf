// src/cli/trace_census_cmd.cc — the census views of PyTorch traces (flopwise/trace_census.h): `flopwise diff
// A B` of two traces or `--a DIR --b DIR` of two sets of rank files (counts and time by name in HTA's
// TraceDiff categories, with the priced diff of two single traces), and `flopwise trace DIR` of a distributed
// run's rank files (diff_cmd.cc and trace_cmd.cc hand them over).
#include <CLI/CLI.hpp>
#include <fstream>

#include "commands.h"
#include "flopwise/errors.h"
#include "flopwise/formats.h"
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

// A census diff's writer, and what it writes: the priced diff of two single traces (not csv), every row
// by default (json) or the top 20.
struct CountDiffWriter {
  void (*write)(std::ostream& os, const CountDiff& d, const CountDiffOptions& o);
  bool priced, all_rows;
};
const FormatTable<CountDiffWriter>& count_diff_writers() {
  using F = OutputFormat;
  static const FormatTable<CountDiffWriter> table(
      "a diff of PyTorch traces", {
                                      {F::Text, {write_count_diff_text, true, false}},
                                      {F::Json, {write_count_diff_json, true, true}},
                                      {F::Csv,
                                       {[](std::ostream& os, const CountDiff& d, const CountDiffOptions&) {
                                          write_count_diff_csv(os, d);
                                        },
                                        false, false}},
                                      {F::Markdown, {write_count_diff_markdown, true, false}},
                                      {F::Html, {write_count_diff_html, true, false}},
                                  });
  return table;
}

// A distributed run's rank files (flopwise trace DIR).
using RanksWriter = void (*)(std::ostream& os, const RankRun& r, int top);
const FormatTable<RanksWriter>& ranks_writers() {
  using F = OutputFormat;
  static const FormatTable<RanksWriter> table(
      "trace DIR (rank files)",
      {
          {F::Text, write_ranks_text},
          {F::Json, [](std::ostream& os, const RankRun& r, int) { write_ranks_json(os, r); }},
          {F::Csv, [](std::ostream& os, const RankRun& r, int) { write_ranks_csv(os, r); }},
      });
  return table;
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

int run_trace_count_diff(const TraceSetArgs& t, OutputFormat format, const std::string& output, int top) {
  if (t.a.empty() || t.b.empty()) throw UsageError("--a and --b go together: one side each");
  heap_without_huge_pages();  // traces are streamed (heap.cc)
  const CountDiffWriter& writer = count_diff_writers().writer(format);
  const std::vector<std::string> fa = census_files(t.a), fb = census_files(t.b);
  CensusSelection sa =
      selection(t.a_ranks.empty() ? t.ranks : t.a_ranks, t.a_steps.empty() ? t.steps : t.a_steps);
  CensusSelection sb =
      selection(t.b_ranks.empty() ? t.ranks : t.b_ranks, t.b_steps.empty() ? t.steps : t.b_steps);
  CountDiff d = diff_census(summarise_census(fa, sa), summarise_census(fb, sb));
  // Two single traces: the priced diff (FLOPs and GPU time by scope, op and kernel) too.
  std::optional<TraceReport> ra, rb;
  std::optional<TraceDiff> priced;
  if (fa.size() == 1 && fb.size() == 1 && writer.priced) {
    ra = analyse_trace_file(fa[0]);
    rb = analyse_trace_file(fb[0]);
    priced = diff_traces(*ra, *rb);
  }
  CountDiffOptions o{top < 0 && !writer.all_rows ? 20 : top, priced ? &*priced : nullptr};
  std::ofstream file;
  std::ostream& os = output_stream(output, file);
  writer.write(os, d, o);
  os.flush();
  return kExitOk;
}

void append_trace_communication(std::ostream& os, const RankRun& run, int top) {
  if (run.ranks.empty() || run.ranks[0].comm_time_us <= 0) return;
  os << "\ncommunication (NCCL/RCCL kernels, as HTA classifies them; flopwise trace DIR for every rank)\n";
  write_ranks_text(os, run, top);
}

int run_trace_ranks(const std::string& dir, OutputFormat format, const std::string& output, int top) {
  heap_without_huge_pages();  // traces are streamed (heap.cc)
  const RanksWriter write = ranks_writers().writer(format);
  RankRun run = analyse_ranks(census_files(dir));
  std::ofstream file;
  std::ostream& os = output_stream(output, file);
  write(os, run, top);
  os.flush();
  return kExitOk;
}

}  // namespace flopwise
