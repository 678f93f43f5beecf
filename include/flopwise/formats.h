// include/flopwise/formats.h — the one table of output formats: each format's name (and alias) and a few
// words for --help; a -f word is parsed into an OutputFormat once, by this table. Each command then picks its
// writer from a FormatTable of its own, keyed by OutputFormat: the command's --format choices, its help text
// and its "writes X, not Y" error all come from that table, and `--list formats` and the README's lists from
// this one. Implemented in src/writers/formats.cc.
#pragma once

#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

namespace flopwise {

struct AnalysedReport;
struct TextOptions;

enum class OutputFormat { Text, Json, Csv, Markdown, Html, Netron };

struct Format {
  OutputFormat id;
  const char* name;   // "markdown"
  const char* alias;  // "md"; "" for none
  const char* what;   // a few words for --help; "" for none
};

const std::vector<Format>& formats();  // in the order help and errors list them
const char* format_name(OutputFormat f);
// The format of a name or alias ("md" -> Markdown); throws UsageError("no output format 'x' (text, json,
// ...)").
OutputFormat parse_format(const std::string& word);

// For a list of the formats a command takes, in its table's order:
// the names and aliases --format accepts (CLI11's IsMember),
std::vector<std::string> format_choices(const std::vector<OutputFormat>& takes);
// "text | json | csv | markdown | html (one self-contained page) | ...", for --help,
std::string format_help(const std::vector<OutputFormat>& takes);
// "text, json, markdown or html", for a sentence.
std::string format_list(const std::vector<OutputFormat>& takes);
// Throws UsageError("<what> writes <format_list(takes)>, not <f>"): a command that takes no `f`.
[[noreturn]] void refuse_format(const std::string& what, const std::vector<OutputFormat>& takes,
                                OutputFormat f);
// refuse_format when `takes` lacks `f`.
void require_format(const std::string& what, const std::vector<OutputFormat>& takes, OutputFormat f);

// A command's writers: a row per format it takes, in the order its help lists them. `W` is the writer (a
// function pointer or std::function of what the command writes). Adding a format to a command is a row.
template <class W>
class FormatTable {
 public:
  struct Row {
    OutputFormat format;
    W write;
  };
  // `what` names the command in the error: "--sweep", "a diff of run reports".
  FormatTable(std::string what, std::initializer_list<Row> rows) : what_(std::move(what)), rows_(rows) {}

  // The writer of `f`; throws UsageError("<what> writes <its formats>, not <f>") when it takes no `f`.
  const W& writer(OutputFormat f) const {
    for (const Row& r : rows_)
      if (r.format == f) return r.write;
    refuse_format(what_, takes(), f);
  }
  std::vector<OutputFormat> takes() const {
    std::vector<OutputFormat> fs;
    for (const Row& r : rows_) fs.push_back(r.format);
    return fs;
  }
  std::vector<std::string> choices() const { return format_choices(takes()); }
  std::string help() const { return format_help(takes()); }

 private:
  std::string what_;
  std::vector<Row> rows_;
};

// The static report's writers (flopwise/writers.h), for the CLI and the Python module.
using ReportWriter = void (*)(std::ostream& os, const AnalysedReport& r, const TextOptions& opts);
const FormatTable<ReportWriter>& report_writers();

}  // namespace flopwise
