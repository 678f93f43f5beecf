// src/aten/aten_schema.cc — torch's schema strings parsed (flopwise/aten_schema.h), and the table of
// torch 2.14's aten operators embedded at build time (aten_schemas.txt).
#include "flopwise/aten_schema.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace flopwise {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits at the commas outside brackets, parentheses and quotes.
std::vector<std::string_view> split_top(std::string_view s) {
  std::vector<std::string_view> parts;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '(' || c == '[') {
      ++depth;
    } else if (c == ')' || c == ']') {
      --depth;
    } else if (c == ',' && depth == 0) {
      parts.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (!trim(s.substr(start)).empty()) parts.push_back(trim(s.substr(start)));
  return parts;
}

// The schema's base types, as the lowerings see them (ScalarType, Layout and MemoryFormat are ints).
AtenType::Kind base_kind(std::string_view t) {
  static const std::pair<std::string_view, AtenType::Kind> kBases[] = {
      {"Tensor", AtenType::Tensor},    {"int", AtenType::Int},        {"SymInt", AtenType::Int},
      {"float", AtenType::Float},      {"bool", AtenType::Bool},      {"Scalar", AtenType::Number},
      {"str", AtenType::String},       {"ScalarType", AtenType::Int}, {"Layout", AtenType::Int},
      {"MemoryFormat", AtenType::Int}, {"SymFloat", AtenType::Float}, {"SymBool", AtenType::Bool}};
  for (const auto& [name, kind] : kBases)
    if (t == name) return kind;
  return AtenType::Other;
}

// "Tensor(a!)?[]" and the like: alias annotations dropped; optional, list and fixed length kept.
AtenType parse_type(std::string_view t, int* fixed_len) {
  std::string s;
  int depth = 0;
  for (char c : t) {
    if (c == '(')
      ++depth;
    else if (c == ')')
      --depth;
    else if (depth == 0)
      s += c;
  }
  AtenType r;
  *fixed_len = 0;
  if (!s.empty() && s.back() == '?') {
    r.optional = true;
    s.pop_back();
  }
  auto br = s.find('[');
  if (br != std::string::npos) {
    std::string_view elem(s.data(), br);
    *fixed_len = std::atoi(s.c_str() + br + 1);
    bool elem_opt = !elem.empty() && elem.back() == '?';
    if (elem_opt) elem.remove_suffix(1);
    r.elem = base_kind(elem);
    r.kind = AtenType::List;
    return r;
  }
  r.kind = base_kind(s);
  return r;
}

// Named defaults: memory formats, reductions and dtypes as c10 numbers them.
std::optional<Known> named_default(std::string_view v) {
  static const std::pair<std::string_view, int64_t> kNames[] = {{"contiguous_format", 0},
                                                                {"preserve_format", 1},
                                                                {"channels_last", 2},
                                                                {"channels_last_3d", 3},
                                                                {"Mean", 1},
                                                                {"Sum", 2},
                                                                {"None", 0},
                                                                {"long", 4},
                                                                {"float", 6},
                                                                {"int", 3},
                                                                {"strided", 0}};
  for (const auto& [name, x] : kNames)
    if (v == name) return Known::of_int(x);
  return std::nullopt;
}

std::optional<Known> parse_scalar(std::string_view v, const AtenType& t) {
  if (v == "None") return Known();
  if (v == "True" || v == "False") return Known::of_bool(v == "True");
  if (!v.empty() && (v.front() == '"' || v.front() == '\'') && v.size() >= 2)
    return Known::of_string(std::string(v.substr(1, v.size() - 2)));
  std::string s(v);
  char* end = nullptr;
  if (s.find_first_of(".eE") == std::string::npos || s.find_first_of("0123456789") == std::string::npos) {
    long long x = std::strtoll(s.c_str(), &end, 10);
    if (end != s.c_str() && !*end)
      return t.kind == AtenType::Float ? Known::of_double(static_cast<double>(x)) : Known::of_int(x);
  }
  double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() && !*end) return Known::of_double(d);
  return named_default(v);
}

std::optional<Known> parse_default(std::string_view v, const AtenType& t, int fixed_len) {
  v = trim(v);
  if (t.kind != AtenType::List || v == "None") return parse_scalar(v, t);
  std::vector<std::string_view> items;
  if (!v.empty() && v.front() == '[')
    items = split_top(v.substr(1, v.size() - 2));
  else
    items.assign(static_cast<size_t>(std::max(fixed_len, 1)), v);  // int[2] stride=1: [1, 1]
  AtenType et;
  et.kind = t.elem;
  std::vector<int64_t> ints;
  std::vector<double> doubles;
  std::vector<bool> bools;
  for (auto it : items) {
    auto x = parse_scalar(trim(it), et);
    if (!x) return std::nullopt;
    if (x->isInt()) ints.push_back(x->toInt());
    if (x->isDouble()) doubles.push_back(x->toDouble());
    if (x->isBool()) bools.push_back(x->toBool());
  }
  if (t.elem == AtenType::Float) return Known::of_doubles(doubles);
  if (t.elem == AtenType::Bool) return Known::of_bools(bools);
  return Known::of_ints(ints);
}

std::optional<AtenArg> parse_arg(std::string_view a) {
  AtenArg r;
  auto eq = a.find('=');
  std::string_view decl = trim(eq == std::string_view::npos ? a : a.substr(0, eq));
  auto sp = decl.rfind(' ');
  if (sp == std::string_view::npos) return std::nullopt;
  r.name = std::string(decl.substr(sp + 1));
  int fixed_len = 0;
  r.type = parse_type(trim(decl.substr(0, sp)), &fixed_len);
  if (eq != std::string_view::npos) {
    r.default_value = parse_default(a.substr(eq + 1), r.type, fixed_len);
    if (!r.default_value) r.default_value = Known::other();  // a default the lowerings never read
  }
  return r;
}

std::vector<AtenType> parse_returns(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '(') s = s.substr(1, s.size() - 2);
  std::vector<AtenType> r;
  for (auto part : split_top(s)) {
    auto sp = part.find(' ');
    int fixed_len = 0;
    r.push_back(parse_type(sp == std::string_view::npos ? part : part.substr(0, sp), &fixed_len));
  }
  return r;
}

}  // namespace

int AtenSchema::index_of(std::string_view arg) const {
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].name == arg) return static_cast<int>(i);
  return -1;
}

std::optional<AtenSchema> parse_aten_schema(std::string_view text) {
  text = trim(text);
  auto open = text.find('('), arrow = text.rfind("->");
  if (open == std::string_view::npos || arrow == std::string_view::npos || arrow < open) return std::nullopt;
  auto close = text.rfind(')', arrow);
  if (close == std::string_view::npos || close < open) return std::nullopt;
  AtenSchema s;
  std::string_view full = text.substr(0, open);
  auto dot =
      full.find('.', std::min(full.find("::"), full.size()));  // "module.path::function" has no overload
  s.name = std::string(full.substr(0, dot));
  if (dot != std::string_view::npos) s.overload = std::string(full.substr(dot + 1));
  bool kwarg_only = false;
  for (auto a : split_top(text.substr(open + 1, close - open - 1))) {
    if (a == "*") {
      kwarg_only = true;
      continue;
    }
    auto arg = parse_arg(a);
    if (!arg) return std::nullopt;
    arg->kwarg_only = kwarg_only;
    s.arg_names.push_back(arg->name);
    s.args.push_back(std::move(*arg));
  }
  s.returns = parse_returns(text.substr(arrow + 2));
  return s;
}

AtenSchemas::AtenSchemas(std::string text) : text_(std::move(text)) {
  std::string_view all = text_;
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find('\n', start);
    if (end == std::string_view::npos) end = all.size();
    std::string_view line = trim(all.substr(start, end - start));
    std::string_view head = line.substr(0, line.find('('));
    std::string_view name = head.substr(0, head.find('.', std::min(head.find("::"), head.size())));
    if (!name.empty() && name.size() < line.size()) by_name_[name].lines.push_back(line);
    start = end + 1;
  }
}

const AtenSchema* AtenSchemas::find(std::string_view name, std::string_view overload) const {
  if (overload == "default") overload = "";
  for (const auto* s : overloads(name))
    if (s->overload == overload) return s;
  return nullptr;
}

const std::vector<const AtenSchema*>& AtenSchemas::overloads(std::string_view name) const {
  static const std::vector<const AtenSchema*> kNone;
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return kNone;
  const Op& op = it->second;
  std::call_once(op.parsed, [&op] {
    for (std::string_view line : op.lines)
      if (auto s = parse_aten_schema(line)) op.all.push_back(std::move(*s));
    for (const auto& s : op.all) op.list.push_back(&s);
  });
  return op.list;
}

extern const char* const kAtenSchemaText;  // aten_schemas.txt, embedded by the build

// Library ops that are an aten op in all but name, lowered as their aten twin (aten_table.h's families
// register the name): transformers 5's mixture-of-experts layers under torch.export
// (transformers/integrations/moe.py registers grouped_mm_fallback with torch.library.custom_op: the
// product of torch._grouped_mm, one expert at a time), and
// torch.vmap's batch dims, as a pre-dispatch export records them (Python functions of
// torch/_functorch/predispatch.py, named "module::function"; transformers' mask functions run under vmap).
constexpr const char* kLibrarySchemaText =
    "transformers::grouped_mm_fallback(Tensor input, Tensor weight, Tensor offs) -> Tensor\n"
    "torch._functorch.predispatch::_add_batch_dim(Tensor self, int batch_dim, int level) -> Tensor\n"
    "torch._functorch.predispatch::_remove_batch_dim(Tensor self, int level, SymInt batch_size, int out_dim) "
    "-> Tensor\n";

const AtenSchemas& aten_schemas() {
  static const AtenSchemas table(std::string(kAtenSchemaText) + "\n" + kLibrarySchemaText);
  return table;
}

}  // namespace flopwise
