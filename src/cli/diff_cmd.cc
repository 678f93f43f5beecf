// src/cli/diff_cmd.cc — `flopwise diff A B`: compares two models or saved JSON reports (any mix). See
// flopwise/diff.h.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>

#include "commands.h"
#include "flopwise/analyse.h"
#include "flopwise/calibration.h"
#include "flopwise/convention.h"
#include "flopwise/cost.h"
#include "flopwise/diff.h"
#include "flopwise/errors.h"
#include "flopwise/formats.h"
#include "flopwise/parallel.h"
#include "flopwise/report_io.h"
#include "flopwise/run_diff.h"
#include "flopwise/torch_trace.h"
#include "flopwise/training.h"
#include "flopwise/writers.h"
#include "output.h"

namespace flopwise {

namespace {

struct DiffArgs {
  std::string a, b;
  std::vector<std::string> inputs, dims, values;
  std::string program;  // --program: a .pt2 archive's, on both sides
  std::string format = "text", output, sort = "flops", convention;
  int top = -1;
  TrainArgs train;
  std::string predict;   // a calibration file
  std::string parallel;  // --parallel SPEC on both sides
};

// A model is loaded and analysed with the pins (and its training step with --train); a saved report is read
// as it is.
AnalysedReport open_side(const std::string& path, const InferOptions& pins, bool have_pins,
                         const Convention& conv, const TrainOptions* train, const Calibration* calib,
                         const std::string& calib_path, const ParallelConfig* parallel) {
  if (detect_format(path) == ModelFormat::ReportJson || looks_like_json_report(path)) {
    if (have_pins || train || calib)
      std::cerr << "flopwise: note: " << path
                << " is a saved report; --input/--dim/--value, --train and --predict do not apply to it\n";
    return read_report_json(path);
  }
  Analysis a = analyse(path, pins, conv);
  if (train)
    a.report.training = std::make_shared<TrainingReport>(analyse_training(*a.model, a.report, *train));
  if (calib)
    a.report.prediction = std::make_shared<LatencyPrediction>(predict_latency(a.report, *calib, calib_path));
  if (parallel)
    a.report.parallel =
        std::make_shared<ParallelReport>(analyse_parallel(*a.model, a.report, *a.report.training, *parallel));
  return std::move(a.report);
}

// A diff of models or saved reports as its writers take it: with --parallel on both sides, text and markdown
// add the ranks' figures after the diff.
struct DiffSides {
  const Diff& d;
  const AnalysedReport &a, &b;
  DiffFormatOptions fo;
};
void diff_text(std::ostream& os, const DiffSides& s) {
  write_diff_text(os, s.d, s.fo);
  if (s.a.parallel && s.b.parallel) write_parallel_diff(os, *s.a.parallel, *s.b.parallel, false);
}
void diff_json(std::ostream& os, const DiffSides& s) { write_diff_json(os, s.d, s.fo); }
void diff_markdown(std::ostream& os, const DiffSides& s) {
  write_diff_markdown(os, s.d, s.fo);
  if (s.a.parallel && s.b.parallel) write_parallel_diff(os, *s.a.parallel, *s.b.parallel, true);
}
void diff_html(std::ostream& os, const DiffSides& s) { write_diff_html(os, s.d); }

using DiffWriter = void (*)(std::ostream& os, const DiffSides& s);
const FormatTable<DiffWriter>& diff_writers() {
  using F = OutputFormat;
  static const FormatTable<DiffWriter> table("a diff of models or saved reports",
                                             {
                                                 {F::Text, diff_text},
                                                 {F::Json, diff_json},
                                                 {F::Markdown, diff_markdown},
                                                 {F::Html, diff_html},
                                             });
  return table;
}

}  // namespace

int run_diff(int argc, char** argv) {
  DiffArgs o;
  CLI::App app{"flopwise diff: compare two models or saved JSON reports (A -> B)", "flopwise diff"};
  app.add_option(
      "a", o.a,
      "model A (.onnx, .pt), a saved report (flopwise M --format json -o a.json), or a measured run "
      "report (flopwise run M --format json -o a.json)");
  app.add_option("b", o.b, "model B or a saved report");
  app.add_option("--input,-i", o.inputs, "pin an input on both sides: NAME:1x3x224x224[:dtype]");
  app.add_option("--dim,-d", o.dims, "bind a symbolic dim on both sides: batch=8");
  app.add_option("--value", o.values, "pin the contents of a shape-like input on both sides: NAME=4,2");
  app.add_option("--program", o.program, "the program of a .pt2 archive that holds several, on both sides");
  app.add_option("--format,-f", o.format,
                 diff_writers().help() + " (html: models side by side; not for run reports); csv: traces")
      ->check(CLI::IsMember([] {
        auto v = diff_writers().choices();
        v.push_back("csv");  // of traces (trace_census_cmd.cc)
        return v;
      }()));
  app.add_option("--output,-o", o.output, "write the diff to FILE instead of stdout");
  app.add_option("--top", o.top, "entries per section (default: 20 in text/markdown, all in JSON)");
  app.add_option("--sort", o.sort,
                 "quantity that ranks the largest changes: params | macs | flops | memory_bytes")
      ->check(CLI::IsMember({"params", "macs", "flops", "memory_bytes"}));
  app.add_option("--convention", o.convention,
                 "counting convention of the FLOPs of a model side (" + convention_names() +
                     "); saved reports keep theirs, and two sides of different conventions are not compared");
  add_train_options(app, o.train, true);
  app.add_option("--predict", o.predict,
                 "a calibration file (flopwise calibrate): both sides' predicted latency and its change");
  app.add_option(
      "--parallel", o.parallel,
      "the cost per GPU at scale on both sides (implies --train; docs/parallel.md): text and markdown "
      "add the ranks' figures side by side");
  TraceSetArgs sets;
  add_trace_set_options(app, sets);
  if (auto code = parse_command_line(app, argc, argv, "diff")) return *code;
  const OutputFormat format = parse_format(o.format);
  if (trace_set_given(sets)) return run_trace_count_diff(sets, format, o.output, o.top);
  if (o.a.empty() || o.b.empty()) throw UsageError("diff takes two models, reports or traces: A and B");

  // Two PyTorch profiler traces: measured time by scope, op and kernel, with FLOPs (trace_cmd.cc).
  const bool trace_a = looks_like_torch_trace(o.a), trace_b = looks_like_torch_trace(o.b);
  if (trace_a || trace_b) {
    if (trace_a != trace_b)
      throw UsageError((trace_a ? o.a : o.b) + " is a PyTorch trace and " + (trace_a ? o.b : o.a) +
                       " is not: diff two traces, or two models / reports");
    sets.a = o.a, sets.b = o.b;
    return run_trace_count_diff(sets, format, o.output, o.top);
  }

  // Two measured run reports (flopwise run ... --format json): latency and FLOP/s deltas.
  const bool run_a = is_run_report(o.a), run_b = is_run_report(o.b);
  if (run_a || run_b) {
    if (run_a != run_b)
      throw UsageError((run_a ? o.a : o.b) + " is a measured run report and " + (run_a ? o.b : o.a) +
                       " is not: diff two run reports, or two models / static reports");
    const RunDiffWriter write = run_diff_writers().writer(format);
    std::ofstream file;
    std::ostream* os = &output_stream(o.output, file);
    write(*os, diff_run_reports(o.a, o.b), o.top);
    os->flush();
    return kExitOk;
  }

  const DiffWriter write = diff_writers().writer(format);
  Pins pins = parse_pins(o.inputs, o.dims, o.values);
  pins.program = o.program;
  bool have_pins = !o.inputs.empty() || !o.dims.empty() || !o.values.empty();

  const Convention& conv = find_convention(o.convention.empty() ? "default" : o.convention);
  TrainArgs targs = o.train;
  targs.train = targs.train || !o.parallel.empty();
  const std::optional<TrainOptions> train = targs.options();
  std::optional<ParallelConfig> par;
  if (!o.parallel.empty()) par = parse_parallel(o.parallel);
  std::optional<Calibration> calib;
  if (!o.predict.empty()) calib = read_calibration(o.predict);
  const Calibration* cp = calib ? &*calib : nullptr;
  const ParallelConfig* pp = par ? &*par : nullptr;
  AnalysedReport ra = open_side(o.a, pins, have_pins, conv, train ? &*train : nullptr, cp, o.predict, pp);
  AnalysedReport rb = open_side(o.b, pins, have_pins, conv, train ? &*train : nullptr, cp, o.predict, pp);
  if (ra.convention != rb.convention)
    throw UsageError("cannot compare FLOPs counted in different conventions: " + o.a + " is '" +
                     ra.convention + "', " + o.b + " is '" + rb.convention +
                     "' (re-save one with --convention)");
  ra.path = o.a;  // name the sides as the user did
  rb.path = o.b;
  Diff d = diff_reports(ra, rb, DiffOptions{o.sort});

  std::ofstream file;
  std::ostream* os = &output_stream(o.output, file);
  write(*os, DiffSides{d, ra, rb, DiffFormatOptions{o.top}});
  os->flush();
  return kExitOk;
}

}  // namespace flopwise
