// src/writers/check_text.cc — `flopwise check` results as text, markdown or JUnit XML (flopwise/budget.h).
#include <cstdio>
#include <sstream>

#include "flopwise/budget.h"
#include "flopwise/writers.h"
#include "html_page.h"
#include "tables.h"

namespace flopwise {

namespace {

std::string actual_str(const CheckRow& r) {
  return r.actual ? human(static_cast<double>(*r.actual)) : "unknown";
}

bool multi_variant(const CheckResult& r) {
  return r.variants.size() > 1 || (r.variants.size() == 1 && r.variants[0] != "default");
}

std::vector<std::vector<std::string>> rows_table(const CheckResult& r, bool md) {
  bool mv = multi_variant(r);
  std::vector<std::vector<std::string>> t;
  std::vector<std::string> head;
  if (mv) head.push_back("variant");
  for (const char* h : {"check", "limit", "actual", "used", "status"}) head.push_back(h);
  t.push_back(head);
  for (const auto& row : r.rows) {
    std::vector<std::string> line;
    if (mv) line.push_back(row.variant);
    std::string check = row.check + " " + row.quantity;
    line.push_back(md ? "`" + check + "`" : check);
    line.push_back(row.limit);
    line.push_back(actual_str(row));
    line.push_back(row.used.empty() ? "-" : row.used);
    line.push_back(row.pass ? "PASS" : (md ? "**FAIL**" : "FAIL"));
    t.push_back(line);
  }
  return t;
}

std::string summary(const CheckResult& r) {
  int f = r.failures();
  std::ostringstream s;
  if (f == 0)
    s << "all " << r.rows.size() << " limits hold";
  else
    s << f << " of " << r.rows.size() << " limits fail";
  return s.str();
}

}  // namespace

void write_check_text(std::ostream& os, const CheckResult& r) {
  os << "flopwise check: " << r.model << " against " << r.budget << " (FLOPs convention '" << r.convention
     << "')\n\n";
  auto t = rows_table(r, false);
  std::vector<size_t> w;
  for (const auto& row : t)
    for (size_t c = 0; c < row.size(); ++c) {
      if (w.size() <= c) w.push_back(0);
      w[c] = std::max(w[c], row[c].size());
    }
  size_t ncols = t.empty() ? 0 : t[0].size();
  for (const auto& row : t) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      bool right = c + 4 >= ncols && c + 1 < ncols;  // limit, actual, used: numbers
      std::string pad(w[c] - row[c].size(), ' ');
      line += "  " + (right ? pad + row[c] : row[c] + pad);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    os << line << "\n";
  }
  bool any = false;
  for (const auto& row : r.rows)
    if (!row.pass) {
      if (!any) os << "\nfailures:\n";
      any = true;
      os << "  " << (multi_variant(r) ? "[" + row.variant + "] " : "") << row.check << " " << row.quantity
         << ": " << row.detail << "\n";
    }
  os << "\n" << summary(r) << "\n";
}

void write_check_markdown(std::ostream& os, const CheckResult& r) {
  os << "### flopwise check: " << (r.failures() ? "❌ " : "✅ ") << summary(r) << "\n\n";
  os << "`" << r.model << "` against `" << r.budget << "`\n\n";
  const Table t = rows_table(r, true);
  const size_t n = t.empty() ? 0 : t[0].size();
  std::vector<bool> right(n);
  for (size_t c = 0; c < n; ++c) right[c] = c + 4 >= n && c + 1 < n;  // limit, actual, used: numbers
  write_markdown_table(os, t, right);
  bool any = false;
  for (const auto& row : r.rows)
    if (!row.pass) {
      if (!any) os << "\n**Failures**\n\n";
      any = true;
      os << "- " << (multi_variant(r) ? "[" + row.variant + "] " : "") << "`" << row.check << " "
         << row.quantity << "`: " << row.detail << "\n";
    }
}

void write_check_junit(std::ostream& os, const CheckResult& r) {
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  os << "<testsuites name=\"flopwise check\" tests=\"" << r.rows.size() << "\" failures=\"" << r.failures()
     << "\">\n";
  for (const auto& v : r.variants) {
    int tests = 0, fails = 0;
    for (const auto& row : r.rows)
      if (row.variant == v) ++tests, fails += !row.pass;
    os << "  <testsuite name=\"" << html::escape("flopwise check " + r.model + " [" + v + "]", true)
       << "\" tests=\"" << tests << "\" failures=\"" << fails << "\" errors=\"0\">\n";
    for (const auto& row : r.rows) {
      if (row.variant != v) continue;
      os << "    <testcase classname=\"" << html::escape("flopwise.budget." + v, true) << "\" name=\""
         << html::escape(row.name(), true) << "\"";
      if (row.pass) {
        os << "/>\n";
        continue;
      }
      os << ">\n      <failure type=\"budget\" message=\"" << html::escape(row.detail, true) << "\">"
         << html::escape(row.name() + ": actual " + (row.actual ? std::to_string(*row.actual) : "unknown") +
                             "; " + row.detail,
                         true)
         << "</failure>\n    </testcase>\n";
    }
    os << "  </testsuite>\n";
  }
  os << "</testsuites>\n";
}

}  // namespace flopwise
