// src/writers/formats.cc — the table of output formats (flopwise/formats.h).
#include "flopwise/formats.h"

#include "flopwise/errors.h"
#include "flopwise/writers.h"

namespace flopwise {

namespace {

constexpr unsigned bits(std::initializer_list<Output> os) {
  unsigned b = 0;
  for (Output o : os) b |= static_cast<unsigned>(o);
  return b;
}

bool writes(const Format& f, Output o) { return (f.outputs & static_cast<unsigned>(o)) != 0; }

// The report writers of flopwise/writers.h behind one signature.
void as_text(std::ostream& os, const Report& r, const TextOptions& t) { write_text(os, r, t); }
void as_json(std::ostream& os, const Report& r, const TextOptions&) { write_json(os, r); }
void as_csv(std::ostream& os, const Report& r, const TextOptions&) { write_csv(os, r); }
void as_markdown(std::ostream& os, const Report& r, const TextOptions& t) { write_markdown(os, r, t); }
void as_html(std::ostream& os, const Report& r, const TextOptions&) { write_html(os, r); }
void as_netron(std::ostream& os, const Report& r, const TextOptions&) { write_netron(os, r); }

}  // namespace

const std::vector<Format>& formats() {
  using O = Output;
  static const std::vector<Format> table = {
      {"text", "", "", bits({O::Report, O::Sweep, O::Generate, O::Diff, O::RunDiff, O::Check, O::Run}),
       as_text},
      {"json", "", "", bits({O::Report, O::Sweep, O::Generate, O::Diff, O::RunDiff, O::Run}), as_json},
      {"csv", "", "", bits({O::Report, O::Sweep}), as_csv},
      {"markdown", "md", "", bits({O::Report, O::Sweep, O::Generate, O::Diff, O::RunDiff, O::Check}),
       as_markdown},
      {"html", "", "one self-contained page", bits({O::Report, O::Sweep, O::Generate, O::Diff, O::Run}),
       as_html},
      {"netron", "", "an attachment Netron shows beside the model", bits({O::Report}), as_netron},
  };
  return table;
}

std::vector<std::string> format_choices(Output o) {
  std::vector<std::string> names;
  for (const Format& f : formats()) {
    if (!writes(f, o)) continue;
    names.push_back(f.name);
    if (*f.alias) names.push_back(f.alias);
  }
  return names;
}

std::string format_help(Output o) {
  std::string s;
  for (const Format& f : formats()) {
    if (!writes(f, o)) continue;
    s += (s.empty() ? "" : " | ") + std::string(f.name);
    if (*f.what) s += " (" + std::string(f.what) + ")";
  }
  return s;
}

std::string format_list(Output o) {
  std::vector<std::string> names;
  for (const Format& f : formats())
    if (writes(f, o)) names.push_back(f.name);
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return s;
}

const Format& find_format(const std::string& name) {
  for (const Format& f : formats())
    if (name == f.name || (*f.alias && name == f.alias)) return f;
  std::string known;
  for (const Format& f : formats()) known += (known.empty() ? "" : ", ") + std::string(f.name);
  throw UsageError("no output format '" + name + "' (" + known + ")");
}

std::string canonical_format(const std::string& name) {
  for (const Format& f : formats())
    if (name == f.name || (*f.alias && name == f.alias)) return f.name;
  return name;
}

void require_format(Output o, const std::string& format, const std::string& what) {
  const std::string name = canonical_format(format);
  for (const Format& f : formats())
    if (name == f.name && writes(f, o)) return;
  throw UsageError(what + " writes " + format_list(o) + ", not " + format);
}

}  // namespace flopwise
