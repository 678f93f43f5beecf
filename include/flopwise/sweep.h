// include/flopwise/sweep.h — a report's cost formulas evaluated over a grid of its dynamic dims
// (`flopwise MODEL --sweep seq=128,256,512 --sweep batch=1..32`). The formulas are exact polynomials (with
// floor/min/max terms for strided and clamped sizes), so a point costs one evaluation; a point they
// cannot give (some node's cost has no formula) is re-analysed, and the row says so.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "flopwise/cost.h"

namespace flopwise {

struct SweepAxis {
  std::string name;
  std::vector<int64_t> values;
};

// NAME=V1,V2,...  |  NAME=A..B (A, 2A, 4A, ... up to B)  |  NAME=A..B:S (A, A+S, ... up to B).
// Throws UsageError on anything else, a negative value, or more than 100,000 values.
SweepAxis parse_sweep(const std::string& text);

struct SweepRow {
  std::vector<int64_t> point;  // one value per axis
  Count params, macs, flops, memory_bytes;
  int64_t uncounted = 0;              // nodes whose cost is not in the totals (">=" figures)
  bool reanalysed = false;            // the formulas could not give this point: the model was analysed at it
  std::vector<std::string> violated;  // the report's assumptions that fail here (the model cannot run)
  double predicted_ms = -1;  // --predict: the latency predicted at the point; -1 not asked or unknown
};

struct Sweep {
  std::vector<std::string> names;
  std::vector<SweepRow> rows;
  int reanalysed = 0, violating = 0;
};

using Bindings = std::vector<std::pair<std::string, int64_t>>;

// Every point of the axes' grid (the last axis varies fastest). Throws UsageError for an axis naming no
// symbol of the report, symbols left unbound, or a grid of more than 100,000 points. `reanalyse` gives
// the report at a point, for points the formulas cannot give.
Sweep run_sweep(const Report& report, const std::vector<SweepAxis>& axes,
                const std::function<Report(const Bindings&)>& reanalyse);

// A sweep in each of its formats (src/writers/sweep_text.cc; html is the report's page, write_html).
void write_sweep_text(std::ostream& os, const Sweep& s, const Report& report);
void write_sweep_json(std::ostream& os, const Sweep& s, const Report& report);  // schema flopwise.sweep/1
void write_sweep_csv(std::ostream& os, const Sweep& s, const Report& report);
void write_sweep_markdown(std::ostream& os, const Sweep& s, const Report& report);

}  // namespace flopwise
