// src/pt2/sym_expr.cc — torch's SymExpr text (sympy srepr or str) parsed into an expression tree, then
// evaluated with Dim's checked arithmetic; functions chosen from one table by name.
#include "pt2/sym_expr.h"

#include <algorithm>
#include <cctype>
#include <functional>

namespace flopwise::pt2 {

namespace {
constexpr size_t kMaxText = 1 << 20;  // characters of one expression
constexpr int kMaxDepth = 200;        // nesting of parentheses and calls
constexpr int kMaxHeight = 1000;      // of the expression tree (a + b + c ... nests to the left)

struct Ast {
  enum Op { Num, Sym, Str, Call, Add, Sub, Mul, Div, FloorDiv, Mod, Pow, Neg, Keyword } op = Num;
  int64_t num = 0;
  std::string_view name;  // symbol, string, function or keyword name
  std::vector<int> kids;  // indices into the tree's node pool
  int height = 0;         // of the tree below it (evaluation recurses that deep)
};

struct Fail {
  std::string why;
};

class Parser {
 public:
  explicit Parser(std::string_view t) : t_(t) {}
  std::vector<Ast> nodes;
  int parse() {
    int root = expr(0);
    skip();
    if (at_ < t_.size()) throw Fail{"unexpected '" + std::string(1, t_[at_]) + "' at " + std::to_string(at_)};
    return root;
  }

 private:
  void skip() {
    while (at_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[at_]))) ++at_;
  }
  bool eat(std::string_view s) {
    skip();
    if (t_.substr(at_, s.size()) != s) return false;
    at_ += s.size();
    return true;
  }
  int make(Ast::Op op, std::vector<int> kids = {}) {
    int height = 0;
    for (int k : kids) height = std::max(height, nodes[k].height + 1);
    if (height > kMaxHeight) throw Fail{"an expression tree deeper than " + std::to_string(kMaxHeight)};
    nodes.push_back(Ast{op, 0, {}, std::move(kids), height});
    return static_cast<int>(nodes.size()) - 1;
  }
  void adopt(int parent, int kid) {
    nodes[parent].kids.push_back(kid);
    nodes[parent].height = std::max(nodes[parent].height, nodes[kid].height + 1);
    if (nodes[parent].height > kMaxHeight)
      throw Fail{"an expression tree deeper than " + std::to_string(kMaxHeight)};
  }
  int expr(int depth) {
    if (depth > kMaxDepth) throw Fail{"nested deeper than " + std::to_string(kMaxDepth)};
    int left = term(depth);
    for (;;) {
      if (eat("+"))
        left = make(Ast::Add, {left, term(depth)});
      else if (eat("-"))
        left = make(Ast::Sub, {left, term(depth)});
      else
        return left;
    }
  }
  int term(int depth) {
    int left = unary(depth);
    for (;;) {
      skip();
      if (t_.substr(at_, 2) == "**") return left;  // handled by power()
      if (eat("//"))
        left = make(Ast::FloorDiv, {left, unary(depth)});
      else if (eat("*"))
        left = make(Ast::Mul, {left, unary(depth)});
      else if (eat("/"))
        left = make(Ast::Div, {left, unary(depth)});
      else if (eat("%"))
        left = make(Ast::Mod, {left, unary(depth)});
      else
        return left;
    }
  }
  int unary(int depth) {
    if (depth > kMaxDepth) throw Fail{"nested deeper than " + std::to_string(kMaxDepth)};
    if (eat("-")) return make(Ast::Neg, {unary(depth + 1)});
    if (eat("+")) return unary(depth + 1);
    int base = atom(depth);
    if (eat("**")) return make(Ast::Pow, {base, unary(depth + 1)});
    return base;
  }
  int atom(int depth);
  int number();
  int string();
  std::string_view t_;
  size_t at_ = 0;
};

int Parser::number() {
  int64_t v = 0;
  while (at_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[at_]))) {
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, t_[at_] - '0', &v))
      throw Fail{"an integer beyond 64 bits"};
    ++at_;
  }
  if (at_ < t_.size() && (t_[at_] == '.' || t_[at_] == 'e' || t_[at_] == 'E')) throw Fail{"a float"};
  int n = make(Ast::Num);
  nodes[n].num = v;
  return n;
}

int Parser::string() {
  char quote = t_[at_++];
  size_t end = t_.find(quote, at_);
  if (end == std::string_view::npos) throw Fail{"an unterminated string"};
  int n = make(Ast::Str);
  nodes[n].name = t_.substr(at_, end - at_);
  at_ = end + 1;
  return n;
}

int Parser::atom(int depth) {
  skip();
  if (at_ >= t_.size()) throw Fail{"an expression that ends early"};
  char c = t_[at_];
  if (std::isdigit(static_cast<unsigned char>(c))) return number();
  if (c == '\'' || c == '"') return string();
  if (eat("(")) {
    int inner = expr(depth + 1);
    if (!eat(")")) throw Fail{"a missing ')'"};
    return inner;
  }
  if (!std::isalpha(static_cast<unsigned char>(c)) && c != '_')
    throw Fail{"unexpected '" + std::string(1, c) + "'"};
  size_t start = at_;
  while (at_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[at_])) || t_[at_] == '_')) ++at_;
  std::string_view name = t_.substr(start, at_ - start);
  if (!eat("(")) {
    int n = make(Ast::Sym);
    nodes[n].name = name;
    return n;
  }
  int call = make(Ast::Call);
  nodes[call].name = name;
  if (eat(")")) return call;
  do {
    skip();
    size_t save = at_;
    while (at_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[at_])) || t_[at_] == '_')) ++at_;
    if (at_ > save && eat("=") && !eat("=")) {  // a keyword argument (integer=True): kept, never evaluated
      int kw = make(Ast::Keyword);
      nodes[kw].name = t_.substr(save, at_ - save);
      expr(depth + 1);
      adopt(call, kw);
      continue;
    }
    at_ = save;
    int arg = expr(depth + 1);
    adopt(call, arg);
  } while (eat(","));
  if (!eat(")")) throw Fail{"a missing ')' after the arguments of " + std::string(name)};
  return call;
}

class Evaluator {
 public:
  Evaluator(const std::vector<Ast>& n, const std::unordered_map<std::string, std::string>* rename)
      : n_(n), rename_(rename) {}
  Dim eval(int i);

 private:
  using Fn = Dim (Evaluator::*)(const Ast&);
  struct Function {
    std::string_view name;
    Fn fn;
  };
  static const std::vector<Function>& functions();
  std::vector<Dim> args(const Ast& a) {
    std::vector<Dim> out;
    for (int k : a.kids)
      if (n_[k].op != Ast::Keyword) out.push_back(eval(k));
    return out;
  }
  std::vector<int> positional(const Ast& a, size_t want) {
    std::vector<int> out;
    for (int k : a.kids)
      if (n_[k].op != Ast::Keyword) out.push_back(k);
    if (out.size() != want)
      throw Fail{std::string(a.name) + " with " + std::to_string(out.size()) + " arguments"};
    return out;
  }
  static Dim checked(Dim d, const char* what) {
    if (d.is_unknown())
      throw Fail{std::string(what) +
                 " cannot be kept exact (an overflow, a remainder or a value that is not an integer)"};
    return d;
  }
  static void nonzero(const Dim& d) {
    if (d.is_known() && d.value() == 0) throw Fail{"divides by zero"};
  }
  Dim symbol(const Ast& a) {
    std::vector<int> k = positional(a, 1);
    if (n_[k[0]].op != Ast::Str) throw Fail{"Symbol without a name"};
    return named(n_[k[0]].name);
  }
  Dim named(std::string_view name) {
    static const std::string_view kInfinite[] = {"int_oo", "oo", "zoo", "nan", "IntInfinity", "Infinity"};
    for (std::string_view inf : kInfinite)
      if (name == inf) throw Fail{"infinite (" + std::string(name) + ")"};
    if (name == "True" || name == "False" || name == "true" || name == "false")
      throw Fail{"a boolean, not a size"};
    std::string s(name);
    if (rename_)
      if (auto it = rename_->find(s); it != rename_->end()) return Dim::symbol(it->second);
    return Dim::symbol(s);
  }
  Dim integer(const Ast& a) { return eval(positional(a, 1)[0]); }
  Dim add(const Ast& a) {
    Dim sum = 0;
    for (const Dim& d : args(a)) sum = checked(sum + d, "a sum");
    return sum;
  }
  Dim mul(const Ast& a) {
    Dim prod = 1;
    for (const Dim& d : args(a)) prod = checked(prod * d, "a product");
    return prod;
  }
  Dim pow(const Ast& a) {
    std::vector<int> k = positional(a, 2);
    return power(eval(k[0]), eval(k[1]));
  }
  static Dim power(const Dim& base, const Dim& e) {
    if (!e.is_known() || e.value() < 0 || e.value() > 64)
      throw Fail{"a power that is not a small natural number"};
    Dim out = 1;
    for (int64_t i = 0; i < e.value(); ++i) out = checked(out * base, "a power");
    return out;
  }
  Dim div2(const Ast& a, Dim (*op)(const Dim&, const Dim&), const char* what) {
    std::vector<int> k = positional(a, 2);
    Dim x = eval(k[0]), y = eval(k[1]);
    nonzero(y);
    return checked(op(x, y), what);
  }
  static Dim exact(const Dim& x, const Dim& y) { return x / y; }
  // sympy's and Python's remainder: the sign of the divisor (Mod(-7, 3) = 2).
  static Dim floor_mod(const Dim& x, const Dim& y) {
    if (!x.is_known() || !y.is_known()) return Dim::mod(x, y);
    if (y.value() == -1) return 0;  // INT64_MIN % -1 overflows
    int64_t r = x.value() % y.value();
    return r != 0 && ((r < 0) != (y.value() < 0)) ? r + y.value() : r;
  }
  Dim floordiv(const Ast& a) { return div2(a, &Dim::floor_div, "a floor division"); }
  Dim ceildiv(const Ast& a) { return div2(a, &Dim::ceil_div, "a ceiling division"); }
  Dim cleandiv(const Ast& a) { return div2(a, &Evaluator::exact, "a division"); }
  Dim mod(const Ast& a) { return div2(a, &Evaluator::floor_mod, "a modulo"); }
  Dim modular_indexing(const Ast& a) {
    std::vector<int> k = positional(a, 3);
    Dim x = eval(k[0]), d = eval(k[1]), m = eval(k[2]);
    nonzero(d);
    nonzero(m);
    return checked(floor_mod(checked(Dim::floor_div(x, d), "a floor division"), m), "a modulo");
  }
  Dim minmax(const Ast& a, bool is_max) {
    std::vector<Dim> v = args(a);
    if (v.empty()) throw Fail{std::string(a.name) + " of nothing"};
    Dim out = v[0];
    for (size_t i = 1; i < v.size(); ++i)
      out = checked(is_max ? Dim::max(out, v[i]) : Dim::min(out, v[i]), "a min/max");
    return out;
  }
  Dim max(const Ast& a) { return minmax(a, true); }
  Dim min(const Ast& a) { return minmax(a, false); }
  // floor(x/y) and ceiling(x/y) are divisions; of an integral x they are x.
  Dim rounding(const Ast& a, bool up) {
    int k = positional(a, 1)[0];
    const Ast& in = n_[k];
    if (in.op == Ast::Div) {
      Dim x = eval(in.kids[0]), y = eval(in.kids[1]);
      nonzero(y);
      return checked(up ? Dim::ceil_div(x, y) : Dim::floor_div(x, y), "a rounded division");
    }
    return eval(k);
  }
  Dim floor(const Ast& a) { return rounding(a, false); }
  Dim ceiling(const Ast& a) { return rounding(a, true); }
  Dim identity(const Ast& a) { return eval(positional(a, 1)[0]); }
  Dim abs(const Ast& a) {
    Dim x = eval(positional(a, 1)[0]);
    if (x.is_known()) return x.value() < 0 ? checked(Dim(0) - x, "an absolute value") : x;
    if (x.provably_nonneg()) return x;
    throw Fail{"Abs of a value of unknown sign"};
  }
  Dim rational(const Ast& a) { return div2(a, &Evaluator::exact, "a rational"); }
  Dim call(const Ast& a) {
    for (const Function& f : functions())
      if (f.name == a.name) return (this->*f.fn)(a);
    throw Fail{"an unknown function " + std::string(a.name)};
  }

  const std::vector<Ast>& n_;
  const std::unordered_map<std::string, std::string>* rename_;
};

// sympy's and torch's (torch/utils/_sympy/functions.py) functions that can give a size.
const std::vector<Evaluator::Function>& Evaluator::functions() {
  static const std::vector<Function> kTable = {
      {"Symbol", &Evaluator::symbol},
      {"Integer", &Evaluator::integer},
      {"Add", &Evaluator::add},
      {"Mul", &Evaluator::mul},
      {"Pow", &Evaluator::pow},
      {"PowByNatural", &Evaluator::pow},
      {"FloorDiv", &Evaluator::floordiv},
      {"CeilDiv", &Evaluator::ceildiv},
      {"CleanDiv", &Evaluator::cleandiv},
      {"IntTrueDiv", &Evaluator::cleandiv},
      {"Mod", &Evaluator::mod},
      {"PythonMod", &Evaluator::mod},
      {"ModularIndexing", &Evaluator::modular_indexing},
      {"Max", &Evaluator::max},
      {"Min", &Evaluator::min},
      {"floor", &Evaluator::floor},
      {"FloorToInt", &Evaluator::floor},
      {"ceiling", &Evaluator::ceiling},
      {"CeilToInt", &Evaluator::ceiling},
      {"TruncToInt", &Evaluator::floor},
      {"RoundToInt", &Evaluator::identity},
      {"Identity", &Evaluator::identity},
      {"Abs", &Evaluator::abs},
      {"Rational", &Evaluator::rational},
  };
  return kTable;
}

Dim Evaluator::eval(int i) {
  const Ast& a = n_[i];
  switch (a.op) {
    case Ast::Num:
      return a.num;
    case Ast::Sym:
      return named(a.name);
    case Ast::Call:
      return call(a);
    case Ast::Add:
      return checked(eval(a.kids[0]) + eval(a.kids[1]), "a sum");
    case Ast::Sub:
      return checked(eval(a.kids[0]) - eval(a.kids[1]), "a difference");
    case Ast::Mul:
      return checked(eval(a.kids[0]) * eval(a.kids[1]), "a product");
    case Ast::Neg:
      return checked(Dim(0) - eval(a.kids[0]), "a negation");
    case Ast::Pow:
      return power(eval(a.kids[0]), eval(a.kids[1]));
    case Ast::Div:
    case Ast::FloorDiv:
    case Ast::Mod: {
      Dim x = eval(a.kids[0]), y = eval(a.kids[1]);
      nonzero(y);
      Dim r = a.op == Ast::Div ? x / y : a.op == Ast::FloorDiv ? Dim::floor_div(x, y) : floor_mod(x, y);
      return checked(r, a.op == Ast::Div        ? "a division"
                        : a.op == Ast::FloorDiv ? "a floor division"
                                                : "a modulo");
    }
    default:
      throw Fail{"a string or keyword where a size belongs"};
  }
}
}  // namespace

Dim parse_sym_expr(std::string_view text, const std::unordered_map<std::string, std::string>* rename,
                   std::string* error) {
  try {
    if (text.size() > kMaxText) throw Fail{"longer than " + std::to_string(kMaxText) + " characters"};
    Parser p(text);
    int root = p.parse();
    return Evaluator(p.nodes, rename).eval(root);
  } catch (const Fail& f) {
    if (error) *error = f.why;
    return Dim::unknown();
  }
}

// ---- names ----

SymbolNames SymbolNames::from_program(const Program& p) {
  SymbolNames names;
  for (const InputSpec& in : p.inputs) {
    if (in.kind != InputKind::UserInput || in.arg.kind != ArgKind::Tensor) continue;
    auto it = p.graph.tensor_values.find(in.arg.s);
    if (it == p.graph.tensor_values.end()) continue;
    for (size_t d = 0; d < it->second.sizes.size(); ++d) {
      const SymInt& s = it->second.sizes[d];
      if (!s.is_expr) continue;
      Dim dim = parse_sym_expr(s.expr, nullptr, nullptr);
      if (!dim.is_symbolic() || dim.terms().size() != 1) continue;
      const auto& [mono, coef] = dim.terms()[0];
      if (coef != 1 || mono.size() != 1 || Dim::atom(mono[0])) continue;
      if (!names.names_.count(mono[0]))
        names.rename(mono[0], std::string(in.arg.s) + "." + std::to_string(d));
    }
  }
  return names;
}

void SymbolNames::rename(const std::string& torch_name, const std::string& name) {
  auto [it, fresh] = names_.insert_or_assign(torch_name, name);
  if (fresh) {
    order_.emplace_back(torch_name, name);
    return;
  }
  for (auto& entry : order_)
    if (entry.first == torch_name) entry.second = name;
}

std::string SymbolNames::name_of(std::string_view torch_symbol) const {
  auto it = names_.find(std::string(torch_symbol));
  return it == names_.end() ? std::string(torch_symbol) : it->second;
}

std::string SymbolNames::resolve(std::string_view user_name) const {
  std::string s(user_name);
  if (auto it = names_.find(s); it != names_.end()) return it->second;
  for (const auto& entry : order_)
    if (entry.second == s) return s;
  return "";
}

Dim SymDims::dim(const SymInt& s) { return s.is_expr ? expr(s.expr) : Dim(s.value); }

Dim SymDims::expr(std::string_view text) {
  if (auto it = cache_.find(text); it != cache_.end()) return it->second;
  std::string why;
  Dim d = parse_sym_expr(text, &names_.map(), &why);
  if (d.is_unknown()) {
    std::string shown(text.size() > 120 ? text.substr(0, 120) : text);
    if (text.size() > 120) shown += "...";
    warnings.push_back("symbolic size '" + shown + "' is unknown: " + why);
  }
  cache_.emplace(text, d);
  return d;
}

}  // namespace flopwise::pt2
