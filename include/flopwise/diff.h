// include/flopwise/diff.h — compares two cost reports: `flopwise diff A B`.
// Owns: scope alignment (by path, then by position and op signature), per-scope and per-op-type
// deltas, shape changes, and the diff's text/JSON ("flopwise.diff/1")/markdown writers.
// Works on Reports only: it never loads models (the CLI does), never sees protobuf or LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "flopwise/analysed_report.h"
#include "flopwise/cost.h"

namespace flopwise {

// A set of named figures (params, macs, ...). nullopt = unknown (or absent on that side).
struct Figures {
  std::vector<std::pair<std::string, std::optional<int64_t>>> items;
  std::optional<int64_t> get(const std::string& key) const;
  void set(const std::string& key, std::optional<int64_t> v);
};

// b - a per key (unknown when either side is); for an added entry a is all zero, for a removed one b.
Figures subtract(const Figures& b, const Figures& a);

enum class DiffStatus { Added, Removed, Changed, Same };
const char* status_name(DiffStatus s);

struct DiffEntry {
  std::string name;    // scope path (B's name when aligned) or op type
  std::string a_name;  // A's name when it differs (a renamed scope aligned by signature)
  std::string cls;     // module class, when known
  DiffStatus status = DiffStatus::Same;
  std::optional<Figures> a, b;  // absent for added (a) / removed (b)
  Figures delta;                // b - a, treating an absent side as zero
  int depth = 0;                // scope depth (1 = top-level module)
  bool subtree_root = false;    // added/removed entry whose parent is not itself added/removed
};

struct ShapeChange {
  std::string kind;  // "input", "output" (graph I/O) or "node" (a node output)
  std::string name;  // value name
  std::string node;  // node name for kind "node"
  std::string a, b;  // Shape::str() forms; "absent" when the value is missing on one side
};

struct Diff {
  std::string a_path, b_path;
  Figures a, b, delta;            // the reports' totals (params, buffers, macs, flops, memory_bytes,
                                  // backward_flops, uncounted_nodes)
  std::vector<DiffEntry> scopes;  // every scope of both sides (root excluded), sorted by largest change
  std::vector<DiffEntry> op_types;
  std::vector<ShapeChange> shape_changes;
  std::vector<std::string> warnings;
};

struct DiffOptions {
  std::string sort_by = "flops";  // params | macs | flops | memory_bytes: the key of "largest change"
  // Exact-alignment budget per parent scope, in steps (LCS table cells or Myers steps): past it, that
  // scope's children align approximately and Diff::warnings names the scope. Tests lower it.
  int64_t exact_align_cells = int64_t{1} << 22;  // 4 Mi: a full table up to 2047 x 2047 children
};

// Aligns the scope trees: children of aligned scopes pair up by label first; the rest pair up in
// order where their op signatures (the op types of every node in the subtree, in node order) are
// equal (a longest common subsequence), so renamed or re-indexed blocks align and inserted blocks
// show as added. Everything left over is added (only in B) or removed (only in A).
// Bounded: a common prefix (and suffix) of equal signatures pairs up first; the LCS of the rest is
// exact when its table, or Myers' O((n + m) D) algorithm, fits `exact_align_cells`; otherwise it is
// approximated in near-linear time (Myers in bounded chunks, then anchors: k-th occurrences of a
// signature paired, their longest increasing chain kept) and a warning names the parent scopes.
// Only which scopes pair up is approximate: totals and every entry's figures and deltas are exact.
Diff diff_reports(const AnalysedReport& a, const AnalysedReport& b, const DiffOptions& opts = {});

struct DiffFormatOptions {
  int top = -1;  // entries per section; -1: all (JSON) / 20 (text, markdown)
};
void write_diff_text(std::ostream& os, const Diff& d, const DiffFormatOptions& o);
void write_diff_json(std::ostream& os, const Diff& d, const DiffFormatOptions& o);  // "flopwise.diff/1"
void write_diff_markdown(std::ostream& os, const Diff& d, const DiffFormatOptions& o);
// One self-contained page: the two models side by side, changed/added/removed scopes highlighted.
void write_diff_html(std::ostream& os, const Diff& d);

// Percent change 100*(b-a)/a; nullopt when unknown or a is 0.
std::optional<double> percent_change(std::optional<int64_t> a, std::optional<int64_t> b);

}  // namespace flopwise
