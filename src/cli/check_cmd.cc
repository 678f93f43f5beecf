// src/cli/check_cmd.cc — `flopwise check MODEL --budget FILE`: cost budgets for CI. Exit 0 when every limit
// holds, 1 when one fails, 2 for bad input (main maps thrown errors to 2). See flopwise/budget.h.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <optional>

#include "commands.h"
#include "flopwise/analyse.h"
#include "flopwise/budget.h"
#include "flopwise/convention.h"
#include "flopwise/errors.h"
#include "flopwise/formats.h"
#include "flopwise/llm.h"
#include "flopwise/report_io.h"
#include "flopwise/training.h"
#include "output.h"

namespace flopwise {

namespace {

using CheckWriter = void (*)(std::ostream& os, const CheckResult& r);
const FormatTable<CheckWriter>& check_writers() {
  using F = OutputFormat;
  static const FormatTable<CheckWriter> table("check", {
                                                           {F::Text, write_check_text},
                                                           {F::Markdown, write_check_markdown},
                                                       });
  return table;
}

}  // namespace

int run_check(int argc, char** argv) {
  std::string model, budget_path, format = "text", output, junit, convention = "default";
  std::vector<std::string> inputs, dims, values;
  std::string program;
  CLI::App app{
      "flopwise check: fail when a model exceeds its cost budget (exit 0 ok, 1 over budget, 2 bad input)",
      "flopwise check"};
  app.add_option("model", model, "model file (.onnx, .pt) or a saved JSON report")->required();
  app.add_option("--budget,-b", budget_path, "budget file (TOML; docs/check.md)")->required();
  app.add_option("--input,-i", inputs, "pin an input: NAME:1x3x224x224[:dtype] (over the budget's [inputs])");
  app.add_option("--dim,-d", dims, "bind a symbolic dim: batch=8 (over the budget's [dims])");
  app.add_option("--value", values, "pin the contents of a shape-like input: NAME=4,2");
  app.add_option("--program", program, "the program of a .pt2 archive that holds several");
  app.add_option("--format,-f", format, check_writers().help() + " (markdown: e.g. for $GITHUB_STEP_SUMMARY)")
      ->check(CLI::IsMember(check_writers().choices()));
  app.add_option("--output,-o", output, "write the table to FILE instead of stdout");
  app.add_option("--junit", junit, "also write JUnit XML (one test case per limit) to FILE");
  app.add_option("--convention", convention,
                 "counting convention of the FLOPs checked (" + convention_names() + ")");
  if (auto code = parse_command_line(app, argc, argv, "check")) return *code;
  const CheckWriter write = check_writers().writer(parse_format(format));

  InferOptions cli = parse_pins(inputs, dims, values);
  cli.program = program;
  Budget budget = read_budget_file(budget_path);
  const Convention& conv = find_convention(convention);

  bool saved_report = detect_format(model) == ModelFormat::ReportJson || looks_like_json_report(model);
  // The model is read and parsed once for every variant and LLM step (a TorchScript one again for another
  // variant's --input shapes, which its importer lowers with).
  std::optional<LoadedModel> loaded;
  auto analyse_at = [&](const InferOptions& pins) {
    if (!loaded || !accepts(*loaded, pins)) loaded = load(model, pins);
    return analyse(*loaded, pins, conv);
  };
  // The training step where the budget describes one ([train]) or limits one of its figures.
  bool wants_training = budget.top.train.has_value();
  auto limits_training = [&](const VariantBudget& v) {
    for (const char* t : kTrainQuantities) wants_training = wants_training || v.limits.count(t);
  };
  limits_training(budget.top);
  for (const auto& v : budget.variants) limits_training(v);
  wants_training = wants_training || budget.top.parallel.has_value();  // [parallel] counts the step
  const TrainOptions train = budget.top.train.value_or(TrainOptions{});
  auto with_training = [&](Analysis& a) {
    if (wants_training)
      a.report.training = std::make_shared<TrainingReport>(analyse_training(*a.model, a.report, train));
    if (budget.top.parallel)
      a.report.parallel = std::make_shared<ParallelReport>(
          analyse_parallel(*a.model, a.report, *a.report.training, *budget.top.parallel));
  };
  Analyse subject = [&](const InferOptions& pins, const LlmRequest* llm) {
    if (saved_report) {
      if (!pins.inputs.empty() || !pins.dims.empty() || !pins.values.empty())
        throw UsageError(model + " is a saved report: input pins and variants need the model itself");
      CheckSubject s{read_report_json(model), std::nullopt};
      if (s.report.convention != conv.name)
        throw UsageError(model + " is a saved report in convention '" + s.report.convention + "', not '" +
                         std::string(conv.name) + "' (--convention)");
      if (llm && llm->any()) {  // the saved report must be of the phase or generation the budget asks for
        const LlmSection* saved = s.report.llm.get();
        const bool same = saved && saved->phase == llm->phase &&
                          (saved->generation ? saved->generation->prompt == llm->prompt &&
                                                   saved->generation->generated == llm->generate
                                             : !llm->generation());
        if (!same)
          throw UsageError(model +
                           " is a saved report not made with the budget's [llm] options: save it with " +
                           (llm->generation() ? "--prompt " + std::to_string(llm->prompt) + " --generate " +
                                                    std::to_string(llm->generate)
                                              : "--phase " + std::string(phase_name(llm->phase))));
      }
      s.report.path = model;
      return s;
    }
    if (!llm) {
      Analysis a = analyse_at(pins);
      with_training(a);
      CheckSubject s{std::move(a.report), activation_bytes(*a.model)};
      s.report.path = model;
      return s;
    }
    // As the CLI's --phase, --prompt/--generate: the cache found with the dims unbound, the phase's bindings
    // added to the variant's dims, the generation's steps analysed at them.
    InferOptions unbound = pins;
    unbound.dims.clear();
    LlmPlan plan;
    try {
      plan = plan_llm(*analyse_at(unbound).model, *llm, pins.dims);
    } catch (const UsageError& e) {
      throw UsageError(budget_path + ": [llm]: " + e.what());
    }
    InferOptions at = pins;
    at.dims.insert(at.dims.end(), plan.bindings.begin(), plan.bindings.end());
    Analysis a = analyse_at(at);
    if (!plan.note.empty()) a.report.notes.push_back(plan.note);
    with_training(a);
    a.report.llm = llm_section(plan, [&](const std::vector<std::pair<std::string, int64_t>>& extra) {
      InferOptions step = at;
      step.dims.insert(step.dims.end(), extra.begin(), extra.end());
      return analyse_at(step).report;
    });
    CheckSubject s{std::move(a.report), activation_bytes(*a.model)};
    s.report.path = model;
    return s;
  };
  CheckResult res = check_budget(budget, cli, subject, read_report_json);
  res.convention = std::string(conv.name);

  if (!junit.empty()) {
    std::ofstream j(junit);
    if (!j) throw UsageError("cannot write " + junit);
    write_check_junit(j, res);
  }
  std::ofstream file;
  std::ostream* os = &output_stream(output, file);
  write(*os, res);
  os->flush();
  return res.failures() ? kExitBudgetFailed : kExitOk;
}

}  // namespace flopwise
