// src/writers/formats.cc — the table of output formats and the static report's writers (flopwise/formats.h).
#include "flopwise/formats.h"

#include <algorithm>

#include "flopwise/errors.h"
#include "flopwise/writers.h"

namespace flopwise {

namespace {

// The report writers of flopwise/writers.h behind one signature.
void as_text(std::ostream& os, const AnalysedReport& r, const TextOptions& t) { write_text(os, r, t); }
void as_json(std::ostream& os, const AnalysedReport& r, const TextOptions&) { write_json(os, r); }
void as_csv(std::ostream& os, const AnalysedReport& r, const TextOptions&) { write_csv(os, r); }
void as_markdown(std::ostream& os, const AnalysedReport& r, const TextOptions& t) {
  write_markdown(os, r, t);
}
void as_html(std::ostream& os, const AnalysedReport& r, const TextOptions&) { write_html(os, r); }
void as_netron(std::ostream& os, const AnalysedReport& r, const TextOptions&) { write_netron(os, r); }

}  // namespace

const std::vector<Format>& formats() {
  using F = OutputFormat;
  static const std::vector<Format> table = {
      {F::Text, "text", "", ""},
      {F::Json, "json", "", ""},
      {F::Csv, "csv", "", ""},
      {F::Markdown, "markdown", "md", ""},
      {F::Html, "html", "", "one self-contained page"},
      {F::Netron, "netron", "", "an attachment Netron shows beside the model"},
  };
  return table;
}

const char* format_name(OutputFormat f) {
  for (const Format& x : formats())
    if (x.id == f) return x.name;
  return "?";  // every OutputFormat has a row
}

OutputFormat parse_format(const std::string& word) {
  for (const Format& f : formats())
    if (word == f.name || (*f.alias && word == f.alias)) return f.id;
  std::string known;
  for (const Format& f : formats()) known += (known.empty() ? "" : ", ") + std::string(f.name);
  throw UsageError("no output format '" + word + "' (" + known + ")");
}

std::vector<std::string> format_choices(const std::vector<OutputFormat>& takes) {
  std::vector<std::string> names;
  for (OutputFormat t : takes)
    for (const Format& f : formats())
      if (f.id == t) {
        names.push_back(f.name);
        if (*f.alias) names.push_back(f.alias);
      }
  return names;
}

std::string format_help(const std::vector<OutputFormat>& takes) {
  std::string s;
  for (OutputFormat t : takes)
    for (const Format& f : formats())
      if (f.id == t) {
        s += (s.empty() ? "" : " | ") + std::string(f.name);
        if (*f.what) s += " (" + std::string(f.what) + ")";
      }
  return s;
}

std::string format_list(const std::vector<OutputFormat>& takes) {
  std::string s;
  for (size_t i = 0; i < takes.size(); ++i)
    s += (i == 0 ? "" : i + 1 == takes.size() ? " or " : ", ") + std::string(format_name(takes[i]));
  return s;
}

void refuse_format(const std::string& what, const std::vector<OutputFormat>& takes, OutputFormat f) {
  throw UsageError(what + " writes " + format_list(takes) + ", not " + format_name(f));
}

void require_format(const std::string& what, const std::vector<OutputFormat>& takes, OutputFormat f) {
  if (std::find(takes.begin(), takes.end(), f) == takes.end()) refuse_format(what, takes, f);
}

const FormatTable<ReportWriter>& report_writers() {
  using F = OutputFormat;
  static const FormatTable<ReportWriter> table("a static report", {
                                                                      {F::Text, as_text},
                                                                      {F::Json, as_json},
                                                                      {F::Csv, as_csv},
                                                                      {F::Markdown, as_markdown},
                                                                      {F::Html, as_html},
                                                                      {F::Netron, as_netron},
                                                                  });
  return table;
}

}  // namespace flopwise
