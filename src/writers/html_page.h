// src/writers/html_page.h — what flopwise's HTML pages share (the report page, html_report.cc; the diff
// page, src/diff/diff_html.cc): base style, the number formatter and error capture of their scripts, and
// the one-pass substitution of a template's markers.
#pragma once

#include <initializer_list>
#include <ostream>
#include <string>
#include <utility>

namespace flopwise::html {

// Text made safe inside markup (HTML text and attributes, JUnit XML): & < > " escaped, and ' where asked
// (XML attributes in single quotes).
inline std::string escape(const std::string& s, bool apostrophe = false) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += apostrophe ? "&apos;" : "'";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Page frame: header bar, sections as cards, tables (marker __BASE_STYLE__ inside <style>).
inline constexpr const char* kBaseStyle = R"CSS(
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:12px 20px}header h1{font-size:18px;margin:0}
header .sub{color:#aab3c5;font-size:12px}main{padding:12px 20px}
section{background:#fff;border:1px solid #dde1e8;border-radius:6px;margin:0 0 14px;padding:10px 14px}
h2{font-size:15px;margin:2px 0 8px}.note{color:#6b7385;font-size:12px}select,button{font:inherit}
table{border-collapse:collapse;width:100%;font-size:13px}
th{cursor:pointer;text-align:right;background:#f0f2f6;padding:4px 8px;border-bottom:1px solid #dde1e8}
th:first-child,td:first-child{text-align:left}td{padding:2px 8px;text-align:right;border-bottom:1px solid #f0f2f6;white-space:nowrap}
)CSS";

// Script prelude (marker __COMMON_JS__): errors collected for #selftest, the embedded data as D, $(id),
// human(x) in SI units.
inline constexpr const char* kCommonJs = R"JS("use strict";
const errors = [];
window.addEventListener("error", e => errors.push(String(e.message)));
const D = JSON.parse(document.getElementById("data").textContent);
const $ = id => document.getElementById(id);
function human(x) {
  if (x === null || x === undefined) return "-";
  const u = ["", " K", " M", " G", " T", " P", " E"]; let i = 0, v = Math.abs(x);
  while (v >= 1000 && i < u.length - 1) { v /= 1000; i++; }
  return (x < 0 ? "-" : "") + (i === 0 ? String(v) : v.toFixed(2)) + u[i];
}
)JS";

// JSON for a <script type="application/json"> element: "</" escaped so the data cannot close it.
inline std::string script_json(std::string s) {
  for (size_t at = s.find("</"); at != std::string::npos; at = s.find("</", at + 3)) s.replace(at, 2, "<\\/");
  return s;
}

// Writes `page` with each marker replaced, in one pass over the template: text put in (a node named like a
// marker) is never substituted again. Markers are __NAME__; an unknown one is written as it is.
inline void write_page(std::ostream& os, const std::string& page,
                       std::initializer_list<std::pair<const char*, std::string>> subs) {
  for (size_t at = 0; at < page.size();) {
    size_t m = page.find("__", at);
    if (m == std::string::npos) {
      os << page.substr(at);
      return;
    }
    os << page.substr(at, m - at);
    at = m + 2;
    for (const auto& [marker, text] : subs) {
      std::string k = marker;
      if (page.compare(m, k.size(), k) == 0) {
        os << text;
        at = m + k.size();
        break;
      }
    }
    if (at == m + 2) os << "__";
  }
}

}  // namespace flopwise::html
