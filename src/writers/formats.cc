// src/writers/formats.cc — the table of output formats (flopwise/formats.h).
#include "flopwise/formats.h"

#include "flopwise/errors.h"

namespace flopwise {

namespace {

constexpr unsigned bits(std::initializer_list<Output> os) {
  unsigned b = 0;
  for (Output o : os) b |= static_cast<unsigned>(o);
  return b;
}

bool writes(const Format& f, Output o) { return (f.outputs & static_cast<unsigned>(o)) != 0; }

}  // namespace

const std::vector<Format>& formats() {
  using O = Output;
  static const std::vector<Format> table = {
      {"text", "", "", bits({O::Report, O::Sweep, O::Generate, O::Diff, O::RunDiff, O::Check, O::Run})},
      {"json", "", "", bits({O::Report, O::Sweep, O::Generate, O::Diff, O::RunDiff, O::Run})},
      {"csv", "", "", bits({O::Report, O::Sweep})},
      {"markdown", "md", "", bits({O::Report, O::Sweep, O::Generate, O::Diff, O::RunDiff, O::Check})},
      {"html", "", "one self-contained page", bits({O::Report, O::Sweep, O::Generate, O::Diff, O::Run})},
      {"netron", "", "an attachment Netron shows beside the model", bits({O::Report})},
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
