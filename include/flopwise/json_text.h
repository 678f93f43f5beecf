// include/flopwise/json_text.h — the one way a JSON document becomes text (reports, diffs, run reports,
// sweeps, netron attachments, runtime requests and responses, traces).
// Owns: the text form only; documents are built by their writers.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace flopwise {

// project()'s version ("0.1.0"): `flopwise --version` prints it, and every JSON document flopwise writes
// carries it as "flopwise_version", the member after "schema" (src/ir/version.cc).
const char* flopwise_version();

// DEL (0x7F), the one control character JSON leaves unescaped, as \u007f: the standard streams show
// control characters as the text \xNN (src/cli/output.h), which inside a JSON string is no escape.
// Only a string can hold the byte, so every occurrence is replaced.
inline std::string escape_del_in_json(std::string text) {
  size_t at = text.find('\x7f');
  if (at == std::string::npos) return text;
  std::string out;
  out.reserve(text.size() + 16);
  size_t from = 0;
  for (; at != std::string::npos; at = text.find('\x7f', from)) {
    out.append(text, from, at - from);
    out += "\\u007f";
    from = at + 1;
  }
  out.append(text, from, std::string::npos);
  return out;
}

// Valid JSON whatever the bytes of its strings: invalid UTF-8 becomes U+FFFD (nlohmann's
// error_handler_t::replace), control characters and DEL are \u-escaped, other UTF-8 is kept.
// `indent` as nlohmann's dump: -1 for one line.
// Any nlohmann document type (json, ordered_json: its keys stay in insertion order).
template <class Json>
std::string json_text(const Json& doc, int indent = -1) {
  return escape_del_in_json(doc.dump(indent, ' ', false, Json::error_handler_t::replace));
}

}  // namespace flopwise
