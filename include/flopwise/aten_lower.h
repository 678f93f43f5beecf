// include/flopwise/aten_lower.h — the aten lowering without LibTorch: a neutral aten call (AtenNode: op, its
// values by schema position, each value's name and schema type), what a value is at import (JV: an IR
// tensor, a scalar or int list the shape pass computes, a value known at import, a list...), and the
// AtenLowerer that turns one call into IR nodes through the aten table (src/aten/aten_*.cc). The importers
// build AtenNodes from their own formats: TorchScript's jit nodes (src/torch), torch.export programs
// (src/pt2) and a profiler's recorded calls. No LibTorch type appears here.
#pragma once

#include <any>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "flopwise/infer.h"
#include "flopwise/ir.h"

namespace flopwise {

constexpr int kTorchOpset = 18;  // default-domain opset of the lowered nodes (newest input layouts)

// torch's ScalarType numbers (c10/core/ScalarType.h, stable across releases: .pt2 programs and traces
// write them) and the IR's dtypes. Types the IR has no match for (quantized, bits, complex32) are absent.
constexpr std::pair<int, DType> kTorchScalarTypes[] = {
    {0, DType::UInt8},           {1, DType::Int8},          {2, DType::Int16},
    {3, DType::Int32},           {4, DType::Int64},         {5, DType::Float16},
    {6, DType::Float32},         {7, DType::Float64},       {9, DType::Complex64},
    {10, DType::Complex128},     {11, DType::Bool},         {15, DType::BFloat16},
    {23, DType::Float8E5M2},     {24, DType::Float8E4M3FN}, {25, DType::Float8E5M2FNUZ},
    {26, DType::Float8E4M3FNUZ}, {27, DType::UInt16},       {28, DType::UInt32},
    {29, DType::UInt64},
};
inline std::optional<DType> dtype_of_scalar_type(int64_t st) {
  for (const auto& [number, dtype] : kTorchScalarTypes)
    if (number == st) return dtype;
  return std::nullopt;
}

// A constant tensor known at import: its type, sizes and, when small (limits().max_const_elements), contents.
struct TensorConst {
  DType dtype = DType::Undefined;
  std::vector<int64_t> sizes;
  std::optional<ConstData> data;
};

// A value known at import (the part of c10::IValue the lowerings read, under the same names). `host` keeps
// the importer's own value where it has one (TorchScript: the c10::IValue), for what only that importer
// reads.
class Known {
 public:
  enum class Kind : uint8_t {
    None,
    Bool,
    Int,
    Double,
    String,
    Device,
    Ints,
    Doubles,
    Bools,
    Tuple,
    Tensor,
    Other
  };
  Known() = default;
  static Known of_bool(bool b);
  static Known of_int(int64_t i);
  static Known of_double(double d);
  static Known of_string(std::string s, Kind k = Kind::String);  // also a Device ("cpu", "cuda:0")
  static Known of_ints(std::vector<int64_t> xs);
  static Known of_doubles(std::vector<double> xs);
  static Known of_bools(std::vector<bool> xs);
  static Known of_tuple(std::vector<Known> xs);  // a tuple, or a list of anything but ints, floats, bools
  static Known of_tensor(TensorConst t);
  static Known other() { return with_kind(Kind::Other); }

  Kind kind() const { return kind_; }
  bool isNone() const { return kind_ == Kind::None; }
  bool isBool() const { return kind_ == Kind::Bool; }
  bool isInt() const { return kind_ == Kind::Int; }
  bool isDouble() const { return kind_ == Kind::Double; }
  bool isString() const { return kind_ == Kind::String; }
  bool isDevice() const { return kind_ == Kind::Device; }
  bool isIntList() const { return kind_ == Kind::Ints; }
  bool isDoubleList() const { return kind_ == Kind::Doubles; }
  bool isBoolList() const { return kind_ == Kind::Bools; }
  bool isTuple() const { return kind_ == Kind::Tuple; }
  bool isTensor() const { return kind_ == Kind::Tensor; }
  bool toBool() const { return i_ != 0; }
  int64_t toInt() const { return i_; }
  double toDouble() const { return d_; }
  const std::string& toStringRef() const { return s_; }  // a string or a device's name
  const std::vector<int64_t>& toIntVector() const { return ints_; }
  const std::vector<double>& toDoubleVector() const { return doubles_; }
  const std::vector<bool>& toBoolList() const { return bools_; }
  const std::vector<Known>& items() const;  // a tuple's
  // The elements of a list or tuple (int, float and bool lists element by element); nullopt for the rest.
  std::optional<std::vector<Known>> elements() const;
  const TensorConst& toTensor() const { return *tensor_; }

  std::any host;

 private:
  static Known with_kind(Kind k) {
    Known x;
    x.kind_ = k;
    return x;
  }
  Kind kind_ = Kind::None;
  int64_t i_ = 0;
  double d_ = 0;
  std::string s_;
  std::vector<int64_t> ints_;
  std::vector<double> doubles_;
  std::vector<bool> bools_;
  std::shared_ptr<const std::vector<Known>> items_;
  std::shared_ptr<const TensorConst> tensor_;
};

// A type as the op's schema states it: what the lowerings branch on (a tensor, an int, a list of ints...).
struct AtenType {
  enum Kind : uint8_t { Unknown, Tensor, Int, Float, Bool, Number, String, List, Other };
  Kind kind = Unknown;
  Kind elem = Unknown;  // List: the element's kind
  bool optional = false;
  bool is_tensor() const { return kind == Tensor; }
  bool is_list() const { return kind == List; }
};

// A value of the importer's graph: its name (IR values made for it derive from it) and its schema type.
struct AtenValue {
  std::string name;
  AtenType type;
};

// One aten call: "aten::" and the op's name, its inputs by schema position (every argument, defaults
// filled) and its outputs. Reading past the inputs throws std::out_of_range (an overload with fewer
// arguments than the lowering reads: the call is then listed as unsupported).
struct AtenNode {
  std::string kind;
  std::vector<const AtenValue*> ins, outs;
  const std::vector<std::string>* arg_names = nullptr;  // the schema's argument names, by position

  const std::vector<const AtenValue*>& inputs() const { return ins; }
  const std::vector<const AtenValue*>& outputs() const { return outs; }
  const AtenValue* input(size_t i) const { return ins.at(i); }
  const AtenValue* output(size_t i) const { return outs.at(i); }
  const AtenValue* output() const;  // the only output
};

// What a graph value is, for the lowering.
struct JV {
  enum Kind { Unknown, Tensor, ScalarIR, IntsIR, Known, List, Dict, Module, Split } kind = Unknown;
  int ir = -1;         // Tensor / ScalarIR / IntsIR: the IR value
  flopwise::Known iv;  // Known (int, double, bool, None, string, device, int list, ...)
  // List and Tuple items, shared by every alias of the list, so aten::append is seen by later readers.
  std::shared_ptr<std::vector<JV>> items;
  // Dict entries with known keys, in insertion order (shared like lists).
  std::shared_ptr<std::vector<std::pair<flopwise::Known, JV>>> dict;
  std::string path;                       // Module: dotted path from the root ("" for the root)
  std::any obj;                           // Module: the importer's module object
  int64_t split_size = 0, split_dim = 0;  // Split: pending aten::split / chunk, resolved at ListUnpack
  bool split_is_chunks = false;

  static JV known(flopwise::Known v) {
    JV j;
    j.kind = Known;
    j.iv = std::move(v);
    return j;
  }
  static JV of_ir(int ir, Kind k = Tensor) {
    JV j;
    j.kind = k;
    j.ir = ir;
    return j;
  }
  static JV list(std::vector<JV> xs) {
    JV j;
    j.kind = List;
    j.items = std::make_shared<std::vector<JV>>(std::move(xs));
    return j;
  }
};

using Attrs = std::map<std::string, Attribute>;
inline Attribute ai(int64_t v) { return Attribute::of_int(v); }
inline Attribute af(double v) { return Attribute::of_float(v); }
inline Attribute as(const std::string& v) { return Attribute::of_string(v); }
inline Attribute ais(std::vector<int64_t> v) { return Attribute::of_ints(std::move(v)); }

class AtenLowerer {
 public:
  explicit AtenLowerer(Model& m) : m_(m), g_(m.graph) {}
  virtual ~AtenLowerer() = default;

  // Lowers aten call `n` through the aten table, an in-place op rebinding the tensor it mutates; false when
  // no lowering takes it (the caller keeps it as unsupported).
  bool lower_aten(const AtenNode& n);

  // ---- the API of the aten lowerings (src/aten/aten_*.cc) ----
  JV& get(const AtenValue* v);
  JV& in(const AtenNode* n, size_t i) { return get(n->input(i)); }
  JV* arg(const AtenNode* n, const std::string& schema_name);  // input by schema argument name

  int as_ir(const JV& j);      // as a tensor operand (scalars and int lists become constants); -1: cannot
  int pack_ints(const JV& j);  // an int list (known, runtime or mixed) as a 1-D int64 value; -1: cannot
  // Values known at import: constants, attributes, and scalars whose contents the shape pass computed
  // (sizes of tensors with known shapes), so shape arithmetic folds as the model's own Python would.
  std::optional<int64_t> known_int(const JV& j);
  std::optional<double> known_num(const JV& j);
  std::optional<std::vector<int64_t>> known_ints(const JV& j);
  std::optional<std::vector<double>> known_doubles(const JV& j);
  std::optional<Known> known_value(const JV& j);           // Known, a known scalar, or a list of known items
  std::optional<std::vector<JV>> list_items(const JV& j);  // a list's items (an IR int list element-wise)
  std::optional<bool> known_bool(const JV& j);
  static bool is_none(const JV& j) { return j.kind == JV::Known && j.iv.isNone(); }
  static bool is_tensor(const JV& j) { return j.kind == JV::Tensor; }

  // Shape facts of an IR value from the shape pass run on the nodes emitted so far.
  const flopwise::Value& facts(int ir);
  std::optional<int64_t> known_rank(const JV& j);
  // A scalar IR value's contents when the shape pass computed them (a size, a rank, a comparison).
  std::optional<int64_t> known_scalar(const JV& j);

  int const_ints(const std::vector<int64_t>& xs);
  int const_int(int64_t x);
  int const_float(double x);
  int const_value(DType t, Shape s, ConstData d);
  int tensor_const(const TensorConst& t);

  // Emits one IR node in the current scope.
  std::vector<int> emit(const std::string& op, const std::vector<int>& ins,
                        const std::vector<std::string>& outs, Attrs attrs = {},
                        const std::string& domain = "", int opset = 0);
  // Emits an op whose single output is graph value `o` (a tensor), and binds `o` to it.
  int emit_to(const AtenValue* o, const std::string& op, const std::vector<int>& ins, Attrs attrs = {},
              const std::string& domain = "", int opset = 0);
  // Emits an op with one output named after `o` plus `what`, not bound to any graph value.
  int emit_tmp(const AtenValue* o, const std::string& what, const std::string& op,
               const std::vector<int>& ins, Attrs attrs = {}, const std::string& domain = "", int opset = 0);
  void set(const AtenValue* o, JV j) { env_.insert_or_assign(o, std::move(j)); }
  void set_known(const AtenValue* o, Known k) { env_.insert_or_assign(o, JV::known(std::move(k))); }
  void set_ir(const AtenValue* o, int ir, JV::Kind k = JV::Tensor);  // in place: no JV moved in
  static std::string ir_name(const AtenValue* v) { return "%" + v->name; }
  std::string tmp(const AtenValue* o, const std::string& what) { return ir_name(o) + "/" + what; }
  Graph& graph() { return g_; }
  Model& model() { return m_; }
  void warn(const std::string& msg) { m_.warnings.push_back(msg); }
  std::string scope() const { return scope_.empty() ? std::string() : scope_.back(); }
  // The scope (module paths, outermost first) and classes of the nodes emitted next.
  void set_scope(std::vector<std::string> scope, std::vector<std::string> classes);
  int new_value(const std::string& name);

 protected:
  // A value the importer has not bound: what it is (TorchScript: a constant's value); Unknown by default.
  virtual JV unbound(const AtenValue*) { return JV(); }
  bool bound(const AtenValue* v) const { return env_.count(v) > 0; }

  Model& m_;
  Graph& g_;
  std::unordered_map<const AtenValue*, JV> env_;

 private:
  std::unordered_map<std::string, int> name_count_;   // emit: nodes named so far per "scope/op"
  std::string name_buf_;                              // emit: the "scope/op" being looked up (reused)
  std::unordered_map<std::string, int> next_suffix_;  // new_value: the last suffix given to a name
  // emit's shared part: the node in the current scope, named, added to the graph (its outputs to follow).
  flopwise::Node& add_node(const std::string& op, const std::vector<int>& ins, Attrs attrs,
                           const std::string& domain, int opset);
  int emit_one(const std::string& op, const std::vector<int>& ins, const std::string& out, Attrs attrs,
               const std::string& domain, int opset);  // a node of one output: its value
  int const_count_ = 0;
  size_t inferred_upto_ = 0;  // nodes [0, inferred_upto_) have been through the shape pass
  // The incremental passes' result, kept across them so that data-dependent sizes are numbered once in node
  // order, as the full pass numbers them (its warnings and unsupported ops are reported by the full pass).
  InferResult facts_result_;
  StringList scope_, classes_;  // of the node being lowered (kept while the next node's are equal)
};

struct AtenCall;
// Each recorded call (a profiler trace's, flopwise/aten_call.h) as a one-call model, lowered through the aten
// table with the overload of torch's schemas that fits the record; `why[i]` says what did not fit (its
// model is then empty). No LibTorch.
std::vector<Model> lower_aten_calls(const std::vector<AtenCall>& calls, std::vector<std::string>* why);

}  // namespace flopwise
