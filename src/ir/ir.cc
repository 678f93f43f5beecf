// src/ir/ir.cc — the common IR (flopwise/ir.h): element types by name and size, shapes and their text, node
// attributes, a graph's value index, copies of a model.
#include "flopwise/ir.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "flopwise/sub_byte.h"

namespace flopwise {

namespace {
struct DTypeInfo {
  DType t;
  const char* name;
  int64_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::Undefined, "undefined", 0},
    {DType::Float32, "float32", 4},
    {DType::UInt8, "uint8", 1},
    {DType::Int8, "int8", 1},
    {DType::UInt16, "uint16", 2},
    {DType::Int16, "int16", 2},
    {DType::Int32, "int32", 4},
    {DType::Int64, "int64", 8},
    {DType::String, "string", 0},
    {DType::Bool, "bool", 1},
    {DType::Float16, "float16", 2},
    {DType::Float64, "float64", 8},
    {DType::UInt32, "uint32", 4},
    {DType::UInt64, "uint64", 8},
    {DType::Complex64, "complex64", 8},
    {DType::Complex128, "complex128", 16},
    {DType::BFloat16, "bfloat16", 2},
    {DType::Float8E4M3FN, "float8_e4m3fn", 1},
    {DType::Float8E4M3FNUZ, "float8_e4m3fnuz", 1},
    {DType::Float8E5M2, "float8_e5m2", 1},
    {DType::Float8E5M2FNUZ, "float8_e5m2fnuz", 1},
    {kUInt4, "uint4", 0},  // ONNX's 4-bit integers, two to a byte: no whole bytes an element
    {kInt4, "int4", 0},
};
const DTypeInfo* info(DType t) {
  for (const auto& d : kDTypes)
    if (d.t == t) return &d;
  return nullptr;
}
}  // namespace

int64_t dtype_size(DType t) {
  const auto* i = info(t);
  return i ? i->size : 0;
}

Count dtype_bytes(DType t, const Count& numel) {
  if (t == kUInt4 || t == kInt4) {
    if (numel.known) return Count{numel.v / 2 + numel.v % 2};
    return numel.symbolic() ? Count::of(Dim::ceil_div(numel.sym, Dim(2))) : Count::unknown();
  }
  const int64_t sz = dtype_size(t);
  return sz == 0 ? Count::unknown() : numel * Count{sz};
}

const char* dtype_name(DType t) {
  const auto* i = info(t);
  return i ? i->name : "undefined";
}

std::optional<DType> parse_dtype(const std::string& s) {
  std::string l = s;
  std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
  static const std::pair<const char*, DType> aliases[] = {
      {"float", DType::Float32},  {"f32", DType::Float32}, {"fp32", DType::Float32},
      {"half", DType::Float16},   {"f16", DType::Float16}, {"fp16", DType::Float16},
      {"double", DType::Float64}, {"f64", DType::Float64}, {"bf16", DType::BFloat16},
      {"long", DType::Int64},     {"i64", DType::Int64},   {"int", DType::Int32},
      {"i32", DType::Int32},      {"u8", DType::UInt8},    {"i8", DType::Int8},
  };
  for (const auto& [a, t] : aliases)
    if (l == a) return t;
  for (const auto& d : kDTypes)
    if (d.t != DType::Undefined && l == d.name) return d.t;
  return std::nullopt;
}

bool is_float(DType t) {
  return t == DType::Float32 || t == DType::Float16 || t == DType::Float64 || t == DType::BFloat16 ||
         t == DType::Float8E4M3FN || t == DType::Float8E4M3FNUZ || t == DType::Float8E5M2 ||
         t == DType::Float8E5M2FNUZ;
}

bool is_integer(DType t) {
  if (t == kUInt4 || t == kInt4) return true;  // flopwise/sub_byte.h: outside the enum's whole-byte kinds
  switch (t) {
    case DType::UInt8:
    case DType::Int8:
    case DType::UInt16:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64:
    case DType::Bool:
    case DType::UInt32:
    case DType::UInt64:
      return true;
    default:
      return false;
  }
}

bool Shape::fully_known() const {
  if (!rank_known) return false;
  return std::all_of(dims.begin(), dims.end(), [](const Dim& d) { return d.is_known(); });
}

Dim Shape::numel() const {
  if (!rank_known) return Dim::unknown();
  // The known dims' product first, then the symbolic ones', scaled once: one polynomial product per
  // symbolic dim rather than one per dim. Exact arithmetic, so the order does not change the result; an
  // unknown dim or an overflow makes it unknown either way.
  int64_t k = 1;
  Dim sym(1);
  for (const auto& d : dims) {
    if (d.is_known()) {
      if (!checked_mul(k, d.value(), &k)) return Dim::unknown();
    } else {
      sym = sym * d;
      if (sym.is_unknown()) return Dim::unknown();
    }
  }
  return sym * Dim(k);
}

Count Shape::numel_count() const {
  if (!rank_known) return Count::unknown();
  if (Dim n = numel(); !n.is_unknown()) return Count::of(n);
  // Unknown as a dim: the dim-by-dim count says why (a zero dim still gives 0; an overflow is flagged).
  Count n{1};
  for (const auto& d : dims) n = n * Count::of(d);
  return n;
}

std::string Shape::str() const {
  std::string out;
  append_str(out, [](const Dim& d) { return d.str(); });
  return out;
}

std::optional<Shape> parse_shape(const std::string& text) {
  if (text == "*") return Shape::unknown_rank();
  if (text == "scalar" || text.empty()) return Shape::scalar();
  // Dims are separated by ',' when the text has one ("1,3,H,W", "batch,max_len,768"); otherwise by every
  // 'x' ("1x3x224x224", "1x3xHxW", "batchx128", "?x5"). A symbol whose name has an 'x' in it is written
  // in the comma form: in the x form every token must be a number, '?' or a name starting with a letter,
  // so "max_lenx4" is refused (its piece "_len" is no name) rather than read as other dims.
  std::vector<std::string> toks;
  const char sep = text.find(',') != std::string::npos ? ',' : 'x';
  size_t pos = 0;
  for (size_t c; (c = text.find(sep, pos)) != std::string::npos; pos = c + 1)
    toks.push_back(text.substr(pos, c - pos));
  toks.push_back(text.substr(pos));
  if (sep == 'x')
    for (const auto& tok : toks)
      if (!tok.empty() && !std::isdigit((unsigned char)tok[0]) && tok[0] != '?' && tok[0] != '-' &&
          !std::isalpha((unsigned char)tok[0]))
        return std::nullopt;
  std::vector<Dim> dims;
  for (const auto& tok : toks) {
    if (tok.empty()) return std::nullopt;
    if (tok == "?") {
      dims.push_back(Dim::unknown());
    } else if (std::isdigit((unsigned char)tok[0]) || tok[0] == '-') {
      errno = 0;
      char* end = nullptr;
      long long v = std::strtoll(tok.c_str(), &end, 10);
      if (*end != '\0' || errno == ERANGE) return std::nullopt;
      dims.push_back(Dim(static_cast<int64_t>(v)));
    } else {
      for (char c : tok)
        if (!(std::isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-')) return std::nullopt;
      dims.push_back(Dim::symbol(tok));
    }
  }
  return Shape(dims);
}

int64_t Node::attr_i(const std::string& k, int64_t dflt) const {
  auto it = attrs.find(k);
  return it == attrs.end() ? dflt : it->second.i;
}
double Node::attr_f(const std::string& k, double dflt) const {
  auto it = attrs.find(k);
  return it == attrs.end() ? dflt : it->second.f;
}
std::string Node::attr_s(const std::string& k, const std::string& dflt) const {
  auto it = attrs.find(k);
  return it == attrs.end() ? dflt : it->second.s;
}
std::vector<int64_t> Node::attr_ints(const std::string& k) const {
  auto it = attrs.find(k);
  return it == attrs.end() ? std::vector<int64_t>{} : it->second.ints;
}
std::vector<double> Node::attr_floats(const std::string& k) const {
  auto it = attrs.find(k);
  return it == attrs.end() ? std::vector<double>{} : it->second.floats;
}

const std::vector<std::string>& StringList::empty_list() {
  static const std::vector<std::string> kEmpty;
  return kEmpty;
}

// The name index: open addressing with linear probing over a power-of-two table, at most half full. A
// slot holds the name's hash (high 32 bits) and the value's index + 1 (0: empty); names stay in `values`.
namespace {
size_t name_hash(std::string_view s) { return std::hash<std::string_view>()(s); }
}  // namespace

int Graph::probe(std::string_view name, size_t h) const {
  const size_t mask = slots_.size() - 1;
  const uint32_t tag = static_cast<uint32_t>(h >> 32);
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const uint64_t s = slots_[i];
    if (s == 0) return -static_cast<int>(i) - 1;  // absent: -(free slot) - 1
    if (static_cast<uint32_t>(s >> 32) == tag) {
      int idx = static_cast<int>(static_cast<uint32_t>(s)) - 1;
      if (values[idx].name == name) return idx;
    }
  }
}

void Graph::rehash(size_t min_slots) {
  size_t n = 16;
  while (n < min_slots) n *= 2;
  if (n <= slots_.size()) return;
  slots_.assign(n, 0);
  for (size_t idx = 0; idx < values.size(); ++idx) {
    size_t h = name_hash(values[idx].name);
    int free_slot = -probe(values[idx].name, h) - 1;
    if (free_slot >= 0) slots_[free_slot] = (h >> 32 << 32) | (idx + 1);
  }
}

int Graph::find(std::string_view value_name) const {
  if (slots_.empty()) return -1;
  int r = probe(value_name, name_hash(value_name));
  return r >= 0 ? r : -1;
}

void Graph::reserve_values(size_t n) {
  values.reserve(n);
  rehash(2 * n);
}

void Graph::copy_to(Graph& out) const {
  out.name = name;
  out.values = values;
  out.inputs = inputs;
  out.outputs = outputs;
  out.module_class = module_class;
  out.slots_ = slots_;
  out.nodes.clear();
  out.nodes.reserve(nodes.size());
  for (const Node& n : nodes) {
    Node& c = out.nodes.emplace_back();
    c.name = n.name;
    c.op = n.op;
    c.domain = n.domain;
    c.opset = n.opset;
    c.inputs = n.inputs;
    c.outputs = n.outputs;
    c.attrs = n.attrs;
    c.scope = n.scope;
    c.scope_classes = n.scope_classes;
    c.backward = n.backward;
    c.subgraphs.reserve(n.subgraphs.size());
    for (const auto& sg : n.subgraphs) {
      auto& sub = c.subgraphs.emplace_back(std::make_unique<Graph>());
      sub->parent = &out;
      sg->copy_to(*sub);
    }
  }
}

const std::vector<ModelFormatName>& model_formats() {
  using F = ModelFormat;
  static const std::vector<ModelFormatName> table = {
      {F::Onnx, "onnx", "onnx"},
      {F::TorchScript, "torchscript", "torchscript"},
      {F::ExportArchive, "pt2", "export_archive"},
      {F::PytorchTrace, "pytorch trace", "pytorch_trace"},
      {F::ReportJson, "report", "report_json"},
      {F::Gzip, "gzip", "gzip"},
      {F::Unknown, "unknown", "unknown"},
  };
  return table;
}

const char* model_format_name(ModelFormat f) {
  for (const ModelFormatName& n : model_formats())
    if (n.format == f) return n.report;
  return "unknown";  // every ModelFormat has a row
}

ModelFormat model_format_of(std::string_view report_name) {
  for (const ModelFormatName& n : model_formats())
    if (report_name == n.report) return n.format;
  return ModelFormat::Unknown;
}

std::shared_ptr<Model> copy_model(const Model& m) {
  auto out = std::make_shared<Model>();
  out->path = m.path;
  out->format = m.format;
  out->producer = m.producer;
  out->opsets = m.opsets;
  m.graph.copy_to(out->graph);
  out->warnings = m.warnings;
  out->source_ops = m.source_ops;
  out->modules = m.modules;
  out->dim_aliases = m.dim_aliases;
  out->dim_bounds = m.dim_bounds;
  return out;
}

int Graph::add_value(std::string_view value_name) {
  if (2 * (values.size() + 1) > slots_.size()) rehash(2 * (values.size() + 1));
  size_t h = name_hash(value_name);
  int r = probe(value_name, h);
  if (r >= 0) return r;
  int idx = static_cast<int>(values.size());
  values.push_back(Value{});
  values.back().name = value_name;
  slots_[static_cast<size_t>(-r - 1)] = (h >> 32 << 32) | static_cast<uint64_t>(idx + 1);
  return idx;
}

}  // namespace flopwise
