// src/diff/diff.cc — flopwise diff: scope alignment and deltas between two Reports (see flopwise/diff.h for
// the contract).
#include "flopwise/diff.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "flopwise/calibration.h"
#include "flopwise/training.h"

namespace flopwise {

std::optional<int64_t> Figures::get(const std::string& key) const {
  for (const auto& [k, v] : items)
    if (k == key) return v;
  return std::nullopt;
}

void Figures::set(const std::string& key, std::optional<int64_t> v) {
  for (auto& [k, old] : items)
    if (k == key) {
      old = v;
      return;
    }
  items.push_back({key, v});
}

Figures subtract(const Figures& b, const Figures& a) {
  Figures d;
  for (const auto& [k, vb] : b.items) {
    std::optional<int64_t> va = a.get(k), r;
    int64_t out;
    if (vb && va && !__builtin_sub_overflow(*vb, *va, &out)) r = out;
    d.items.push_back({k, r});
  }
  return d;
}

const char* status_name(DiffStatus s) {
  switch (s) {
    case DiffStatus::Added:
      return "added";
    case DiffStatus::Removed:
      return "removed";
    case DiffStatus::Changed:
      return "changed";
    case DiffStatus::Same:
      return "same";
  }
  return "?";
}

std::optional<double> percent_change(std::optional<int64_t> a, std::optional<int64_t> b) {
  if (!a || !b || *a == 0) return std::nullopt;
  return 100.0 * (static_cast<double>(*b) - static_cast<double>(*a)) / static_cast<double>(*a);
}

namespace {

std::optional<int64_t> opt(const Count& c) { return c.known ? std::optional<int64_t>(c.v) : std::nullopt; }

Figures totals_figures(const Totals& t) {
  Figures f;
  f.items = {{"params", opt(t.params)},
             {"buffers", opt(t.buffers)},
             {"macs", opt(t.macs)},
             {"flops", opt(t.flops)},
             {"memory_bytes", opt(t.memory_bytes)},
             {"backward_flops", opt(t.backward_flops)},
             {"uncounted_nodes", t.uncounted}};
  return f;
}

// --train on both sides: the step's figures after the forward's (flopwise/training.h).
void add_training(Figures& f, const TrainingReport& t) {
  f.items.push_back({"train_backward_macs", opt(t.total.backward_macs)});
  f.items.push_back({"train_backward_flops", opt(t.total.backward_flops)});
  f.items.push_back({"trainable_params", opt(t.total.trainable_params)});
  f.items.push_back({"saved_activation_bytes", opt(t.total.saved_bytes)});
  f.items.push_back({"optimizer_state_bytes", opt(t.optimizer_state_bytes)});
  f.items.push_back({"memory_estimate_bytes", opt(t.memory_estimate_bytes)});
}

// --predict on both sides: the predicted latency (the op sum) and forward, in microseconds
// (flopwise/calibration.h); the forward only where the calibration fitted one.
void add_prediction(Figures& f, const LatencyPrediction& p) {
  f.items.push_back({"predicted_latency_us", static_cast<int64_t>(std::llround(p.total_ms * 1e3))});
  if (p.wall_ms >= 0)
    f.items.push_back({"predicted_forward_us", static_cast<int64_t>(std::llround(p.wall_ms * 1e3))});
}

Figures scope_figures(const ScopeNode& s) {
  Figures f;
  f.items = {{"params", opt(s.cost.params)},
             {"macs", opt(s.cost.macs)},
             {"flops", opt(s.cost.flops)},
             {"memory_bytes", opt(s.cost.memory_bytes)},
             {"uncounted_nodes", s.cost.uncounted}};
  return f;
}

Figures op_figures(const OpTypeReport& o) {
  Figures f;
  f.items = {{"count", o.count},
             {"params", opt(o.params)},
             {"macs", opt(o.macs)},
             {"flops", opt(o.flops)},
             {"memory_bytes", opt(o.memory_bytes)}};
  return f;
}

Figures zero_like(const Figures& f) {
  Figures z;
  for (const auto& [k, v] : f.items) z.items.push_back({k, int64_t{0}});
  return z;
}

DiffEntry make_entry(const std::string& name, const std::string& a_name, const std::optional<Figures>& a,
                     const std::optional<Figures>& b) {
  DiffEntry e;
  e.name = name;
  if (a && b && a_name != name) e.a_name = a_name;
  e.a = a;
  e.b = b;
  if (a && b) {
    e.delta = subtract(*b, *a);
    e.status = a->items == b->items ? DiffStatus::Same : DiffStatus::Changed;
  } else if (b) {
    e.delta = subtract(*b, zero_like(*b));
    e.status = DiffStatus::Added;
  } else {
    e.delta = subtract(zero_like(*a), *a);
    e.status = DiffStatus::Removed;
  }
  return e;
}

// Op signatures (the op types of every node in a scope's subtree, in node order) interned to ids shared
// by both sides: equal ids <=> equal sequences (the hash only buckets; keys compare element by element).
// Id 0: a scope without nodes, which never pairs by signature.
class SigTable {
 public:
  uint32_t op_id(const NodeReport& n) {
    return op_ids_.try_emplace(op_key(n), static_cast<uint32_t>(op_ids_.size())).first->second;
  }
  uint32_t intern(std::vector<uint32_t>&& ops) {
    if (ops.empty()) return 0;
    auto id = static_cast<uint32_t>(sig_ids_.size() + 1);
    return sig_ids_.emplace(std::move(ops), id).first->second;
  }

 private:
  struct SeqHash {
    size_t operator()(const std::vector<uint32_t>& v) const {
      uint64_t h = 0x9e3779b97f4a7c15ull ^ v.size();
      for (uint32_t x : v) h = (h ^ x) * 0x100000001b3ull;
      return static_cast<size_t>(h ^ (h >> 29));
    }
  };
  std::unordered_map<std::string, uint32_t> op_ids_;
  std::unordered_map<std::vector<uint32_t>, uint32_t, SeqHash> sig_ids_;
};

// The signature id of each scope of one report (0 for the root). O(nodes x scope depth) time; the
// per-scope op lists live only until interned.
struct Side {
  std::unordered_map<const ScopeNode*, uint32_t> sig;

  Side(const Report& rep, SigTable& table) {
    if (!rep.scopes) return;
    std::vector<const ScopeNode*> order;  // preorder; index 0 is the root
    std::vector<int> parent;
    std::unordered_map<std::string_view, int> by_name;  // the first scope in preorder of each name
    std::vector<std::pair<const ScopeNode*, int>> stack{{rep.scopes.get(), -1}};
    while (!stack.empty()) {
      auto [s, p] = stack.back();
      stack.pop_back();
      int i = static_cast<int>(order.size());
      order.push_back(s);
      parent.push_back(p);
      by_name.emplace(s->name, i);
      for (auto c = s->children.rbegin(); c != s->children.rend(); ++c) stack.push_back({c->get(), i});
    }
    std::vector<std::vector<uint32_t>> ops(order.size());
    for (const auto& n : rep.nodes) {
      auto it = by_name.find(n.scope);
      if (it == by_name.end()) continue;
      uint32_t op = table.op_id(n);
      for (int s = it->second; s > 0; s = parent[s]) ops[s].push_back(op);
    }
    sig.reserve(order.size());
    for (size_t i = 1; i < order.size(); ++i) sig.emplace(order[i], table.intern(std::move(ops[i])));
  }
  uint32_t of(const ScopeNode* s) const {
    auto it = sig.find(s);
    return it == sig.end() ? 0 : it->second;
  }
};

// A common subsequence of two id sequences (id 0 never matches): `pairs` (i, j) with a[i] == b[j],
// increasing in both. The exact methods (2, 3) share one budget of `cells` steps per call (a step: an LCS
// table cell, or a Myers diagonal or matched item), the approximate ones (4) a budget linear in n + m:
//  1. a common prefix pairs up (the LCS table's traceback makes the same choice), then, if the rest does
//     not fit the table, a common suffix;
//  2. exact LCS by the table when (n + 1)(m + 1) fits the budget left (O(nm) time and memory);
//  3. exact LCS by Myers' O((n + m) D) algorithm (D: insertions + deletions, O(D^2) memory) within half
//     the budget left: cheap when the sides differ by a few inserted, removed or changed items;
//  4. otherwise `approximate` is set. Myers runs in chunks of kChunkWork steps, each committing an
//     optimal path to the furthest point it reached, while kApproxWorkPerItem (n + m) steps last; what
//     is left is anchored: the k-th occurrence of an id in a pairs with its k-th occurrence in b, the
//     longest chain of those increasing in both is kept (patience sorting), and the gaps between
//     anchors are matched by 1-4 again, at most kMaxDepth levels deep.
// Total: O(cells + (kApproxWorkPerItem + kMaxDepth log(n + m)) (n + m)) time, O(cells + n + m) memory.
class SubsequenceMatcher {
 public:
  SubsequenceMatcher(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b, int64_t cells)
      : a_(a),
        b_(b),
        cells_left_(cells),
        approx_left_(kApproxWorkPerItem * static_cast<int64_t>(a.size() + b.size())) {}

  std::vector<std::pair<size_t, size_t>> pairs;
  bool approximate = false;

  void run() {
    match(0, a_.size(), 0, b_.size(), 0);
    std::sort(pairs.begin(), pairs.end());
  }

 private:
  static constexpr int kMaxDepth = 8;
  static constexpr int64_t kChunkWork = int64_t{1} << 18;  // ~720 Myers rounds
  static constexpr int64_t kApproxWorkPerItem = 64;
  const std::vector<uint32_t>& a_;
  const std::vector<uint32_t>& b_;
  int64_t cells_left_, approx_left_;

  bool same(size_t i, size_t j) const { return a_[i] != 0 && a_[i] == b_[j]; }

  bool exact_if_fits(size_t a0, size_t a1, size_t b0, size_t b1) {
    int64_t cells = static_cast<int64_t>(a1 - a0 + 1) * static_cast<int64_t>(b1 - b0 + 1);
    if (cells > cells_left_) return false;
    cells_left_ -= cells;
    size_t n = a1 - a0, m = b1 - b0, w = m + 1;
    std::vector<uint32_t> L((n + 1) * w, 0);  // L[i][j]: LCS of a[a0+i..a1) and b[b0+j..b1)
    for (size_t i = n; i-- > 0;)
      for (size_t j = m; j-- > 0;)
        L[i * w + j] = same(a0 + i, b0 + j) ? L[(i + 1) * w + j + 1] + 1
                                            : std::max(L[(i + 1) * w + j], L[i * w + j + 1]);
    for (size_t i = 0, j = 0; i < n && j < m;) {
      if (same(a0 + i, b0 + j) && L[i * w + j] == L[(i + 1) * w + j + 1] + 1) {
        pairs.push_back({a0 + i, b0 + j});
        ++i, ++j;
      } else if (L[(i + 1) * w + j] >= L[i * w + j + 1]) {
        ++i;
      } else {
        ++j;
      }
    }
    return true;
  }

  void match(size_t a0, size_t a1, size_t b0, size_t b1, int depth) {
    while (a0 < a1 && b0 < b1 && same(a0, b0)) pairs.push_back({a0++, b0++});
    if (a0 == a1 || b0 == b1 || exact_if_fits(a0, a1, b0, b1)) return;
    while (a0 < a1 && b0 < b1 && same(a1 - 1, b1 - 1)) pairs.push_back({--a1, --b1});
    if (a0 == a1 || b0 == b1 || exact_if_fits(a0, a1, b0, b1)) return;
    if (myers(a0, a1, b0, b1, cells_left_ / 2, false, cells_left_).first == a1) return;
    approximate = true;
    while (a0 < a1 && b0 < b1 && approx_left_ > 0)
      std::tie(a0, b0) = myers(a0, a1, b0, b1, std::min(kChunkWork, approx_left_), true, approx_left_);
    if (a0 == a1 || b0 == b1 || depth >= kMaxDepth) return;
    std::vector<std::pair<size_t, size_t>> anchors = anchor_chain(a0, a1, b0, b1);
    size_t pa = a0, pb = b0;
    for (const auto& [i, j] : anchors) {
      match(pa, i, pb, j, depth + 1);
      pairs.push_back({i, j});
      pa = i + 1, pb = j + 1;
    }
    if (!anchors.empty()) match(pa, a1, pb, b1, depth + 1);
  }

  // Myers' greedy LCS (E. Myers, "An O(ND) difference algorithm and its variations", 1986) on
  // a[a0, a1) x b[b0, b1) in at most about `max_work` steps, charged to `budget`; each round's furthest
  // points are kept for the traceback. Done: pairs an LCS and returns {a1, b1}. Out of steps: with
  // `partial`, pairs an optimal path to the furthest point (largest x + y) of the last round and returns
  // it (past the start: a round always runs); without, pairs nothing and returns {a0, b0}.
  std::pair<size_t, size_t> myers(size_t a0, size_t a1, size_t b0, size_t b1, int64_t max_work, bool partial,
                                  int64_t& budget) {
    const int64_t n = static_cast<int64_t>(a1 - a0), m = static_cast<int64_t>(b1 - b0);
    // Round d costs d + 1 steps, so at most ~sqrt(2 max_work) + 1 rounds run.
    // A spent budget (max_work <= 0) still runs its first rounds.
    const int64_t dmax = std::min<int64_t>(
        n + m,
        static_cast<int64_t>(std::sqrt(2.0 * static_cast<double>(std::max<int64_t>(max_work, 0)))) + 2);
    std::vector<int64_t> v(static_cast<size_t>(2 * dmax + 3), 0);  // furthest x on diagonal k = x - y
    const int64_t off = dmax + 1;
    std::vector<int64_t> trace;  // round d's v[-d], v[-d + 2] .. v[d] from trace[d (d + 1) / 2]
    int64_t work = 0, end_d = -1, end_x = 0, end_y = 0;
    for (int64_t d = 0; end_d < 0; ++d) {
      int64_t best = -1, best_x = 0;
      bool done = false;
      for (int64_t k = -d; k <= d && !done; k += 2) {
        int64_t x =
            k == -d || (k != d && v[off + k - 1] < v[off + k + 1]) ? v[off + k + 1] : v[off + k - 1] + 1;
        int64_t y = x - k;
        while (x < n && y < m && same(a0 + x, b0 + y)) ++x, ++y, ++work;
        v[off + k] = x;
        trace.push_back(x);
        done = x >= n && y >= m;
        if (x <= n && y <= m && x + y > best) best = x + y, best_x = x;  // in the grid
        if (done) best_x = x, best = x + y;
      }
      work += d + 1;
      if (done) {
        end_d = d, end_x = n, end_y = m;
      } else if (d >= 1 && (work > max_work || d + 1 >= dmax)) {
        if (!partial) {
          budget -= work;
          return {a0, b0};
        }
        end_d = d, end_x = best_x, end_y = best - best_x;
      }
    }
    budget -= work;
    // Trace back: each round is one insertion or deletion, then a run of equal items.
    auto at = [&](int64_t d, int64_t k) { return trace[static_cast<size_t>(d * (d + 1) / 2 + (k + d) / 2)]; };
    int64_t x = end_x, y = end_y;
    for (int64_t d = end_d; d > 0; --d) {
      int64_t k = x - y;
      int64_t pk = k == -d || (k != d && at(d - 1, k - 1) < at(d - 1, k + 1)) ? k + 1 : k - 1;
      int64_t px = at(d - 1, pk), py = px - pk;
      while (x > px && y > py) --x, --y, pairs.push_back({a0 + x, b0 + y});
      x = px, y = py;
    }
    while (x > 0 && y > 0) --x, --y, pairs.push_back({a0 + x, b0 + y});
    return {a0 + static_cast<size_t>(end_x), b0 + static_cast<size_t>(end_y)};
  }

  // Candidates: the k-th occurrence of each id in a[a0, a1) with its k-th in b[b0, b1), in a's order;
  // kept: their longest chain with b's positions increasing (patience sorting, O(p log p)).
  std::vector<std::pair<size_t, size_t>> anchor_chain(size_t a0, size_t a1, size_t b0, size_t b1) const {
    std::unordered_map<uint32_t, std::pair<std::vector<size_t>, size_t>> in_b;  // id -> (positions, used)
    for (size_t j = b0; j < b1; ++j)
      if (b_[j] != 0) in_b[b_[j]].first.push_back(j);
    std::vector<std::pair<size_t, size_t>> cand;
    for (size_t i = a0; i < a1; ++i) {
      auto it = in_b.find(a_[i]);
      if (it == in_b.end()) continue;
      auto& [pos, used] = it->second;
      if (used < pos.size()) cand.push_back({i, pos[used++]});
    }
    std::vector<size_t> tails;  // tails[k]: candidate ending the best chain of length k + 1
    std::vector<size_t> prev(cand.size(), SIZE_MAX);
    for (size_t c = 0; c < cand.size(); ++c) {
      auto at = std::lower_bound(tails.begin(), tails.end(), cand[c].second,
                                 [&](size_t t, size_t j) { return cand[t].second < j; });
      if (at != tails.begin()) prev[c] = *(at - 1);
      if (at == tails.end())
        tails.push_back(c);
      else
        *at = c;
    }
    std::vector<std::pair<size_t, size_t>> chain;
    for (size_t c = tails.empty() ? SIZE_MAX : tails.back(); c != SIZE_MAX; c = prev[c])
      chain.push_back(cand[c]);
    std::reverse(chain.begin(), chain.end());
    return chain;
  }
};

struct Aligner {
  const Side& A;
  const Side& B;
  int64_t exact_cells;
  std::vector<DiffEntry>& out;
  std::vector<std::string> approximate;  // "parent (n vs m unaligned children)" per approximate parent

  void whole_subtree(const ScopeNode& s, bool added, bool root) {
    DiffEntry e = added ? make_entry(s.name, "", std::nullopt, scope_figures(s))
                        : make_entry(s.name, "", scope_figures(s), std::nullopt);
    e.cls = s.cls;
    e.depth = s.depth;
    e.subtree_root = root;
    out.push_back(std::move(e));
    for (const auto& c : s.children) whole_subtree(*c, added, false);
  }

  void align(const ScopeNode& pa, const ScopeNode& pb) {
    const auto& ca = pa.children;
    const auto& cb = pb.children;
    std::vector<int> match_a(ca.size(), -1), match_b(cb.size(), -1);
    // 1. By label (the path below the parent): the same module in both.
    std::unordered_map<std::string_view, size_t> b_label;
    b_label.reserve(cb.size());
    for (size_t j = 0; j < cb.size(); ++j) b_label.emplace(cb[j]->label, j);
    for (size_t i = 0; i < ca.size(); ++i) {
      auto it = b_label.find(ca[i]->label);
      if (it != b_label.end() && match_b[it->second] < 0) {
        match_a[i] = static_cast<int>(it->second);
        match_b[it->second] = static_cast<int>(i);
      }
    }
    // 2. The rest, in order, by equal op signature (a common subsequence; see SubsequenceMatcher).
    std::vector<size_t> ua, ub;
    std::vector<uint32_t> sa, sb;
    for (size_t i = 0; i < ca.size(); ++i)
      if (match_a[i] < 0) ua.push_back(i), sa.push_back(A.of(ca[i].get()));
    for (size_t j = 0; j < cb.size(); ++j)
      if (match_b[j] < 0) ub.push_back(j), sb.push_back(B.of(cb[j].get()));
    if (!ua.empty() && !ub.empty()) {
      SubsequenceMatcher m(sa, sb, exact_cells);
      m.run();
      for (const auto& [i, j] : m.pairs) {
        match_a[ua[i]] = static_cast<int>(ub[j]);
        match_b[ub[j]] = static_cast<int>(ua[i]);
      }
      if (m.approximate)
        approximate.push_back((pb.name.empty() ? std::string("(root)") : pb.name) + " (" +
                              std::to_string(ua.size()) + " vs " + std::to_string(ub.size()) + " children)");
    }
    // Emit in B's order, then A's leftovers.
    for (size_t j = 0; j < cb.size(); ++j) {
      if (match_b[j] < 0) {
        whole_subtree(*cb[j], true, true);
        continue;
      }
      const ScopeNode& sa_ = *ca[match_b[j]];
      const ScopeNode& sb_ = *cb[j];
      DiffEntry e = make_entry(sb_.name, sa_.name, scope_figures(sa_), scope_figures(sb_));
      e.cls = sb_.cls.empty() ? sa_.cls : sb_.cls;
      e.depth = sb_.depth;
      out.push_back(std::move(e));
      align(sa_, sb_);
    }
    for (size_t i = 0; i < ca.size(); ++i)
      if (match_a[i] < 0) whole_subtree(*ca[i], false, true);
  }
};

int64_t magnitude(const DiffEntry& e, const std::string& key) {
  auto v = e.delta.get(key);
  return v ? std::llabs(*v) : 0;
}

// Largest |delta| of `key` first, then of flops, macs, params, memory_bytes; then changed before same;
// stable. Each entry's magnitudes are read once.
void sort_by_change(std::vector<DiffEntry>& v, const std::string& key) {
  static const char* kTie[] = {"flops", "macs", "params", "memory_bytes"};
  struct Rank {
    std::array<int64_t, 5> mag;
    bool changed;
    size_t index;
  };
  std::vector<Rank> ranks;
  ranks.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    Rank r{{magnitude(v[i], key), 0, 0, 0, 0}, v[i].status != DiffStatus::Same, i};
    for (size_t k = 0; k < 4; ++k) r.mag[k + 1] = magnitude(v[i], kTie[k]);
    ranks.push_back(r);
  }
  std::stable_sort(ranks.begin(), ranks.end(), [](const Rank& x, const Rank& y) {
    if (x.mag != y.mag) return x.mag > y.mag;
    return x.changed > y.changed;
  });
  std::vector<DiffEntry> sorted;
  sorted.reserve(v.size());
  for (const Rank& r : ranks) sorted.push_back(std::move(v[r.index]));
  v = std::move(sorted);
}

}  // namespace

Diff diff_reports(const AnalysedReport& a, const AnalysedReport& b, const DiffOptions& opts) {
  Diff d;
  d.a_path = a.path;
  d.b_path = b.path;
  d.a = totals_figures(a.totals);
  d.b = totals_figures(b.totals);
  if (a.training && b.training) {
    add_training(d.a, *a.training);
    add_training(d.b, *b.training);
  }
  if (a.prediction && b.prediction) {
    add_prediction(d.a, *a.prediction);
    add_prediction(d.b, *b.prediction);
  }
  d.delta = subtract(d.b, d.a);
  if (a.convention != b.convention)
    d.warnings.push_back("the reports use different conventions: " + a.convention + " vs " + b.convention);
  if (!a.totals.complete() || !b.totals.complete())
    d.warnings.push_back("some nodes were not counted (" + std::to_string(a.totals.uncounted) + " in A, " +
                         std::to_string(b.totals.uncounted) + " in B): deltas cover the counted part only");

  std::set<std::string> dims;
  for (const Totals* t : {&a.totals, &b.totals})
    for (const Count* c : {&t->macs, &t->flops, &t->memory_bytes})
      for (const auto& s : c->sym.symbols()) dims.insert(s);
  if (!dims.empty()) {
    std::string list;
    for (const auto& s : dims) list += " --dim " + s + "=N";
    d.warnings.push_back("costs depend on dynamic dims; bind them for numeric deltas:" + list);
  }

  SigTable sigs;
  Side sa(a, sigs), sb(b, sigs);
  Aligner al{sa, sb, opts.exact_align_cells, d.scopes, {}};
  if (a.scopes && b.scopes) al.align(*a.scopes, *b.scopes);
  if (!al.approximate.empty()) {
    std::string list;
    for (size_t i = 0; i < al.approximate.size() && i < 10; ++i) list += (i ? ", " : "") + al.approximate[i];
    if (al.approximate.size() > 10) list += ", ... (" + std::to_string(al.approximate.size() - 10) + " more)";
    d.warnings.push_back("scope alignment is approximate under " + list +
                         ": an exact LCS of the children unmatched by name would take over " +
                         std::to_string(opts.exact_align_cells) +
                         " steps, so some may pair differently than an optimal alignment would "
                         "(totals and every scope's figures and deltas are exact)");
  }
  sort_by_change(d.scopes, opts.sort_by);

  std::map<std::string, const OpTypeReport*> a_ops;
  for (const auto& o : a.op_types) a_ops[o.op] = &o;
  std::set<std::string> seen;
  for (const auto& o : b.op_types) {
    seen.insert(o.op);
    auto it = a_ops.find(o.op);
    d.op_types.push_back(it == a_ops.end() ? make_entry(o.op, o.op, std::nullopt, op_figures(o))
                                           : make_entry(o.op, o.op, op_figures(*it->second), op_figures(o)));
  }
  for (const auto& o : a.op_types)
    if (!seen.count(o.op)) d.op_types.push_back(make_entry(o.op, o.op, op_figures(o), std::nullopt));
  sort_by_change(d.op_types, opts.sort_by);

  // Shape changes: graph inputs and outputs by name, then outputs of nodes present in both.
  auto io = [&](const char* kind, const auto& va, const auto& vb) {
    std::map<std::string, std::string> ma;
    for (const auto& [name, ts] : va) ma[name] = ts.second.str();
    std::set<std::string> in_b;
    for (const auto& [name, ts] : vb) {
      in_b.insert(name);
      auto it = ma.find(name);
      std::string sa_ = it == ma.end() ? "absent" : it->second;
      if (sa_ != ts.second.str()) d.shape_changes.push_back({kind, name, "", sa_, ts.second.str()});
    }
    for (const auto& [name, ts] : va)
      if (!in_b.count(name)) d.shape_changes.push_back({kind, name, "", ts.second.str(), "absent"});
  };
  io("input", a.inputs, b.inputs);
  io("output", a.outputs, b.outputs);
  std::unordered_map<std::string_view, const NodeReport*> a_nodes;
  a_nodes.reserve(a.nodes.size());
  for (const auto& n : a.nodes)
    if (!n.name.empty()) a_nodes.emplace(n.name, &n);
  for (const auto& n : b.nodes) {
    auto it = a_nodes.find(n.name);
    if (n.name.empty() || it == a_nodes.end() || op_key(*it->second) != op_key(n)) continue;
    const auto& oa = it->second->outputs;
    for (size_t k = 0; k < n.outputs.size() && k < oa.size(); ++k) {
      if (oa[k].second == n.outputs[k].second) continue;  // equal shapes print equally
      std::string s1 = oa[k].second.str(), s2 = n.outputs[k].second.str();
      if (s1 != s2)
        d.shape_changes.push_back({"node", std::string(n.outputs[k].first), std::string(n.name), s1, s2});
    }
  }
  return d;
}

}  // namespace flopwise
