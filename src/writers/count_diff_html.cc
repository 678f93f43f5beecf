// src/writers/count_diff_html.cc — the count-and-time diff of two traces as one HTML page
// (flopwise/trace_census_report.h): bar charts (inline SVG, no script) of the largest count and time changes
// of ops and kernels, as HTA's visualize_counts_diff / visualize_duration_diff draw them, beside the scope
// tree of the priced diff when the sides are two single traces, and the tables of every row.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "flopwise/trace_census_report.h"
#include "html_page.h"

namespace flopwise {

namespace census_html {

std::string fixed(double v, int prec) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}
std::string short_name(const std::string& s) { return s.size() <= 60 ? s : s.substr(0, 57) + "..."; }

struct Bar {
  std::string label;
  double value;
};

// A diverging horizontal bar chart: decreases to the left of the axis (blue), increases to the right (red).
void svg_bars(std::ostream& os, const std::string& title, const std::vector<Bar>& bars, int prec) {
  const int row = 18, label_w = 380, half = 220, w = label_w + 2 * half + 80;
  const int h = static_cast<int>(bars.size()) * row + 28;
  double mx = 0;
  for (const auto& b : bars) mx = std::max(mx, std::fabs(b.value));
  os << "<h3>" << html::escape(title) << "</h3>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w
     << "\" height=\"" << h << "\" font-size=\"11\" font-family=\"monospace\">\n";
  const int axis = label_w + half;
  os << "<line x1=\"" << axis << "\" y1=\"4\" x2=\"" << axis << "\" y2=\"" << h - 4
     << "\" stroke=\"#999\"/>\n";
  for (size_t i = 0; i < bars.size(); ++i) {
    const double v = bars[i].value;
    const int len = mx > 0 ? static_cast<int>(std::lround(half * std::fabs(v) / mx)) : 0;
    const int y = 14 + static_cast<int>(i) * row;
    const int x = v < 0 ? axis - len : axis;
    os << "<text x=\"0\" y=\"" << y + 4 << "\">" << html::escape(short_name(bars[i].label)) << "</text>";
    os << "<rect x=\"" << x << "\" y=\"" << y - 6 << "\" width=\"" << std::max(len, 1)
       << "\" height=\"12\" fill=\"" << (v < 0 ? "#3b7dd8" : "#d8553b") << "\"><title>"
       << html::escape(bars[i].label) << ": " << fixed(v, prec) << "</title></rect>";
    os << "<text x=\"" << (v < 0 ? axis + 4 : axis + len + 4) << "\" y=\"" << y + 4 << "\">"
       << (v > 0 ? "+" : "") << fixed(v, prec) << "</text>\n";
  }
  os << "</svg>\n";
}

std::vector<Bar> top_changes(const std::vector<CountDiffRow>& rows, bool by_time, int top) {
  std::vector<Bar> v;
  for (const auto& r : rows) {
    double d = by_time ? r.b.time_us - r.a.time_us : static_cast<double>(r.b.count - r.a.count);
    if (d != 0) v.push_back({r.name, d});
  }
  std::stable_sort(v.begin(), v.end(),
                   [](const Bar& x, const Bar& y) { return std::fabs(x.value) > std::fabs(y.value); });
  if (top >= 0 && v.size() > static_cast<size_t>(top)) v.resize(static_cast<size_t>(top));
  return v;
}

void rows_html(std::ostream& os, const std::vector<CountDiffRow>& rows) {
  os << "<table><tr><th>name</th><th>A count</th><th>B count</th><th>A us</th><th>B us</th><th>delta us</th>"
        "<th>change</th></tr>\n";
  for (const auto& r : rows)
    os << "<tr><td title=\"" << html::escape(r.name) << "\">" << html::escape(short_name(r.name))
       << "</td><td>" << r.a.count << "</td><td>" << r.b.count << "</td><td>" << fixed(r.a.time_us, 1)
       << "</td><td>" << fixed(r.b.time_us, 1) << "</td><td>" << fixed(r.b.time_us - r.a.time_us, 1)
       << "</td><td>" << count_change_name(r.change) << "</td></tr>\n";
  os << "</table>\n";
}

// The priced diff's scope tree: GPU time attributed on each side, indented by depth.
void scope_tree(std::ostream& os, const TraceDiff& d) {
  os << "<section><h2>Scope tree (GPU ms attributed, whole trace)</h2><table><tr><th>scope</th><th>A ms</th>"
        "<th>B ms</th><th>delta ms</th></tr>\n";
  for (const auto& r : d.rows) {
    if (r.level != "scope") continue;
    const int depth =
        static_cast<int>(std::count(r.name.begin(), r.name.end(), '.')) + (r.name.empty() ? 0 : 1);
    if (depth > 4) continue;
    const double a = r.a ? r.a->gpu_us / 1000 : 0, b = r.b ? r.b->gpu_us / 1000 : 0;
    const size_t dot = r.name.rfind('.');
    const std::string label =
        r.name.empty() ? "(trace)" : r.name.substr(dot == std::string::npos ? 0 : dot + 1);
    os << "<tr><td style=\"padding-left:" << 8 + 16 * depth << "px\">" << html::escape(label) << "</td><td>"
       << (r.a ? fixed(a, 3) : "-") << "</td><td>" << (r.b ? fixed(b, 3) : "-") << "</td><td>"
       << fixed(b - a, 3) << "</td></tr>\n";
  }
  os << "</table></section>\n";
}

}  // namespace census_html

void write_count_diff_html(std::ostream& os, const CountDiff& d, const CountDiffOptions& o) {
  using namespace census_html;
  const int top = o.top < 0 ? 30 : o.top;
  os << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>flopwise trace diff</title><style>"
     << html::kBaseStyle
     << ".cols{display:flex;flex-wrap:wrap;gap:14px}.cols>section{flex:1 1 640px;overflow-x:auto}</style>"
        "</head><body>\n<header><h1>Trace diff: counts and time</h1><div class=\"sub\">A: ";
  for (const auto& p : d.a.paths) os << html::escape(p) << " ";
  os << "&middot; B: ";
  for (const auto& p : d.b.paths) os << html::escape(p) << " ";
  os << "</div></header>\n<main><div class=\"cols\">\n";
  if (o.priced) scope_tree(os, *o.priced);
  for (int k = 0; k < 2; ++k) {
    const auto& rows = k == 0 ? d.ops : d.kernels;
    const std::string what = k == 0 ? "ops" : "kernels";
    os << "<section><h2>" << (k == 0 ? "Ops (CPU side)" : "Kernels (GPU side)")
       << "</h2><p class=\"note\">B &minus; A; red: more in B, blue: fewer</p>\n";
    svg_bars(os, "Largest count changes of " + what, top_changes(rows, false, top), 0);
    svg_bars(os, "Largest time changes of " + what + " (us)", top_changes(rows, true, top), 1);
    os << "</section>\n";
  }
  os << "</div>\n";
  for (int k = 0; k < 2; ++k) {
    os << "<section><h2>" << (k == 0 ? "All ops" : "All kernels") << "</h2>\n";
    rows_html(os, k == 0 ? d.ops : d.kernels);
    os << "</section>\n";
  }
  os << "</main></body></html>\n";
}

}  // namespace flopwise
