// src/pt2/validate.cc — a read program's structural checks (validate.h) and torch 2.1's signature order.
#include "pt2/validate.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>

#include "flopwise/errors.h"

namespace flopwise::pt2 {

namespace {
// The values an argument reads (tensors and symbolic names), each passed to `f`.
template <class F>
void each_read(const Argument& a, F&& f) {
  switch (a.kind) {
    case ArgKind::Tensor:
    case ArgKind::Token:
      f(a.s);
      break;
    case ArgKind::SymInt:
    case ArgKind::SymFloat:
    case ArgKind::SymBool:
      if (!a.s.empty()) f(a.s);
      break;
    case ArgKind::CustomObj:
      break;  // a ScriptObject constant may be named by no graph input
    default:
      for (const Argument& x : a.items) each_read(x, f);
  }
}

struct Scope {
  const Scope* outer = nullptr;  // a subgraph may also read what encloses it
  std::unordered_set<std::string_view> defined;
  bool has(std::string_view n) const { return defined.count(n) || (outer && outer->has(n)); }
};

class Checker {
 public:
  Checker(const std::string& label) : label_(label) {}
  void graph(const Graph& g, const Scope* outer, const std::string& where);
  bool top_defined(std::string_view n) const { return top_.count(n) > 0; }

 private:
  [[noreturn]] void fail(const std::string& where, const std::string& why) const {
    throw InputError(label_ + ": " + where + why);
  }
  // `where()`: the context a failure names, built only when one is reported.
  template <class Where>
  void define(Scope& s, const Graph& g, const Argument& a, const Where& where);
  std::string node_where(const std::string& where, size_t i, const Node& n) const;
  std::unordered_set<std::string_view> later_;  // every name some node of the current graph defines
  std::unordered_set<std::string_view> top_;    // the top-level graph's values, for the signature's check
  const std::string& label_;
};

std::string Checker::node_where(const std::string& where, size_t i, const Node& n) const {
  std::string s = where + "node " + std::to_string(i);
  if (!n.name.empty()) s += " '" + std::string(n.name) + "'";
  return s + " (" + std::string(n.target) + "): ";
}

template <class Where>
void Checker::define(Scope& s, const Graph& g, const Argument& a, const Where& where) {
  if (a.kind == ArgKind::Tensors || a.kind == ArgKind::OptionalTensors) {
    for (const Argument& x : a.items) define(s, g, x, where);
    return;
  }
  if (a.kind != ArgKind::Tensor && !(a.kind == ArgKind::SymInt && !a.s.empty()) &&
      !(a.kind == ArgKind::SymBool && !a.s.empty()) && !(a.kind == ArgKind::SymFloat && !a.s.empty()) &&
      a.kind != ArgKind::CustomObj && a.kind != ArgKind::Token)
    return;
  if (a.s.empty()) fail(where(), "defines a value with an empty name");
  if (!s.defined.insert(a.s).second) fail(where(), "defines '" + std::string(a.s) + "' twice");
  if (a.kind == ArgKind::Tensor && !g.tensor_values.count(a.s))
    fail(where(), "tensor '" + std::string(a.s) + "' has no entry in tensor_values");
  if (a.kind == ArgKind::SymInt && !g.sym_int_values.count(a.s))
    fail(where(), "symbolic int '" + std::string(a.s) + "' has no entry in sym_int_values");
}
}  // namespace

namespace {
void Checker::graph(const Graph& g, const Scope* outer, const std::string& where) {
  Scope s;
  s.outer = outer;
  s.defined.reserve(g.inputs.size() + g.tensor_values.size() + g.sym_int_values.size());
  for (const Argument& a : g.inputs) define(s, g, a, [&] { return where + "graph input: "; });
  std::unordered_set<std::string_view> saved = std::move(later_);
  later_.clear();
  later_.reserve(g.nodes.size());
  for (const Node& n : g.nodes)
    for (const Argument& o : n.outputs) each_read(o, [&](std::string_view x) { later_.insert(x); });
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    auto at = [&] { return node_where(where, i, n); };  // built only for a message
    for (const NamedArgument& in : n.inputs) {
      if (in.arg.kind == ArgKind::Graph) {
        if (!in.arg.graph) fail(at(), "a subgraph argument without a graph");
        graph(*in.arg.graph, &s, at() + "subgraph '" + std::string(in.arg.s) + "': ");
        continue;
      }
      each_read(in.arg, [&](std::string_view x) {
        if (s.has(x)) return;
        if (later_.count(x))
          fail(at(), "reads '" + std::string(x) +
                         "' before the node that defines it (a program's graph is in "
                         "topological order as serialized: this one is out of order or has a cycle)");
        fail(at(), "reads '" + std::string(x) + "', which nothing defines");
      });
    }
    for (const Argument& o : n.outputs) define(s, g, o, at);
  }
  for (const Argument& o : g.outputs)
    each_read(o, [&](std::string_view x) {
      if (!s.has(x)) fail(where, "graph output '" + std::string(x) + "' is defined by nothing");
    });
  later_ = std::move(saved);
  if (!outer) top_ = std::move(s.defined);
}
}  // namespace

void validate_program(const Program& p, const std::string& label) {
  Checker c(label);
  c.graph(p.graph, nullptr, "");
  for (const InputSpec& in : p.inputs) {
    if (in.kind == InputKind::ConstantInput) continue;
    if (in.arg.kind == ArgKind::Tensor || in.arg.kind == ArgKind::SymInt ||
        in.arg.kind == ArgKind::CustomObj || in.arg.kind == ArgKind::Token) {
      if (!in.arg.s.empty() && !c.top_defined(in.arg.s))
        throw InputError(label + ": graph signature: input spec names '" + std::string(in.arg.s) +
                         "', which is no input of the graph");
    }
  }
  for (const OutputSpec& out : p.outputs)
    each_read(out.arg, [&](std::string_view x) {
      if (!c.top_defined(x))
        throw InputError(label + ": graph signature: output spec names '" + std::string(x) +
                         "', which nothing defines");
    });
}

void order_legacy_signature(Program& p) {
  auto order = [](auto& specs, const std::vector<Argument>& graph_args) {
    std::unordered_map<std::string_view, size_t> at;
    for (size_t i = 0; i < graph_args.size(); ++i)
      if (graph_args[i].kind == ArgKind::Tensor) at.emplace(graph_args[i].s, i);
    std::stable_sort(specs.begin(), specs.end(), [&](const auto& a, const auto& b) {
      auto ia = at.find(a.arg.s), ib = at.find(b.arg.s);
      size_t x = ia == at.end() ? SIZE_MAX : ia->second, y = ib == at.end() ? SIZE_MAX : ib->second;
      return x < y;
    });
  };
  order(p.inputs, p.graph.inputs);
  order(p.outputs, p.graph.outputs);
}

std::string_view Program::canonical_payload(std::string_view target) const {
  if (!tied_known_) {
    std::unordered_map<std::string, std::string_view> first;  // where a tensor lies -> its first name
    for (const Payload& pl : payloads) {
      if (pl.path.empty() || pl.meta.device == "meta") continue;
      std::string key(pl.path);
      key += '@' + std::to_string(pl.meta.storage_offset) + ':' + std::to_string(pl.meta.dtype_code);
      for (const SymInt& s : pl.meta.sizes)
        key += ',' + (s.is_expr ? std::string(s.expr) : std::to_string(s.value));
      tied_.emplace(pl.name, first.emplace(std::move(key), pl.name).first->second);
    }
    tied_known_ = true;
  }
  auto it = tied_.find(target);
  return it == tied_.end() ? target : it->second;
}

}  // namespace flopwise::pt2
