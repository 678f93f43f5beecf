// include/flopwise/budget.h — cost budgets for CI: `flopwise check MODEL --budget FILE`.
// Owns: the TOML budget file (parsing with line-accurate errors), size and percent literals, scope
// globs, activation bytes, evaluating limits on Reports, and the check's text/markdown/JUnit writers.
// It never loads models itself: the caller passes a function that analyses the model for a variant's
// pins (so this library sees neither protobuf nor LibTorch).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "flopwise/analysed_report.h"
#include "flopwise/cost.h"
#include "flopwise/infer.h"
#include "flopwise/llm.h"
#include "flopwise/parallel.h"
#include "flopwise/training.h"

namespace flopwise {

// "4.2G" -> 4200000000: decimal SI suffixes K/M/G/T (1K = 1000), optional fraction, plain integers; sizes in
// bytes too: "24GB", "80GiB" (binary: 1 GiB = 1024^3), "512B".
// nullopt when the text is not such a size or is not a whole number.
std::optional<int64_t> parse_size(const std::string& text);

// "2%", "0.5%" -> a percentage as the exact fraction num/den (2/1, 5/10). nullopt when malformed.
struct Percent {
  int64_t num = 0, den = 1;
  std::string text;
};
std::optional<Percent> parse_percent(const std::string& text);

struct SizeLimit {
  std::string text;  // as written ("4.2G")
  int64_t value = 0;
  int64_t line = 0;  // of the budget file (0: not known)
};

struct ScopeBudget {
  std::string pattern;
  std::map<std::string, SizeLimit> limits;  // quantity -> limit
};

struct BaselineBudget {
  std::string report;                           // path, resolved relative to the budget file
  std::map<std::string, Percent> max_increase;  // quantity -> limit; "*" = every total in both
};

struct VariantBudget {
  std::string name;
  // Pins in file order; a variant's pins are applied over the top level's.
  std::vector<std::pair<std::string, std::string>> inputs;  // NAME -> "1x3x224x224[:dtype]"
  std::vector<std::pair<std::string, int64_t>> dims;
  std::map<std::string, std::vector<int64_t>> values;
  std::map<std::string, SizeLimit> limits;
  std::vector<ScopeBudget> scopes;
  std::optional<BaselineBudget> baseline;
  // [llm]: the phase, or the generation (prompt and generate), the variant is analysed at, as the CLI's
  // --phase and --prompt/--generate; a variant's table replaces the top level's whole.
  std::optional<LlmRequest> llm;
  // [train] (top level only: every variant's step): freeze, checkpoint, optimizer, as --train's options.
  std::optional<TrainOptions> train;
  // [parallel] (top level only): the --parallel spec, its keys as TOML keys (dp = 8, sp = "on", ...).
  std::optional<ParallelConfig> parallel;
};

struct Budget {
  std::string path;
  VariantBudget top;                    // [inputs], [dims], [values], [limits], [[scope]], [baseline]
  std::vector<VariantBudget> variants;  // [[variant]]; none: the top level is the only variant "default"
};

// Throws InputError "FILE:LINE: [table] key: what is wrong" for malformed TOML, unknown keys,
// wrong types, bad sizes or percents.
Budget parse_budget(const std::string& toml_text, const std::string& path);
Budget read_budget_file(const std::string& path);

// Quantities a limit may name. Totals: params, buffers, macs, flops, memory_bytes, activation_bytes.
// Scopes: params, macs, flops, memory_bytes, activation_bytes.
extern const char* const kTotalQuantities[6];
extern const char* const kScopeQuantities[5];
// [limits] on the report's LLM section (AnalysedReport::llm; README: Budgets): kv_bytes_per_token (the KV
// cache's growth per token at the variant's dims), kv_bytes_end, generation_macs, generation_flops and
// generation_memory_bytes (a generation's: the last four need [llm] prompt and generate).
extern const char* const kLlmQuantities[5];
// [limits] on the training step (AnalysedReport::training, flopwise --train): train_backward_macs,
// train_backward_flops, trainable_params, saved_activation_bytes, optimizer_state_bytes,
// memory_estimate_bytes (at the variant's dims: "the step fits 24 GB at batch 32"). The step is the one
// [train] describes, or --train's defaults without it.
extern const char* const kTrainQuantities[6];
// [limits] on the cost per GPU at scale (AnalysedReport::parallel, flopwise --parallel; the largest over its
// ranks): parallel_peak_bytes, parallel_model_states_bytes, parallel_activation_bytes, parallel_params, and
// parallel_comm_bytes (the bytes one rank sends in a step, every collective's). The spec is [parallel]'s.
extern const char* const kParallelQuantities[5];

// Activation bytes: the bytes of every tensor a node outputs (numel x dtype size), summed over all
// nodes, per scope (including sub-scopes; "" = the whole model). `uncounted` nodes had an output of
// unknown size.
struct ActivationFigure {
  Count bytes;
  int64_t uncounted = 0;
};
std::map<std::string, ActivationFigure> activation_bytes(const Model& model);

// What a check looks at for one variant.
struct CheckSubject {
  AnalysedReport report;
  std::optional<std::map<std::string, ActivationFigure>> activation;  // absent for a saved report
};
// `llm`: null when the variant needs no LLM section; else the request (perhaps neither phase nor generation:
// an LLM limit only needs the cache) whose section the returned report must carry (AnalysedReport::llm).
using Analyse = std::function<CheckSubject(const InferOptions& pins, const LlmRequest* llm)>;

struct CheckRow {
  std::string variant;
  std::string check;     // "total", "scope layer4.0", "baseline"
  std::string quantity;  // "macs"
  std::string limit;     // "4.2G", "+2% over 1814073344"
  std::optional<int64_t> actual;
  std::string used;  // "98.71%" of the limit, or "+1.90%" against a baseline
  bool pass = false;
  std::string detail;        // why it failed, or a note ("at least", "no scope matches")
  std::string name() const;  // "total macs <= 4.2G": the JUnit test case
};

struct CheckResult {
  std::string model, budget;
  std::string convention = "default";  // of the FLOPs checked
  std::vector<std::string> variants;
  std::vector<CheckRow> rows;
  int failures() const;
};

// Reads a saved JSON report (a baseline): flopwise/report_io.h's read_report_json, given by the command.
using ReadSaved = std::function<AnalysedReport(const std::string& path)>;

// Merges pins (the budget's top level, then `cli`, then the variant's own), analyses each variant
// and evaluates every limit. Throws InputError for an unreadable baseline.
CheckResult check_budget(const Budget& b, const InferOptions& cli, const Analyse& analyse,
                         const ReadSaved& read_saved);

void write_check_text(std::ostream& os, const CheckResult& r);
void write_check_markdown(std::ostream& os, const CheckResult& r);
void write_check_junit(std::ostream& os, const CheckResult& r);

}  // namespace flopwise
