// include/flopwise/writers.h — the writers of a report (flopwise/analysed_report.h), one file each in
// src/writers/: text (DeepSpeed-profiler style, text.cc; DeepSpeed's own layout, deepspeed_text.cc), JSON
// (json_report.cc), CSV and markdown (text.cc), HTML (html_report.cc), Netron (netron.cc), the LLM analyses'
// text (llm_text.cc).
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "flopwise/analysed_report.h"
#include "flopwise/cost.h"

namespace flopwise {

struct Sweep;
struct Convention;
struct KvCache;
struct Generation;
struct LlmSection;
struct MoeSummary;
struct ParallelReport;

struct TextOptions {
  int depth = -1;  // detailed tree depth; -1: all
  int top = 3;     // modules per depth in the aggregated profile
};

// The text report: the static profile (DeepSpeed's layout for --convention deepspeed_legacy), then the
// roofline, a generation and the --parallel section where the report has them.
void write_text(std::ostream& os, const AnalysedReport& r, const TextOptions& opts);
// For the text layouts: a scope's key among the top modules at its depth (its class, as DeepSpeed groups,
// else its full name, or the root's label), and every scope by depth, each depth in tree pre-order.
std::string_view scope_key(const ScopeNode& s);
void collect_depths(const ScopeNode& s, std::vector<std::vector<const ScopeNode*>>& by_depth);
// The text report in DeepSpeed's flops-profiler layout and number formats (write_text's for --convention
// deepspeed_legacy): summary, aggregated profile per depth, detailed profile; no latency rows.
void write_deepspeed_text(std::ostream& os, const Report& r, const TextOptions& opts);
void write_json(std::ostream& os, const AnalysedReport& r);  // schema "flopwise.report/1"
// The JSON report a member at a time, for a reader that wants a few of them (the Python module): the keys of
// `r`'s document in write_json's order, and one member's value as a document of its own (the value's bytes in
// write_json's document, its lines two spaces less indented). Throws UsageError for a key `r` has not.
std::vector<std::string> json_report_keys(const AnalysedReport& r);
void write_json_member(std::ostream& os, const AnalysedReport& r, std::string_view key);
void write_csv(std::ostream& os, const AnalysedReport& r);  // one row per node
void write_markdown(std::ostream& os, const AnalysedReport& r, const TextOptions& opts);
// A Netron attachment (netron:attachment): every node's params, MACs, FLOPs and memory bytes, shown in
// Netron's sidebar when opened beside the model.
void write_netron(std::ostream& os, const Report& r);
// One self-contained HTML page: summary, zoomable treemap by module scope, op-type bars, the module tree as a
// collapsible sortable table, and (given a sweep) its costs plotted over the first swept dim.
// `latency_ms` (scope name -> measured ms, from flopwise run) adds measured latency as a metric.
void write_html(std::ostream& os, const AnalysedReport& r, const Sweep* sweep = nullptr,
                const std::map<std::string, double>* latency_ms = nullptr);

// One summary line of the text layout: "key:" padded to the value column, the value, a newline (the
// report's summary, and the sections other modules append: generation, roofline).
void summary_line(std::ostream& os, const std::string& k, const std::string& v);

// "4.09 G", "512", "1.2 M" (SI, 2 decimals); "unknown" for an unknown count.
std::string human(const Count& c);
std::string human(double v);

// The text of the LLM analyses (src/writers/llm_text.cc): a generation's summary after the text report;
// the LLM section as (label, value) rows for markdown and HTML (the phase, the cache's bytes per token, a
// generation's tokens, totals and final cache); the mixture-of-experts section of the text report.
std::string format_generation(const Generation& g);
std::vector<std::pair<std::string, std::string>> llm_summary_rows(const LlmSection& llm);
void write_moe_text(std::ostream& os, const MoeSummary& moe);

// The --parallel section (src/writers/parallel_text.cc): text in the reference profile's layout after the
// report, the JSON report's "parallel" member (nlohmann's dump(2)), markdown tables.
void write_parallel_text(std::ostream& os, const ParallelReport& p);
std::string parallel_json_text(const ParallelReport& p);
void write_parallel_markdown(std::ostream& os, const ParallelReport& p);
// The section as (label, value) rows for the HTML page's summary: sizes, each rank's figures, traffic, time.
std::vector<std::pair<std::string, std::string>> parallel_summary_rows(const ParallelReport& p);
// flopwise diff --parallel: each rank's figures on both sides and the change (a text or markdown table).
void write_parallel_diff(std::ostream& os, const ParallelReport& a, const ParallelReport& b, bool markdown);

// `--list-ops`: every op of the registry with its opset range and FLOPs formula in `conv`, then the torch
// functions the .pt importer decomposes where `conv` counts them apart (src/writers/op_list.cc).
void write_op_list(std::ostream& os, const Convention& conv);
// `--explain A B`: the model's FLOPs under conventions `ca` (report a) and `cb` (report b), reconciled per op
// type: where they differ, by how much, and why (src/writers/op_list.cc).
void write_explain(std::ostream& os, const Model& model, const Report& a, const Report& b,
                   const Convention& ca, const Convention& cb);

}  // namespace flopwise
