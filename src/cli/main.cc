// src/cli/main.cc — flopwise CLI: the program boundary. The only place errors become messages and exit codes.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <memory>
#include <new>
#include <optional>
#include <sstream>

#include "commands.h"
#include "flopwise/analyse.h"
#include "flopwise/budget.h"
#include "flopwise/calibration.h"
#include "flopwise/convention.h"
#include "flopwise/cost.h"
#include "flopwise/errors.h"
#include "flopwise/formats.h"
#include "flopwise/json_text.h"
#include "flopwise/llm.h"
#include "flopwise/parallel.h"
#include "flopwise/peak_memory.h"
#include "flopwise/roofline.h"
#include "flopwise/sweep.h"
#include "flopwise/training.h"
#include "flopwise/writers.h"
#include "output.h"

namespace fw = flopwise;

namespace {

struct Options {
  std::string model;
  std::vector<std::string> inputs, dims, values;
  std::string program;  // --program: a .pt2 archive's program
  std::string format = "text";
  std::string output;
  std::string convention = "default";
  int depth = -1;
  int top = 3;
  bool strict = false;
  bool list_ops = false;
  std::string list;                  // conventions | devices | formats
  std::vector<std::string> explain;  // two convention names
  std::vector<std::string> sweeps;   // NAME=values
  std::string phase;                 // prefill / decode
  int64_t prompt = -1, generate = -1;
  std::string hardware, hardware_file;  // roofline
  bool peak_memory = false;
  bool causal = false;
  fw::TrainArgs train;
  std::string fit;                      // a size: 24GB
  std::string predict;                  // a calibration file (flopwise calibrate)
  std::string parallel, parallel_plan;  // --parallel SPEC, --parallel-plan FILE
};

fw::InferOptions infer_options(const Options& o) {
  fw::InferOptions pins = fw::parse_pins(o.inputs, o.dims, o.values);
  pins.program = o.program;
  return pins;
}

// --list NAME: the names of a table, one per line.
struct NameList {
  const char* name;
  std::vector<std::string> (*names)();
};
const std::vector<NameList>& name_lists() {
  static const std::vector<NameList> table = {
      {"conventions",
       [] {
         std::vector<std::string> v;
         for (const auto& c : fw::conventions()) v.emplace_back(c.name);
         return v;
       }},
      {"devices", [] { return fw::hardware_names(); }},
      {"formats",
       [] {
         std::vector<std::string> v;
         for (const auto& f : fw::formats()) v.emplace_back(f.name);
         return v;
       }},
  };
  return table;
}
const NameList& find_list(const std::string& name) {
  for (const NameList& l : name_lists())
    if (name == l.name) return l;
  throw fw::UsageError("--list takes conventions, devices or formats, not " + name);  // CLI11 checks first
}

// --generate: the report formats that write a generation.
const std::vector<fw::OutputFormat> kGenerationFormats = {fw::OutputFormat::Text, fw::OutputFormat::Json,
                                                          fw::OutputFormat::Markdown, fw::OutputFormat::Html};

// --sweep's writers (flopwise/sweep.h; html: the report's page, its analyses too, with the sweep plotted).
using SweepWriter = void (*)(std::ostream& os, const fw::Sweep& s, const fw::AnalysedReport& r);
template <void (*write)(std::ostream&, const fw::Sweep&, const fw::Report&)>
void sweep_of_costs(std::ostream& os, const fw::Sweep& s, const fw::AnalysedReport& r) {
  write(os, s, r);
}
const fw::FormatTable<SweepWriter>& sweep_writers() {
  using F = fw::OutputFormat;
  static const fw::FormatTable<SweepWriter> table(
      "--sweep", {
                     {F::Text, sweep_of_costs<fw::write_sweep_text>},
                     {F::Json, sweep_of_costs<fw::write_sweep_json>},
                     {F::Csv, sweep_of_costs<fw::write_sweep_csv>},
                     {F::Markdown, sweep_of_costs<fw::write_sweep_markdown>},
                     {F::Html, [](std::ostream& os, const fw::Sweep& s,
                                  const fw::AnalysedReport& r) { fw::write_html(os, r, &s); }},
                 });
  return table;
}

int run(const Options& o) {
  const fw::Convention& conv = fw::find_convention(o.convention);
  const fw::OutputFormat format = fw::parse_format(o.format);
  if (o.list_ops) {
    fw::write_op_list(std::cout, conv);
    return fw::kExitOk;
  }
  if (!o.list.empty()) {  // one name per line, from the tables themselves (scripts/readme_lists.py)
    for (const std::string& name : find_list(o.list).names()) std::cout << name << "\n";
    return fw::kExitOk;
  }
  if (o.model.empty()) throw fw::UsageError("no model given (usage: flopwise MODEL.onnx [options]; --help)");
  fw::InferOptions io = infer_options(o);
  fw::CostOptions copts;
  copts.causal = o.causal;
  // The models and the report stay allocated until the process ends: on a 1 M-node graph, freeing them
  // object by object costs ~15 % of the run, and the OS reclaims the memory at once. Held from a static
  // list, they stay reachable (no leak report under LeakSanitizer).
  static auto* keep = new std::vector<std::shared_ptr<const void>>;
  if (!o.explain.empty()) {
    const fw::Convention& ca = fw::find_convention(o.explain[0]);
    const fw::Convention& cb = fw::find_convention(o.explain[1]);
    fw::Analysis a = fw::analyse(o.model, io, ca, copts);
    fw::Report b = fw::build_report(*a.model, a.inferred, cb, copts);
    std::ofstream file;
    fw::write_explain(fw::output_stream(o.output, file), *a.model, a.report, b, ca, cb);
    return fw::kExitOk;
  }
  std::vector<fw::SweepAxis> axes;
  for (const auto& s : o.sweeps) axes.push_back(fw::parse_sweep(s));
  // LLM phases: the cache is found once, with the dims unbound (a --dim past=2047 must not hide which dim is
  // the cached length), its bytes per token then taken at the user's bindings.
  fw::LlmRequest llm;
  llm.prompt = o.prompt;
  llm.generate = o.generate;
  const bool generation = llm.generation();
  const bool plan_llm = !o.phase.empty() || generation || o.peak_memory;
  // The file is read and parsed once. Where the command analyses it more than once (the unbound graph for the
  // plan, a generation's steps, a sweep's points the formulas cannot give), each analysis binds its pins on a
  // copy of the loaded model; otherwise the one analysis works on the loaded model itself.
  std::optional<fw::LoadedModel> loaded;
  if (plan_llm || !axes.empty()) {
    loaded = fw::load(o.model, io);
    keep->push_back(loaded->model);
  }
  auto analyse = [&](const fw::InferOptions& pins, const fw::CostOptions& c) {
    return loaded ? fw::analyse(*loaded, pins, conv, c) : fw::analyse(o.model, pins, conv, c);
  };
  fw::LlmPlan plan;
  if (plan_llm) {
    fw::InferOptions unbound = io;
    unbound.dims.clear();
    const fw::Analysis plain = analyse(unbound, fw::CostOptions{});
    if (!o.phase.empty()) llm.phase = fw::parse_phase(o.phase);
    plan = fw::plan_llm(*plain.model, llm, io.dims);
    io.dims.insert(io.dims.end(), plan.bindings.begin(), plan.bindings.end());
    if (generation) fw::require_format("--generate", kGenerationFormats, format);
  }
  const std::optional<fw::KvCache>& kv = plan.kv;
  const std::string& phase_note = plan.note;
  auto reanalyse = [&](const fw::Bindings& extra) -> fw::Report {  // a step's or a sweep point's costs
    fw::InferOptions at = io;
    for (const auto& d : extra) at.dims.push_back(d);
    return analyse(at, copts).report;
  };
  auto analysis = std::make_shared<fw::Analysis>(analyse(io, copts));
  if (!phase_note.empty()) analysis->report.notes.push_back(phase_note);
  // The LLM section (JSON "llm", markdown and HTML rows): the generation's steps are analysed here, before
  // any report is written; text prints the same generation after its report. A sweep writes no
  // generation: its steps are not analysed then.
  if (llm.any() && !(generation && !axes.empty())) analysis->report.llm = fw::llm_section(plan, reanalyse);
  if (o.peak_memory) {
    analysis->report.peak_memory = std::make_shared<fw::PeakMemory>(fw::peak_memory(*analysis->model, kv));
  }
  fw::TrainArgs train = o.train;
  train.train = train.train || !o.parallel.empty();  // --parallel counts the training step
  if (!o.parallel_plan.empty() && o.parallel.empty())
    throw fw::UsageError("--parallel-plan needs --parallel");
  if (const std::optional<fw::TrainOptions> to = train.options(!o.fit.empty(), "--fit")) {
    auto training =
        std::make_shared<fw::TrainingReport>(fw::analyse_training(*analysis->model, analysis->report, *to));
    if (!o.fit.empty()) {
      std::optional<int64_t> limit = fw::parse_size(o.fit);
      if (!limit || *limit <= 0)
        throw fw::UsageError("--fit: '" + o.fit + "' is not a size (24GB, 80GiB, 24000000000)");
      fw::fit_training(*training, *limit);
    }
    analysis->report.training = training;
  }
  if (!o.hardware.empty() || !o.hardware_file.empty()) {
    fw::Hardware hw = fw::hardware_of(o.hardware, o.hardware_file);
    analysis->report.roofline = std::make_shared<fw::RooflineReport>(fw::roofline(analysis->report, hw));
  }
  if (!o.parallel.empty()) {
    const fw::ParallelConfig pc = fw::parse_parallel(o.parallel);
    const std::vector<fw::PlanRule> rules =
        o.parallel_plan.empty() ? std::vector<fw::PlanRule>{} : fw::read_plan_file(o.parallel_plan);
    const fw::Hardware* hw = analysis->report.roofline ? &analysis->report.roofline->hw : nullptr;
    analysis->report.parallel = std::make_shared<fw::ParallelReport>(
        fw::analyse_parallel(*analysis->model, analysis->report, *analysis->report.training, pc, rules, hw));
  }
  std::optional<fw::Calibration> calib;
  if (!o.predict.empty()) {
    calib = fw::read_calibration(o.predict);
    analysis->report.prediction =
        std::make_shared<fw::LatencyPrediction>(fw::predict_latency(analysis->report, *calib, o.predict));
  }
  keep->push_back(analysis);
  const fw::AnalysedReport& report = analysis->report;
  if (!axes.empty()) {
    const SweepWriter write_sweep = sweep_writers().writer(format);
    fw::Sweep sw = fw::run_sweep(report, axes, reanalyse);
    if (calib)  // --predict: each point's units evaluated from their formulas
      for (fw::SweepRow& row : sw.rows) {
        fw::DimValues at;
        for (size_t i = 0; i < sw.names.size(); ++i) at.emplace_back(sw.names[i], row.point[i]);
        const fw::LatencyPrediction p = fw::predict_latency(report, *calib, o.predict, &at);
        if (p.unpredicted == 0) row.predicted_ms = p.total_ms;
      }
    std::ofstream file;
    std::ostream& os = fw::output_stream(o.output, file);
    write_sweep(os, sw, report);
    os.flush();
    return fw::kExitOk;
  }

  std::ofstream file;
  std::ostream* os = &fw::output_stream(o.output, file);
  fw::TextOptions topts{o.depth, o.top};
  fw::report_writers().writer(format)(*os, report, topts);
  os->flush();

  if (o.strict && report.has_unknown_cost()) {
    std::ostringstream msg;
    msg << "--strict: ";
    if (!report.unsupported.empty()) msg << report.unsupported.size() << " unsupported op type(s); ";
    msg << report.totals.uncounted << " node(s) with unknown cost";
    fw::print_error("flopwise: ", "StrictError", msg.str());
    return fw::kExitStrict;
  }
  return fw::kExitOk;
}

}  // namespace

// Runs a command; the one place library errors become a message line and an exit code. A flopwise error is
// the input's or the user's (exit 2); anything else escaping the library is a bug of the tool (exit 70), as
// is running out of memory: the resource bounds (README: Limits) are meant to stop any input before that.
template <class F>
int guarded(F&& f) {
  try {
    return f();
  } catch (const fw::Error& e) {
    fw::print_error("flopwise: error: ", fw::error_class(e), e.what());
    return fw::kExitBadInput;
  } catch (const std::bad_alloc&) {
    fw::print_error("flopwise: internal error: ", "InternalError",
                    "out of memory (please report this with the input)");
  } catch (const std::exception& e) {
    fw::print_error("flopwise: internal error: ", "InternalError",
                    std::string(e.what()) + " (please report this with the input)");
  }
  return fw::kExitInternal;
}

namespace {

// The subcommands: `flopwise NAME ...` runs `run` on argv from NAME on; `help` is its lines in the static
// report's --help footer. `prefault`: the heap is faulted in ahead (not for `run`, whose timings it could
// disturb). No name: the static report (below).
struct Command {
  const char* name;
  int (*run)(int argc, char** argv);
  bool prefault;
  const char* help;
};
const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"diff", fw::run_diff, true,
       "  flopwise diff A B [options]             compare two models or saved JSON reports (diff --help)\n"},
      {"check", fw::run_check, true,
       "  flopwise check MODEL --budget FILE.toml  gate CI on budgets (check --help)\n"},
      {"run", fw::run_run, false,
       "  flopwise run MODEL.pt [options]          measure latency per module scope (run --help);\n"
       "  flopwise run MODEL.onnx --profile P.json  the same from an ONNX Runtime profile\n"},
      {"trace", fw::run_trace, true,
       "  flopwise trace TRACE.json[.gz]          a PyTorch profiler trace: measured time and FLOP/s by "
       "module "
       "scope and op (trace --help); flopwise diff TRACE_A TRACE_B compares two\n"},
      {"calibrate", fw::run_calibrate, true,
       "  flopwise calibrate RUN.json... -o C.json  fit latency per op type from measured runs; then "
       "flopwise MODEL --predict C.json\n"},
  };
  return table;
}

}  // namespace

int main(int argc, char** argv) {
  fw::escape_control_characters_in_std_streams();  // a model's names never reach the terminal raw
  if (std::optional<int> code = fw::contain_torchscript_loads(argc, argv))
    return *code;  // the watching parent
  for (const Command& c : commands())
    if (argc > 1 && std::string(argv[1]) == c.name) {
      if (c.prefault) fw::start_heap_prefault();  // after the fork above
      return guarded([&] { return c.run(argc - 1, argv + 1); });
    }
  fw::start_heap_prefault();
  Options o;
  CLI::App app{
      "flopwise: static cost (params, MACs, FLOPs, memory) of an ONNX or TorchScript model, by module scope"};
  std::string also = "Also:\n";
  for (const Command& c : commands()) also += c.help;
  app.footer(
      also +
      "Exit codes: 0 done, 1 a budget failed (check), 2 bad input or usage, 3 --strict and something not "
      "counted, 4 runtime harness not built (run), 5 the run failed (run), 6 --verify found a shape "
      "disagreement (run), 70 internal error (a bug in flopwise).");
  app.set_version_flag("--version", std::string("flopwise ") + fw::flopwise_version(),
                       "print the version (flopwise X.Y.Z) and exit");
  app.add_option("model", o.model, "model file (.onnx, or .pt TorchScript)");
  app.add_option("--input,-i", o.inputs,
                 "pin an input: NAME:1x3x224x224[:dtype], or a shape for inputs in order");
  app.add_option("--dim,-d", o.dims, "bind a symbolic dim: batch=8");
  app.add_option("--value", o.values, "pin the contents of a shape-like input: NAME=4,2");
  app.add_option("--program", o.program,
                 "the program of a .pt2 archive that holds several (default: the only one)");
  app.add_option("--format,-f", o.format, fw::report_writers().help())
      ->check(CLI::IsMember(fw::report_writers().choices()));
  app.add_option("--output,-o", o.output, "write the report to FILE instead of stdout");
  app.add_option("--depth", o.depth, "depth of the detailed module tree (-1: all)");
  app.add_option("--top", o.top, "modules per depth in the aggregated profile");
  app.add_flag("--strict", o.strict, "exit 3 when an op is unsupported or a cost is unknown");
  app.add_option(
      "--phase", o.phase,
      "an LLM phase of a decoder exported with a KV cache: prefill (past = 0) or decode (seq = 1); the cache "
      "is found by structure");
  app.add_option("--prompt", o.prompt, "with --generate: the prompt's length in tokens");
  app.add_option(
      "--generate", o.generate,
      "a generation summary (text, json, markdown, html): prefill of --prompt tokens, then decode steps to "
      "this many tokens");
  app.add_option(
      "--hardware", o.hardware,
      "roofline on a device of the table (" + fw::hardware_names_text() +
          "; NAME:tf32 runs float32 products at the TF32 rate): per scope time bound and the latency "
          "lower bound (text, JSON)");
  app.add_option("--hardware-file", o.hardware_file,
                 "roofline on a device described in a TOML file (docs/roofline.md)");
  app.add_flag(
      "--causal", o.causal,
      "count attention products (MatMul -> Softmax -> MatMul) without a causal mask's upper triangle, as "
      "flash-attention computes them: S(S-1)/2 of the S x T pairs per head skipped (stated in the report)");
  app.add_flag("--peak-memory", o.peak_memory,
               "peak activation memory by liveness over the graph (a formula in the dynamic dims; weights "
               "and KV cache apart)");
  fw::add_train_options(app, o.train, false);
  app.add_option(
      "--fit", o.fit,
      "with --train: a memory size (24GB, 80GiB): the largest value of the free dim (the batch) for "
      "which the training memory estimate fits it");
  app.add_option("--parallel", o.parallel,
                 "cost per GPU at scale (implies --train): dp=D,tp=T,pp=P,ep=E,cp=C,sp=on|off,zero=0-3,"
                 "fsdp=on|hybrid,microbatches=M,recompute=none|selective|full (docs/parallel.md)");
  app.add_option(
      "--parallel-plan", o.parallel_plan,
      "with --parallel: a tensor-parallel plan file, lines 'SCOPE_GLOB colwise|rowwise|sequence|replicate'");
  app.add_option("--predict", o.predict,
                 "a calibration file (flopwise calibrate): predicted latency per scope and in total on the "
                 "device it was measured on, with its error band");
  app.add_option(
      "--sweep", o.sweeps,
      "evaluate the cost formulas over a grid of dims: seq=128,256,512 (list), batch=1..32 (doubling), "
      "H=64..512:32 (step); repeat for a grid");
  app.add_option("--list", o.list, "print the names of: conventions | devices (of --hardware) | formats")
      ->check(CLI::IsMember([] {
        std::vector<std::string> v;
        for (const NameList& l : name_lists()) v.emplace_back(l.name);
        return v;
      }()));
  app.add_flag("--list-ops", o.list_ops,
               "print the op registry: op, opset range, FLOPs formula (of --convention)");
  app.add_option("--explain", o.explain,
                 "reconcile the FLOPs of two conventions per op type: --explain default torchvision")
      ->expected(2);
  app.add_option("--convention", o.convention,
                 "counting convention of the FLOPs: " + fw::convention_names() + " (docs/conventions.md)");
  if (auto code = fw::parse_command_line(app, argc, argv, "")) return *code;
  return guarded([&] { return run(o); });
}
