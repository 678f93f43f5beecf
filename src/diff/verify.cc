// src/diff/verify.cc — see flopwise/verify.h.
#include "flopwise/verify.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

namespace flopwise {
namespace {

using json = nlohmann::json;

// Beyond this many cells the pairing table is not built: each executed op takes the next static op of its
// name (greedy, linear in the scope's ops).
constexpr size_t kMaxPairCells = size_t{1} << 22;

std::string dims_str(const std::vector<int64_t>& d) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < d.size(); ++i) os << (i ? "," : "") << d[i];
  os << "]";
  return os.str();
}

// One argument or result as it ran: not a tensor, a tensor, or a tensor list.
struct Arg {
  enum Kind { Other, Tensor, List } kind = Other;
  std::vector<std::vector<int64_t>> shapes;
};

// An executed op, its shapes read from the runtime's JSON once (pairing compares each op many times).
struct Executed {
  std::string name;
  std::optional<std::vector<Arg>> inputs, outputs;  // nullopt: not recorded
  bool has_tensor() const {
    for (const auto* side : {&inputs, &outputs})
      if (*side)
        for (const auto& a : **side)
          if (a.kind != Arg::Other) return true;
    return false;
  }
};

std::optional<std::vector<Arg>> read_args(const json& op, const char* key) {
  if (!op.contains(key) || !op.at(key).is_array()) return std::nullopt;
  std::vector<Arg> args;
  for (const auto& x : op.at(key)) {
    Arg a;
    if (x.is_object()) {
      a.kind = Arg::List;
      for (const auto& t : x.value("list", json::array())) a.shapes.push_back(t.get<std::vector<int64_t>>());
    } else if (x.is_array()) {
      a.kind = Arg::Tensor;
      a.shapes.push_back(x.get<std::vector<int64_t>>());
    }
    args.push_back(std::move(a));
  }
  return args;
}

// Shape comparison of one executed op with one static op. `dry`: stop at the first difference, no text.
struct OpCheck {
  int64_t checked = 0, unknown = 0;
  std::vector<std::string> diffs;
};

class Checker {
 public:
  explicit Checker(const Graph& g) : g_(g) {}

  OpCheck check(const Executed& e, const SourceOp& s, const std::string& label, bool dry) const {
    OpCheck c;
    for (bool in : {true, false}) {
      const auto& ran = in ? e.inputs : e.outputs;
      const auto& ids = in ? s.inputs : s.outputs;
      // Arguments line up with the schema; a vararg op's stack does not: compare nothing rather than guess.
      if (!ran || ran->size() != ids.size()) continue;
      for (size_t i = 0; i < ran->size(); ++i) {
        compare(dry ? std::string() : label + (in ? " input " : " output ") + std::to_string(i), (*ran)[i],
                ids[i], c, dry);
        if (dry && !c.diffs.empty()) return c;
      }
    }
    return c;
  }

 private:
  void compare(const std::string& where, const Arg& ran, const std::vector<int>& ids, OpCheck& c,
               bool dry) const {
    if (ran.kind == Arg::Other) return;
    bool list = ran.kind == Arg::List;
    if (list && ids.size() != ran.shapes.size()) {
      c.diffs.push_back(dry ? std::string()
                            : where + ": ran a list of " + std::to_string(ran.shapes.size()) +
                                  " tensors, the static analysis has " + std::to_string(ids.size()));
      return;
    }
    if (!list && ids.size() != 1) {
      c.unknown++;
      return;
    }
    for (size_t k = 0; k < ran.shapes.size(); ++k) {
      int id = ids[k];
      if (id < 0 || static_cast<size_t>(id) >= g_.values.size()) {
        c.unknown++;
        continue;
      }
      const Value& v = g_.values[static_cast<size_t>(id)];
      const auto& d = ran.shapes[k];
      if (!v.shape.rank_known) {
        c.unknown++;
        continue;
      }
      bool differs = v.shape.rank() != d.size(), partial = false;
      for (size_t i = 0; !differs && i < d.size(); ++i) {
        if (!v.shape.dims[i].is_known())
          partial = true;
        else if (v.shape.dims[i].value() != d[i])
          differs = true;
      }
      if (differs) {
        std::string at = list ? where + "[" + std::to_string(k) + "]" : where;
        c.diffs.push_back(dry ? std::string()
                              : at + ": ran " + dims_str(d) + ", the static analysis has " + v.shape.str() +
                                    " (value " + v.name + ")");
        if (dry) return;
      } else if (partial) {
        c.unknown++;
      } else {
        c.checked++;
      }
    }
  }

  const Graph& g_;
};

// Pairs executed ops with static ops of the same name, in order: the most pairs, and among those the most
// whose shapes agree (the executor's dead-code elimination or a static op that never ran must not shift
// the pairing onto a neighbour of the same name). Returns an index into `b` per executed op, or -1.
std::vector<int> pair_ops(const std::vector<Executed>& a, const std::vector<const SourceOp*>& b,
                          const Checker& ch) {
  size_t n = a.size(), m = b.size();
  std::vector<int> out(n, -1);
  bool same = n == m;
  for (size_t i = 0; same && i < n; ++i) same = a[i].name == b[i]->kind;
  if (same) {
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<int>(i);
    return out;
  }
  if ((n + 1) * (m + 1) > kMaxPairCells) {
    size_t j = 0;
    for (size_t i = 0; i < n; ++i) {
      size_t k = j;
      while (k < m && b[k]->kind != a[i].name) ++k;
      if (k < m) out[i] = static_cast<int>(k), j = k + 1;
    }
    return out;
  }
  // t[i][j]: best score pairing a[i:] with b[j:]; a pair scores kPair, plus 1 when its shapes agree.
  constexpr int64_t kPair = int64_t{1} << 32;
  std::vector<int64_t> t((n + 1) * (m + 1), 0);
  auto at = [&](size_t i, size_t j) -> int64_t& { return t[i * (m + 1) + j]; };
  auto pair_score = [&](size_t i, size_t j) -> int64_t {
    if (a[i].name != b[j]->kind) return -1;
    return kPair + (ch.check(a[i], *b[j], "", true).diffs.empty() ? 1 : 0);
  };
  std::vector<int64_t> score(n * m);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < m; ++j) score[i * m + j] = pair_score(i, j);
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;) {
      int64_t best = std::max(at(i + 1, j), at(i, j + 1));
      if (score[i * m + j] >= 0) best = std::max(best, at(i + 1, j + 1) + score[i * m + j]);
      at(i, j) = best;
    }
  for (size_t i = 0, j = 0; i < n && j < m;) {
    int64_t sc = score[i * m + j];
    if (sc >= 0 && at(i, j) == at(i + 1, j + 1) + sc) {
      out[i] = static_cast<int>(j);
      ++i, ++j;
    } else if (at(i, j) == at(i + 1, j)) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

}  // namespace

VerifyResult verify_shapes(const Model& m, const json& ops) {
  VerifyResult r;
  std::map<std::string, std::vector<Executed>> ran;  // scope -> ops in order
  int first = -1;
  for (const auto& op : ops) {
    int iter = op.value("iter", 0);
    if (first < 0) first = iter;
    if (iter != first) break;
    Executed e{op.value("name", ""), read_args(op, "input_shapes"), read_args(op, "output_shapes")};
    if (!e.has_tensor()) continue;
    ran[op.value("scope", "")].push_back(std::move(e));
    r.executed++;
  }
  std::map<std::string, std::vector<const SourceOp*>> stat;
  for (const auto& s : m.source_ops) stat[s.scope].push_back(&s);
  Checker check(m.graph);
  for (const auto& [scope, es] : ran) {
    const auto& ss = stat[scope];
    std::vector<int> pairs = pair_ops(es, ss, check);
    std::map<std::string, int> nth;
    std::string where = scope.empty() ? "(model)" : scope;
    for (size_t i = 0; i < es.size(); ++i) {
      std::string label = where + ": " + es[i].name + " #" + std::to_string(++nth[es[i].name]);
      if (pairs[i] < 0) {
        r.unmatched.push_back(label + " ran, but the static analysis has no such op left in this scope");
        continue;
      }
      r.matched++;
      OpCheck c = check.check(es[i], *ss[static_cast<size_t>(pairs[i])], label, false);
      r.shapes_checked += c.checked;
      r.unknown_static += c.unknown;
      for (auto& d : c.diffs) r.disagreements.push_back(std::move(d));
    }
  }
  return r;
}

}  // namespace flopwise
