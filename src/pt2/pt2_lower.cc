// src/pt2/pt2_lower.cc — see pt2_lower.h: values, arguments in schema position, aten calls and the
// nodes that are not aten calls (symbolic arithmetic, asserts, higher-order ops, custom ops).
#include "pt2/pt2_lower.h"

#include <algorithm>

#include "flopwise/errors.h"

namespace flopwise::pt2 {

namespace {

constexpr int kMaxInlineDepth = 64;  // nested higher-order subgraphs

AtenType tensor_type() {
  AtenType t;
  t.kind = AtenType::Tensor;
  return t;
}

// torch.export's MemoryFormat codes (schema.py) as c10 numbers them: Contiguous 0, Preserve 1,
// ChannelsLast 2, ChannelsLast3d 3.
int64_t c10_memory_format(int64_t serde) {
  static const int64_t kC10[] = {0, 0, 2, 3, 1};  // Unknown, ContiguousFormat, ChannelsLast, ..3d, Preserve
  return serde >= 0 && serde < 5 ? kC10[serde] : 0;
}

// torch.export's ScalarType code as c10's number (what the lowerings compare): through the IR dtype.
std::optional<int64_t> c10_scalar_type(int64_t serde) {
  const ScalarTypeInfo* info = scalar_type_info(serde);
  if (!info) return std::nullopt;
  for (const auto& [number, dtype] : kTorchScalarTypes)
    if (dtype == info->ir && info->ir != DType::Undefined) return number;
  return std::nullopt;
}

}  // namespace

Pt2Lowerer::Pt2Lowerer(const Program& p, Model& m)
    : AtenLowerer(m), p_(p), dims_(SymbolNames::from_program(p)) {}

const AtenValue* Pt2Lowerer::make(std::string name, AtenType t) {
  owned_.push_back(AtenValue{std::move(name), t});
  return &owned_.back();
}

const AtenValue* Pt2Lowerer::named(std::string_view name, AtenType t) {
  auto [it, fresh] = frames_.back().values.try_emplace(name, nullptr);
  if (!fresh) return it->second;
  std::string ir = depth_ ? std::string(name) + "@" + std::to_string(anon_++) : std::string(name);
  const AtenValue* v = make(std::move(ir), t);
  it->second = v;
  const Graph& g = *frames_.back().graph;
  if (g.sym_int_values.count(name)) {
    set(v, sym_value(name));
  } else if (auto f = g.sym_float_values.find(name); f != g.sym_float_values.end()) {
    // A SymFloat only scales (1 / N of a mean's gradient), never sizes: its value at the export's sizes.
    set_known(v, Known::of_double(f->second.value));
  }
  return v;
}

const AtenValue* Pt2Lowerer::literal(Known k, const AtenType& t) {
  const AtenValue* v = make("lit" + std::to_string(anon_++), t);
  JV& j = env_[v];  // a new value: its binding made in place, not moved in
  j.kind = JV::Known;
  j.iv = std::move(k);
  return v;
}

// A schema argument's default: one literal per argument of the schema table, shared by every call that
// leaves it out (the lowerings read an input's value, never rebind it). The count of anonymous values moves
// on as a literal of its own would move it: the values named after it keep their names.
const AtenValue* Pt2Lowerer::default_literal(const AtenArg& a) {
  auto [it, fresh] = defaults_.try_emplace(&a, nullptr);
  if (fresh) return it->second = literal(*a.default_value, a.type);
  ++anon_;
  return it->second;
}

// A SymInt the program names: its recorded expression, as a known int or a scalar of symbolic contents.
JV Pt2Lowerer::sym_value(std::string_view name) {
  const Graph& g = *frames_.back().graph;
  auto it = g.sym_int_values.find(name);
  if (it == g.sym_int_values.end()) return JV();
  Dim d = dims_.dim(it->second);
  if (d.is_known()) return JV::known(Known::of_int(d.value()));
  if (!d.is_symbolic()) return JV();
  ConstData data;
  data.ints.push_back(d);
  return JV::of_ir(const_value(DType::Int64, Shape::scalar(), data), JV::ScalarIR);
}

const AtenValue* Pt2Lowerer::value_of(const Argument& a, const AtenType& t) {
  switch (a.kind) {
    case ArgKind::Tensor:
      return named(a.s, tensor_type());
    case ArgKind::None:
      return literal(Known(), t);
    case ArgKind::Int:
    case ArgKind::Layout:
      return literal(Known::of_int(a.kind == ArgKind::Layout ? 0 : a.i), t);
    case ArgKind::ScalarType: {
      auto st = c10_scalar_type(a.i);
      return literal(st ? Known::of_int(*st) : Known::other(), t);
    }
    case ArgKind::MemoryFormat:
      return literal(Known::of_int(c10_memory_format(a.i)), t);
    case ArgKind::Float:
      return literal(Known::of_double(a.f), t);
    case ArgKind::Bool:
      return literal(Known::of_bool(a.b), t);
    case ArgKind::String:
      return literal(Known::of_string(std::string(a.s)), t);
    case ArgKind::Device:
      return literal(Known::of_string(std::string(a.s) + (a.i >= 0 ? ":" + std::to_string(a.i) : ""),
                                      Known::Kind::Device),
                     t);
    case ArgKind::SymInt:
    case ArgKind::SymFloat:
    case ArgKind::SymBool:
      if (!a.s.empty()) return named(a.s, t);
      if (a.kind == ArgKind::SymFloat) return literal(Known::of_double(a.f), t);
      if (a.kind == ArgKind::SymBool) return literal(Known::of_bool(a.b), t);
      return literal(Known::of_int(a.i), t);
    default:
      break;
  }
  return list_value(a, t);
}

// A list argument: known as a whole when every item is a literal, else a list of the items' values.
const AtenValue* Pt2Lowerer::list_value(const Argument& a, const AtenType& t) {
  if (a.items.empty() && a.kind != ArgKind::Ints && a.kind != ArgKind::Floats && a.kind != ArgKind::Bools &&
      a.kind != ArgKind::Tensors && a.kind != ArgKind::SymInts && a.kind != ArgKind::OptionalTensors &&
      a.kind != ArgKind::Strings)
    return literal(Known::other(), t);
  std::vector<JV> items;
  std::vector<int64_t> ints;
  std::vector<double> doubles;
  std::vector<bool> bools;
  bool all_ints = true, all_doubles = true, all_bools = true;
  AtenType et;
  et.kind = t.elem;
  for (const Argument& x : a.items) {
    items.push_back(get(value_of(x, x.kind == ArgKind::Tensor ? tensor_type() : et)));
    const JV& j = items.back();
    all_ints = all_ints && j.kind == JV::Known && j.iv.isInt();
    all_doubles = all_doubles && j.kind == JV::Known && (j.iv.isDouble() || j.iv.isInt());
    all_bools = all_bools && j.kind == JV::Known && j.iv.isBool();
    if (all_ints) ints.push_back(j.iv.toInt());
    if (all_doubles) doubles.push_back(j.iv.isInt() ? static_cast<double>(j.iv.toInt()) : j.iv.toDouble());
    if (all_bools) bools.push_back(j.iv.toBool());
  }
  const AtenValue* v = make("list" + std::to_string(anon_++), t);
  if (a.kind == ArgKind::Ints || a.kind == ArgKind::SymInts) {
    if (all_ints) return set_known(v, Known::of_ints(std::move(ints))), v;
  } else if (a.kind == ArgKind::Floats && all_doubles) {
    return set_known(v, Known::of_doubles(std::move(doubles))), v;
  } else if (a.kind == ArgKind::Bools && all_bools) {
    return set_known(v, Known::of_bools(std::move(bools))), v;
  }
  set(v, JV::list(std::move(items)));
  return v;
}

Shape Pt2Lowerer::shape_of(const TensorMeta& m) {
  std::vector<Dim> dims;
  dims.reserve(m.sizes.size());
  for (const SymInt& s : m.sizes) dims.push_back(dims_.dim(s));
  return Shape(std::move(dims));
}

void Pt2Lowerer::declare(const AtenValue* v, std::string_view name) {
  const Graph& g = *frames_.back().graph;
  auto it = g.tensor_values.find(name);
  const JV& j = get(v);
  if (it == g.tensor_values.end() || j.kind != JV::Tensor || j.ir < 0) return;
  const ScalarTypeInfo* info = scalar_type_info(it->second.dtype_code);
  g_.values[j.ir].declared = std::make_pair(info ? info->ir : DType::Undefined, shape_of(it->second));
}

}  // namespace flopwise::pt2
