// include/flopwise/formats.h — the one table of output formats: each format's name (and alias), what it
// writes, and which commands and modes write it. The CLI's --format choices, its help text, its "writes X,
// not Y" errors and the README's lists all come from it. Implemented in src/writers/formats.cc.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace flopwise {

struct Report;
struct TextOptions;

// What is being written (a bit each): a static report, a sweep, a generation (--generate), a diff of models
// or saved reports, a diff of run reports, a budget check, a run report.
enum class Output : unsigned {
  Report = 1,
  Sweep = 2,
  Generate = 4,
  Diff = 8,
  RunDiff = 16,
  Check = 32,
  Run = 64,
};

struct Format {
  const char* name;   // "markdown"
  const char* alias;  // "md"; "" for none
  const char* what;   // a few words for --help
  unsigned outputs;   // the Output bits that write it
  // Writes a static report (Output::Report) in this format (flopwise/writers.h); the other outputs have
  // their own writers, which take the format's name.
  void (*write_report)(std::ostream& os, const Report& r, const TextOptions& opts);
};

const std::vector<Format>& formats();  // in the order help and errors list them
// The names and aliases --format accepts for `o` (CLI11's IsMember).
std::vector<std::string> format_choices(Output o);
// "text | json | csv | markdown | html (one self-contained page) | netron (...)" for `o`.
std::string format_help(Output o);
// "text, json, markdown or html": the formats `o` writes, for a sentence.
std::string format_list(Output o);
// The format of a name or alias; throws UsageError naming the known ones.
const Format& find_format(const std::string& name);
// The canonical name of a name or alias ("md" -> "markdown"); the argument itself when it is neither.
std::string canonical_format(const std::string& name);
// Throws UsageError("<what> writes <format_list(o)>, not <format>") when `o` does not write `format`.
void require_format(Output o, const std::string& format, const std::string& what);

}  // namespace flopwise
