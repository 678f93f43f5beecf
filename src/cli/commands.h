// src/cli/commands.h — the CLI's subcommands; main.cc's table of commands picks one by the first argument.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "flopwise/formats.h"
#include "flopwise/trace_census.h"
#include "flopwise/training.h"

namespace CLI {
class App;
}

namespace flopwise {

// `flopwise diff A B [options]`: argv[0] is "diff". Returns the exit code; throws flopwise::Error.
int run_diff(int argc, char** argv);
// `flopwise check MODEL --budget FILE [options]`: argv[0] is "check".
int run_check(int argc, char** argv);
// `flopwise run MODEL.pt [options]`: argv[0] is "run".
int run_run(int argc, char** argv);
// `flopwise calibrate RUN.json... [-o CALIB.json]`: argv[0] is "calibrate" (calibrate_cmd.cc).
int run_calibrate(int argc, char** argv);
// `flopwise trace TRACE.json[.gz] [options]`: argv[0] is "trace" (trace_cmd.cc).
int run_trace(int argc, char** argv);
// The census views (trace_census_cmd.cc): two traces or two sets of rank files compared by count and time
// (--a DIR --b DIR, --ranks, --steps), and `flopwise trace DIR` of a distributed run's rank files.
struct TraceSetArgs {
  std::string a, b, ranks, steps, a_ranks, b_ranks, a_steps, b_steps;
};
void add_trace_set_options(CLI::App& app, TraceSetArgs& t);
bool trace_set_given(const TraceSetArgs& t);
int run_trace_count_diff(const TraceSetArgs& t, OutputFormat format, const std::string& output, int top);
int run_trace_ranks(const std::string& dir, OutputFormat format, const std::string& output, int top);
// After a single trace's text: its communication kernels' time, overlap and collectives (the trace read as
// one rank: TraceReport::communication), when it has any.
void append_trace_communication(std::ostream& os, const RankRun& run, int top);

// Parses argv into `app`: nullopt to go on; else the exit code, after --help's text or, for a parse error,
// one line "flopwise[ COMMAND]: error: ... (see flopwise[ COMMAND] --help)" (exit 2). `command`: "" for the
// static report, "diff", "check", "run" (parse.cc).
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, const std::string& command);

// The training step's options (--train, --freeze, --checkpoint, --optimizer), as the static report and diff
// take them (parse.cc). `both`: diff's wording ("on both sides").
struct TrainArgs {
  bool train = false;
  std::vector<std::string> freeze, checkpoint;
  std::string optimizer = "adamw";
  std::string precision = "fp32";
  std::string device = "cuda";
  // The options with --train; nullopt without. Throws UsageError for a training option without --train
  // (`also`: another such option the command has set, named in the message) or an unknown optimizer.
  std::optional<TrainOptions> options(bool also = false, const char* also_name = "") const;
};
void add_train_options(CLI::App& app, TrainArgs& t, bool both);

// When an argument names a TorchScript file: forks; the child returns nullopt and runs the command with its
// archive loads limited and watched; the parent returns the command's exit code (contain.cc).
std::optional<int> contain_torchscript_loads(int argc, char** argv);

// The CLI's heap (heap.cc), where the executable links jemalloc and was built with its header
// (libjemalloc-dev); no-ops otherwise. start_heap_prefault: fresh heap memory faulted in on a second
// thread while this one analyses, and huge pages turned off past the first 64 MiB of it; a no-op where
// the kernel lacks MADV_POPULATE_WRITE or FLOPWISE_PREFAULT=0. Called once, after any fork
// (contain_torchscript_loads), and not for `run` (its timings stay undisturbed).
// heap_without_huge_pages: no transparent huge pages for this process from now on (a streamed trace).
void start_heap_prefault();
void heap_without_huge_pages();

}  // namespace flopwise
