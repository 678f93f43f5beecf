// src/pt2/program_json.cc — a program's JSON (schema.py's ExportedProgram) into Program: the root, graphs,
// nodes, arguments and tensor values, walked over simdjson's DOM (bench/README: .pt2 reader); the scalars.
// Unknown keys are skipped; an unknown Argument member is kept as ArgKind::Unknown.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "flopwise/errors.h"
#include "flopwise/limits.h"
#include "pt2/json_reader.h"

namespace flopwise::pt2 {

namespace {
// Index of `key` in a table of a struct's keys; -1 for a key the table does not hold (skipped).
template <size_t N>
int key_index(std::string_view key, const std::array<std::string_view, N>& keys) {
  for (size_t i = 0; i < N; ++i)
    if (keys[i] == key) return static_cast<int>(i);
  return -1;
}

// The Argument union's members (schema.py), by name.
struct Member {
  std::string_view name;
  ArgKind kind;
};
constexpr std::array<Member, 30> kMembers{{
    {"as_bool", ArgKind::Bool},
    {"as_bools", ArgKind::Bools},
    {"as_complex", ArgKind::Complex},
    {"as_custom_obj", ArgKind::CustomObj},
    {"as_device", ArgKind::Device},
    {"as_float", ArgKind::Float},
    {"as_floats", ArgKind::Floats},
    {"as_graph", ArgKind::Graph},
    {"as_int", ArgKind::Int},
    {"as_int_lists", ArgKind::IntLists},
    {"as_ints", ArgKind::Ints},
    {"as_layout", ArgKind::Layout},
    {"as_memory_format", ArgKind::MemoryFormat},
    {"as_nested_tensors", ArgKind::NestedTensors},
    {"as_none", ArgKind::None},
    {"as_operator", ArgKind::Operator},
    {"as_optional_tensor", ArgKind::OptionalTensor},
    {"as_optional_tensors", ArgKind::OptionalTensors},
    {"as_scalar_type", ArgKind::ScalarType},
    {"as_string", ArgKind::String},
    {"as_string_to_argument", ArgKind::StringToArgument},
    {"as_strings", ArgKind::Strings},
    {"as_sym_bool", ArgKind::SymBool},
    {"as_sym_bools", ArgKind::SymBools},
    {"as_sym_float", ArgKind::SymFloat},
    {"as_sym_floats", ArgKind::SymFloats},
    {"as_sym_int", ArgKind::SymInt},
    {"as_sym_ints", ArgKind::SymInts},
    {"as_tensor", ArgKind::Tensor},
    {"as_tensors", ArgKind::Tensors},
}};

// Shorter first, then by text: the search compares lengths, and text only among names of one length (a
// program reads ~20 k members, most of them "as_tensor").
bool member_order(std::string_view a, std::string_view b) {
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

ArgKind member_kind(std::string_view name) {
  static const std::array<Member, kMembers.size()> kByLength = [] {
    std::array<Member, kMembers.size()> t = kMembers;
    std::sort(t.begin(), t.end(),
              [](const Member& a, const Member& b) { return member_order(a.name, b.name); });
    return t;
  }();
  auto it = std::lower_bound(kByLength.begin(), kByLength.end(), name,
                             [](const Member& m, std::string_view n) { return member_order(m.name, n); });
  return it != kByLength.end() && it->name == name ? it->kind : ArgKind::Unknown;
}

// The element kind of each list member.
ArgKind element_kind(ArgKind list) {
  switch (list) {
    case ArgKind::Tensors:
      return ArgKind::Tensor;
    case ArgKind::Ints:
      return ArgKind::Int;
    case ArgKind::Floats:
      return ArgKind::Float;
    case ArgKind::Strings:
      return ArgKind::String;
    case ArgKind::Bools:
      return ArgKind::Bool;
    case ArgKind::SymInts:
      return ArgKind::SymInt;
    case ArgKind::SymFloats:
      return ArgKind::SymFloat;
    case ArgKind::SymBools:
      return ArgKind::SymBool;
    case ArgKind::OptionalTensors:
      return ArgKind::OptionalTensor;
    case ArgKind::NestedTensors:
      return ArgKind::Tensors;
    case ArgKind::IntLists:
      return ArgKind::Ints;
    default:
      return ArgKind::Unknown;
  }
}
}  // namespace

const char* arg_kind_name(ArgKind k) {
  if (k == ArgKind::Unknown) return "unknown";
  for (const Member& m : kMembers)
    if (m.kind == k) return m.name.data();  // the table's literals are NUL-terminated
  return "unknown";
}

const ScalarTypeInfo* scalar_type_info(int64_t code) {
  static const ScalarTypeInfo kTable[] = {
#define FLOPWISE_PT2_X(id, code, name, bits, ir) {ScalarType::id, name, bits, DType::ir},
      FLOPWISE_PT2_SCALAR_TYPES(FLOPWISE_PT2_X)
#undef FLOPWISE_PT2_X
  };
  for (const ScalarTypeInfo& t : kTable)
    if (static_cast<int64_t>(t.type) == code) return &t;
  return nullptr;
}

void JsonReader::fail(const std::string& why) const {
  std::string where = label_;
  if (node_) {
    where += ": node " + std::to_string(node_index_);
    if (!node_->name.empty()) where += " '" + std::string(node_->name) + "'";
    if (!node_->target.empty()) where += " (" + std::string(node_->target) + ")";
  }
  if (*key) where += std::string(": key '") + key + "'";
  throw InputError(where + ": " + why);
}

void JsonReader::fail(const simdjson::simdjson_error& e) const {
  fail(std::string("malformed or unexpected JSON (") + simdjson::error_message(e.error()) + ")");
}

std::string_view JsonReader::marked(Value v) const {
  if (!marked_ || !v.is_string()) return {};
  std::string_view t = v.get_string().value();
  return t.substr(0, kMarker.size()) == kMarker ? t.substr(kMarker.size()) : std::string_view();
}

std::string_view JsonReader::text(Value v) const {
  std::string_view t = v.get_string().value();
  if (marked_ && t.substr(0, kMarker.size()) == kMarker)  // a number that was rewritten, not a string
    throw simdjson::simdjson_error(simdjson::INCORRECT_TYPE);
  return t;
}

std::string_view JsonReader::str(Value v) { return p_.strings.intern(text(v)); }
std::string_view JsonReader::add(Value v) { return p_.strings.add(text(v)); }

// An integer; one past int64 (or a marked integer past 64 bits) is out of range, anything else the wrong
// type.
int64_t JsonReader::int64(Value v) const {
  int64_t out = 0;
  auto err = v.get_int64().get(out);
  if (!err) return out;
  std::string_view m = marked(v);
  if (v.is_number() || (!m.empty() && m != "NaN" && m.find("Infinity") == std::string_view::npos))
    err = v.is_double() ? simdjson::INCORRECT_TYPE : simdjson::NUMBER_OUT_OF_RANGE;
  throw simdjson::simdjson_error(err);
}

double JsonReader::number(Value v) const {
  double out = 0;
  if (!v.get_double().get(out)) return out;
  std::string_view m = marked(v);
  // torch's serializer writes a non-finite float as a string ("as_float": "-Infinity", masked_fill's -inf).
  if (m.empty() && v.is_string()) {
    std::string_view s = v.get_string().value_unsafe();
    if (s == "NaN" || s == "Infinity" || s == "-Infinity") m = s;
  }
  if (m == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (m == "Infinity") return std::numeric_limits<double>::infinity();
  if (m == "-Infinity") return -std::numeric_limits<double>::infinity();
  if (!m.empty()) return std::strtod(std::string(m).c_str(), nullptr);  // an integer past 64 bits
  throw simdjson::simdjson_error(simdjson::INCORRECT_TYPE);
}

// A bound: null, Infinity / -Infinity (Python's json) or an integer beyond int64 (int_oo) is unbounded.
std::optional<int64_t> JsonReader::bound(Value v) const {
  if (v.is_null()) return std::nullopt;
  int64_t x = 0;
  if (!v.get_int64().get(x)) return x;
  std::string_view m = marked(v);
  if (v.is_number() || (!m.empty() && m != "NaN")) return std::nullopt;
  throw simdjson::simdjson_error(simdjson::INCORRECT_TYPE);
}

// ---- arguments ----

Argument JsonReader::argument(Value v) { return argument_at(v, 0); }

// An Argument: an object of one key, the union member (the first key when a file has more).
Argument JsonReader::argument_at(Value v, int depth) {
  if (depth > kMaxArgumentDepth) fail("arguments nested deeper than " + std::to_string(kMaxArgumentDepth));
  for (auto field : object(v)) {
    std::string_view member = field.key;
    return union_argument(member, field.value, depth);
  }
  fail("an argument with no union member");
}

Argument JsonReader::tensor_argument(Value v) {
  Argument a;
  a.kind = ArgKind::Tensor;
  for (auto field : object(v)) {
    if (field.key == "name") a.s = str(field.value);
  }
  if (a.s.empty()) fail("a tensor argument without a name");
  return a;
}

Argument JsonReader::union_argument(std::string_view member, Value v, int depth) {
  Argument a;
  a.kind = member_kind(member);
  switch (a.kind) {
    case ArgKind::None:
      break;  // true, or [] (torch 2.1)
    case ArgKind::Tensor:
      return tensor_argument(v);
    case ArgKind::Int:
    case ArgKind::ScalarType:
    case ArgKind::MemoryFormat:
    case ArgKind::Layout:
      a.i = int64(v);
      break;
    case ArgKind::Float:
      a.f = number(v);
      break;
    case ArgKind::Bool:
      a.b = boolean(v);
      break;
    case ArgKind::String:
    case ArgKind::Operator:
      a.s = str(v);
      break;
    case ArgKind::SymInt:
    case ArgKind::SymFloat:
    case ArgKind::SymBool:
      return sym_argument(a.kind, v);
    case ArgKind::OptionalTensor: {
      Argument inner = argument_at(v, depth + 1);
      if (inner.kind != ArgKind::Tensor && inner.kind != ArgKind::None)
        fail("an optional tensor that is neither");
      return inner;
    }
    case ArgKind::Device:
      return device_argument(v);
    case ArgKind::CustomObj:
      for (auto field : object(v)) {
        std::string_view k = field.key;
        if (k == "name")
          a.s = str(field.value);
        else if (k == "class_fqn")
          a.s2 = str(field.value);
      }
      break;
    case ArgKind::Complex:
      for (auto field : object(v)) {
        std::string_view k = field.key;
        if (k == "real")
          a.f = number(field.value);
        else if (k == "imag")
          a.imag = number(field.value);
      }
      break;
    case ArgKind::Graph:
      return graph_argument(v, depth);
    case ArgKind::StringToArgument:
      for (auto field : object(v)) {
        a.keys.push_back(p_.strings.intern(field.key));
        a.items.push_back(argument_at(field.value, depth + 1));
      }
      break;
    case ArgKind::Unknown:
      a.s = p_.strings.intern(member);
      break;
    default:
      return list_argument(a.kind, v, depth);
  }
  return a;
}

// Device: {"type": "cuda", "index": 0 | null}.
Argument JsonReader::device_argument(Value v) {
  Argument a;
  a.kind = ArgKind::Device;
  a.i = -1;
  for (auto field : object(v)) {
    std::string_view k = field.key;
    Value fv = field.value;
    if (k == "type")
      a.s = str(fv);
    else if (k == "index" && !fv.is_null())
      a.i = int64(fv);
  }
  return a;
}

Argument JsonReader::list_argument(ArgKind list, Value v, int depth) {
  Argument a;
  a.kind = list;
  ArgKind elem = element_kind(list);
  for (Value e : array(v)) {
    switch (elem) {
      case ArgKind::Tensor:
        a.items.push_back(tensor_argument(e));
        break;
      case ArgKind::OptionalTensor:
        a.items.push_back(union_argument("as_optional_tensor", e, depth + 1));
        break;
      case ArgKind::Tensors:
        a.items.push_back(list_argument(ArgKind::Tensors, e, depth + 1));
        break;
      case ArgKind::Ints:
        a.items.push_back(list_argument(ArgKind::Ints, e, depth + 1));
        break;
      case ArgKind::SymInt:
      case ArgKind::SymFloat:
      case ArgKind::SymBool:
        a.items.push_back(sym_argument(elem, e));
        break;
      default: {
        Argument x;
        x.kind = elem;
        if (elem == ArgKind::Int)
          x.i = int64(e);
        else if (elem == ArgKind::Float)
          x.f = number(e);
        else if (elem == ArgKind::Bool)
          x.b = boolean(e);
        else
          x.s = str(e);
        a.items.push_back(std::move(x));
      }
    }
  }
  return a;
}

// SymIntArgument / SymFloatArgument / SymBoolArgument: {"as_name": ...} or a literal.
Argument JsonReader::sym_argument(ArgKind kind, Value v) {
  Argument a;
  a.kind = kind;
  for (auto field : object(v)) {
    std::string_view k = field.key;
    Value fv = field.value;
    if (k == "as_name")
      a.s = str(fv);
    else if (k == "as_int")
      a.i = int64(fv);
    else if (k == "as_float")
      a.f = number(fv);
    else if (k == "as_bool")
      a.b = boolean(fv);
    else
      fail("a symbolic argument with member '" + std::string(k) + "'");
    return a;
  }
  fail("a symbolic argument with no member");
}

Argument JsonReader::graph_argument(Value v, int depth) {
  Argument a;
  a.kind = ArgKind::Graph;
  if (graph_depth_ + 1 > kMaxGraphDepth)
    fail("subgraphs nested deeper than " + std::to_string(kMaxGraphDepth));
  auto g = std::make_shared<Graph>();
  for (auto field : object(v)) {
    std::string_view k = field.key;
    if (k == "name")
      a.s = str(field.value);
    else if (k == "graph")
      try {
        read_graph(field.value, *g, graph_depth_ + 1);
      } catch (const simdjson::simdjson_error& e) {
        fail(e);  // now, while the node it names (in *g) lives
      }
  }
  (void)depth;
  a.graph = std::move(g);
  return a;
}

// ---- values ----

// SymInt: {"as_int": n} or {"as_expr": {"expr_str": ..., "hint": {"as_int": n} | null}}.
SymInt JsonReader::sym_int(Value v) {
  SymInt s;
  if (v.is_number()) {  // a bare integer (older writers' storage offsets)
    s.value = int64(v);
    return s;
  }
  for (auto field : object(v)) {
    std::string_view k = field.key;
    Value fv = field.value;
    if (k == "as_int") {
      s.value = int64(fv);
      return s;
    }
    if (k != "as_expr") fail("a SymInt with member '" + std::string(k) + "'");
    s.is_expr = true;
    for (auto ef : object(fv)) {
      std::string_view ek = ef.key;
      Value ev = ef.value;
      if (ek == "expr_str") {
        s.expr = str(ev);
      } else if (ek == "hint" && ev.is_number()) {
        s.hint = int64(ev);
      } else if (ek == "hint" && !ev.is_null()) {
        for (auto hf : object(ev)) {
          if (hf.key == "as_int") s.hint = int64(hf.value);
        }
      }
    }
    if (s.expr.empty()) fail("a symbolic size without expr_str");
    return s;
  }
  fail("a SymInt with no member");
}

TensorMeta JsonReader::tensor_meta(Value v) {
  static constexpr std::array<std::string_view, 6> kKeys{"dtype",  "sizes", "requires_grad",
                                                         "device", "meta",  "storage_offset"};
  TensorMeta m;
  bool has_dtype = false, has_sizes = false;
  for (auto field : object(v)) {
    std::string_view k = field.key;
    Value fv = field.value;
    switch (key_index(k, kKeys)) {
      case 0:
        m.dtype_code = static_cast<int32_t>(std::clamp<int64_t>(int64(fv), -1, 1 << 20)), has_dtype = true;
        break;
      case 1:
        for (Value d : array(fv)) {
          if (static_cast<int64_t>(m.sizes.size()) >= limits().max_rank)
            fail("a tensor of rank over " + std::to_string(limits().max_rank));
          m.sizes.push_back(sym_int(d));
          if (!m.sizes.back().is_expr && m.sizes.back().value < 0)
            fail("a negative size " + std::to_string(m.sizes.back().value));
        }
        has_sizes = true;
        break;
      case 2:
        m.requires_grad = boolean(fv);
        break;
      case 3: {
        Argument d = device_argument(fv);
        m.device = d.s;
        m.device_index = d.i;
        break;
      }
      case 4:
        return tensor_meta(fv);  // torch 2.1: {"meta": TensorMeta}
      case 5: {
        SymInt off = sym_int(fv);
        m.storage_offset = off.is_expr ? 0 : off.value;
        break;
      }
      default:
        break;
    }
  }
  if (!has_dtype || !has_sizes)
    fail(std::string("a tensor value without '") + (has_dtype ? "sizes" : "dtype") + "'");
  return m;
}

void JsonReader::read_tensor_values(Value v, Graph& g) {
  simdjson::dom::object values = object(v);
  g.tensor_values.reserve(g.tensor_values.size() + values.size());  // the DOM knows its sizes
  for (auto field : values) {
    std::string_view name = p_.strings.intern(field.key);
    TensorMeta m = tensor_meta(field.value);
    if (!g.tensor_values.emplace(name, std::move(m)).second)
      fail("tensor value '" + std::string(name) + "' listed twice");
  }
}

// ---- graphs and nodes ----

void JsonReader::read_graph(Value v, Graph& g, int depth) {
  static constexpr std::array<std::string_view, 9> kKeys{
      "inputs",           "outputs",           "nodes",
      "tensor_values",    "sym_int_values",    "sym_bool_values",
      "sym_float_values", "custom_obj_values", "is_single_tensor_return"};
  const Node* saved_node = node_;
  size_t saved_index = node_index_;
  int saved_depth = graph_depth_;
  graph_depth_ = depth;
  bool has_nodes = false;
  for (auto field : object(v)) {
    std::string_view k = field.key;
    Value fv = field.value;
    int which = key_index(k, kKeys);
    if (which >= 0) key = kKeys[static_cast<size_t>(which)].data();
    switch (which) {
      case 0:
        for (Value a : array(fv)) g.inputs.push_back(argument(a));
        break;
      case 1:
        for (Value a : array(fv)) g.outputs.push_back(argument(a));
        break;
      case 2:
        has_nodes = true;
        g.nodes.reserve(g.nodes.size() + array(fv).size());
        for (Value n : array(fv)) {
          g.nodes.emplace_back();
          node_index_ = g.nodes.size() - 1;
          read_node(n, g.nodes.back(), depth);
        }
        node_ = saved_node;
        node_index_ = saved_index;
        break;
      case 3:
        read_tensor_values(fv, g);
        break;
      case 4:
        for (auto f : object(fv)) g.sym_int_values.emplace(p_.strings.intern(f.key), sym_int(f.value));
        break;
      case 5:
        for (auto f : object(fv)) g.sym_bool_values.emplace(p_.strings.intern(f.key), sym_bool(f.value));
        break;
      case 6:
        for (auto f : object(fv)) g.sym_float_values.emplace(p_.strings.intern(f.key), sym_float(f.value));
        break;
      case 7:
        for (auto f : object(fv)) {
          std::string_view name = p_.strings.intern(f.key);
          g.custom_obj_values.emplace(name, union_argument("as_custom_obj", f.value, 0).s2);
        }
        break;
      case 8:
        g.is_single_tensor_return = boolean(fv);
        break;
      default:
        break;
    }
    key = "";
  }
  graph_depth_ = saved_depth;
  if (!has_nodes) fail("a graph without 'nodes'");
}

void JsonReader::read_node(Value v, Node& n, int depth) {
  static constexpr std::array<std::string_view, 6> kKeys{
      "target", "inputs", "outputs", "metadata", "is_hop_single_tensor_return", "name"};
  node_ = &n;
  bool has_target = false;
  for (auto field : object(v)) {
    std::string_view k = field.key;
    Value fv = field.value;
    int which = key_index(k, kKeys);
    if (which >= 0) key = kKeys[static_cast<size_t>(which)].data();
    switch (which) {
      case 0:
        n.target = str(fv), has_target = true;
        break;
      case 1:
        n.inputs.reserve(array(fv).size());
        for (Value a : array(fv)) n.inputs.push_back(named_argument(a, depth));
        break;
      case 2:
        for (Value a : array(fv)) n.outputs.push_back(argument(a));
        break;
      case 3:
        read_metadata(fv, n);
        break;
      case 4:
        n.hop_single_tensor_return = !fv.is_null() && boolean(fv);
        break;
      case 5:
        if (!fv.is_null()) n.name = add(fv);  // unique: copied, not interned
        break;
      default:
        break;
    }
    key = "";
    node_ = &n;  // a subgraph's nodes were the context meanwhile
  }
  if (!has_target) fail("a node without 'target'");
}

NamedArgument JsonReader::named_argument(Value v, int /*depth*/) {
  NamedArgument na;
  bool has_arg = false;
  for (auto field : object(v)) {
    std::string_view k = field.key;
    Value fv = field.value;
    if (k == "name") {
      na.name = str(fv);
    } else if (k == "arg") {
      na.arg = argument_at(fv, 0);
      has_arg = true;
    } else if (k == "kind" && !fv.is_null()) {
      int64_t kind = int64(fv);
      na.kind = kind == 1   ? ArgumentKind::Positional
                : kind == 2 ? ArgumentKind::Keyword
                            : ArgumentKind::Unrecorded;
    }
  }
  if (!has_arg) fail("an input without 'arg'");
  return na;
}

// A node's nn_module_stack, parsed once per distinct text (interned: one address per text). Consecutive nodes
// mostly share their module's: the text compared with the previous node's costs less than hashing it.
ModuleStack JsonReader::module_stack(Value v) {
  std::string_view raw = text(v);
  if (has_last_ && raw == last_stack_) return last_frames_;
  std::string_view stack = p_.strings.intern(raw);
  auto [it, fresh] = module_stacks_.try_emplace(stack.data());
  if (fresh) it->second = ModuleStack(p_.module_stacks.emplace_back(parse_module_stack(stack)));
  last_stack_ = stack;
  last_frames_ = it->second;
  has_last_ = true;
  return it->second;
}

void JsonReader::read_metadata(Value v, Node& n) {
  for (auto field : object(v)) {
    std::string_view k = field.key;
    Value fv = field.value;
    if (k == "stack_trace") {
      continue;  // never copied: no report shows it
    } else if (k == "nn_module_stack") {
      n.module_stack = module_stack(fv);
    } else if (k == "torch_fn") {
      n.torch_fn = add(fv);  // one per call: copied, not interned
    } else {
      n.metadata.emplace_back(p_.strings.intern(k),
                              fv.is_string() && marked(fv).empty() ? add(fv) : std::string_view());
    }
  }
}

// A SymBool or SymFloat: {"as_bool" / "as_float": a literal} or {"as_expr": {"expr_str": ...}}.
template <class Sym, class Literal>
Sym JsonReader::sym_scalar(Value v, std::string_view literal_key, Literal literal, const char* what) {
  Sym s;
  for (auto field : object(v)) {
    if (field.key == literal_key) {
      s.value = literal(field.value);
    } else if (field.key == "as_expr") {
      s.is_expr = true;
      for (auto ef : object(field.value)) {
        if (ef.key == "expr_str") s.expr = str(ef.value);
        if (ef.key == "hint")  // its value at the export's sizes: {"as_float": ...} / {"as_bool": ...}
          for (auto hf : object(ef.value))
            if (hf.key == literal_key) s.value = literal(hf.value);
      }
    }
    return s;
  }
  fail(std::string("a ") + what + " with no member");
}

SymBool JsonReader::sym_bool(Value v) {
  return sym_scalar<SymBool>(
      v, "as_bool", [&](Value x) { return boolean(x); }, "SymBool");
}

SymFloat JsonReader::sym_float(Value v) {
  return sym_scalar<SymFloat>(
      v, "as_float", [&](Value x) { return number(x); }, "SymFloat");
}

// ---- the root ----

// "schema_version": {"major": 8, "minor": 20}, or a bare integer (torch 2.1).
void JsonReader::read_schema_version(Value v) {
  if (v.is_number()) {
    p_.schema_major = 0;
    p_.schema_minor = static_cast<int>(std::clamp<int64_t>(int64(v), 0, 1 << 30));
    return;
  }
  for (auto field : object(v)) {
    std::string_view k = field.key;
    if (k == "major")
      p_.schema_major = static_cast<int>(std::clamp<int64_t>(int64(field.value), -1, 1 << 30));
    else if (k == "minor")
      p_.schema_minor = static_cast<int>(std::clamp<int64_t>(int64(field.value), -1, 1 << 30));
  }
}

void JsonReader::read_graph_module(Value v) {
  bool has_graph = false, has_signature = false;
  for (auto field : object(v)) {
    std::string_view k = field.key;
    Value fv = field.value;
    if (k == "graph") {
      read_graph(fv, p_.graph, 0);
      has_graph = true;
    } else if (k == "signature") {
      key = "signature";
      read_signature(*this, fv);
      has_signature = true;
    } else if (k == "module_call_graph") {
      key = "module_call_graph";
      read_module_call_graph(*this, fv);
    }
    key = "";
  }
  if (!has_graph || !has_signature)
    fail(std::string("graph_module without '") + (has_graph ? "signature" : "graph") + "'");
}

void JsonReader::read_program(Value root) {
  bool has_module = false, has_version = false;
  for (auto field : object(root)) {
    std::string_view k = field.key;
    Value fv = field.value;
    if (k == "graph_module") {
      read_graph_module(fv);
      has_module = true;
    } else if (k == "schema_version") {
      key = "schema_version";
      read_schema_version(fv);
      has_version = true;
    } else if (k == "range_constraints") {
      key = "range_constraints";
      read_range_constraints(*this, fv);
    } else if (k == "opset_version") {
      for (auto f : object(fv)) p_.opset_version.emplace_back(p_.strings.intern(f.key), int64(f.value));
    } else if (k == "torch_version") {
      p_.torch_version = std::string(fv.get_string().value());
    }
    key = "";
  }
  if (!has_module) fail("not an exported program (no 'graph_module')");
  if (!has_version) p_.warnings.push_back(label_ + ": no schema_version; read as the current schema");
}

}  // namespace flopwise::pt2
