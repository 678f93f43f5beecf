// src/torch/lowerer.h — the lowering machinery: TorchScript graph -> flopwise IR.
// Owns: what each jit value is at import (JV), emitting IR nodes in the current module scope, module
// scopes from inlined call stacks, the prim:: ops (constants, attributes, lists, tuples, dicts), control
// flow resolved while lowering (prim::If on shape facts through incremental inference, prim::Loop with a
// known trip count unrolled), in-place ops rebinding the value they mutate. The aten:: ops themselves are
// looked up in the aten table (aten_table.h); families live in aten_*.cc. Sees LibTorch.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "flopwise/infer.h"
#include "flopwise/ir.h"
#include "torch_load.h"

namespace flopwise {

namespace tj = torch::jit;

constexpr int kTorchOpset = 18;  // default-domain opset of the lowered nodes (newest input layouts)

// What a jit value is, for the lowering.
struct JV {
  enum Kind { Unknown, Tensor, ScalarIR, IntsIR, Known, List, Dict, Module, Split } kind = Unknown;
  int ir = -1;     // Tensor / ScalarIR / IntsIR: the IR value
  c10::IValue iv;  // Known (int, double, bool, None, string, device, int list, ...)
  // List and Tuple items, shared by every alias of the list, so aten::append is seen by later readers.
  std::shared_ptr<std::vector<JV>> items;
  // Dict entries with known keys, in insertion order (shared like lists).
  std::shared_ptr<std::vector<std::pair<c10::IValue, JV>>> dict;
  std::string path;  // Module: dotted path from the root ("" for the root)
  c10::intrusive_ptr<c10::ivalue::Object> obj;
  int64_t split_size = 0, split_dim = 0;  // Split: pending aten::split / chunk, resolved at ListUnpack
  bool split_is_chunks = false;

  static JV known(c10::IValue v) {
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

class Lowerer {
 public:
  Lowerer(Prepared& p, Model& m) : p_(p), m_(m), g_(m.graph) {}

  // Lowers the whole forward graph into m.graph.
  void run();

  // Branch taken by each prim::If resolved while lowering (node, block index), in the order decided:
  // the LibTorch test probe inlines the same branches to run the graph the IR describes.
  const std::vector<std::pair<tj::Node*, size_t>>& decisions() const { return decisions_; }

  // ---- the API of the aten lowerings (aten_*.cc) ----
  JV& get(const tj::Value* v);
  JV& in(tj::Node* n, size_t i) { return get(n->input(i)); }
  JV* arg(tj::Node* n, const std::string& schema_name);  // input by schema argument name

  int as_ir(const JV& j);      // as a tensor operand (scalars and int lists become constants); -1: cannot
  int pack_ints(const JV& j);  // an int list (known, runtime or mixed) as a 1-D int64 value; -1: cannot
  // Values known at import: constants, attributes, and scalars whose contents the shape pass computed
  // (sizes of tensors with known shapes), so shape arithmetic folds as the model's own Python would.
  std::optional<int64_t> known_int(const JV& j);
  std::optional<double> known_num(const JV& j);
  std::optional<std::vector<int64_t>> known_ints(const JV& j);
  std::optional<std::vector<double>> known_doubles(const JV& j);
  std::optional<c10::IValue> known_value(const JV& j);     // Known, a known scalar, or a list of known items
  std::optional<std::vector<JV>> list_items(const JV& j);  // a list's items (an IR int list element-wise)
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
  int tensor_const(const at::Tensor& t);

  // Emits one IR node in the current jit node's scope.
  std::vector<int> emit(const std::string& op, const std::vector<int>& ins,
                        const std::vector<std::string>& outs, Attrs attrs = {},
                        const std::string& domain = "", int opset = 0);
  // Emits an op whose single output is jit output `o` (a tensor), and binds `o` to it.
  int emit_to(const tj::Value* o, const std::string& op, const std::vector<int>& ins, Attrs attrs = {},
              const std::string& domain = "", int opset = 0);
  // Emits an op with one output named after `o` plus `what`, not bound to any jit value.
  int emit_tmp(const tj::Value* o, const std::string& what, const std::string& op,
               const std::vector<int>& ins, Attrs attrs = {}, const std::string& domain = "", int opset = 0);
  void set(const tj::Value* o, JV j) { env_[o] = std::move(j); }
  void set_known(const tj::Value* o, c10::IValue iv) { env_[o] = JV::known(std::move(iv)); }
  void set_ir(const tj::Value* o, int ir, JV::Kind k = JV::Tensor) { env_[o] = JV::of_ir(ir, k); }
  static std::string ir_name(const tj::Value* v) { return "%" + v->debugName(); }
  std::string tmp(const tj::Value* o, const std::string& what) { return ir_name(o) + "/" + what; }
  Graph& graph() { return g_; }
  Model& model() { return m_; }
  void warn(const std::string& msg) { m_.warnings.push_back(msg); }
  std::string scope() const { return scope_.empty() ? std::string() : scope_.back(); }

 private:
  Prepared& p_;
  Model& m_;
  Graph& g_;
  std::unordered_map<const tj::Value*, JV> env_;
  std::unordered_map<const void*, int> param_ir_;  // TensorImpl -> initializer value (a shared tensor once)
  std::map<std::string, int> name_count_;
  int const_count_ = 0;
  size_t inferred_upto_ = 0;  // nodes [0, inferred_upto_) have been through the shape pass
  // The incremental passes' result, kept across them so that data-dependent sizes are numbered once in node
  // order, as the full pass numbers them (its warnings and unsupported ops are reported by the full pass).
  InferResult facts_result_;
  StringList scope_, classes_;  // of the node being lowered (kept while the next node's are equal)
  std::vector<std::pair<tj::Node*, size_t>> decisions_;

  void lower(tj::Node* n);
  void lower_block(tj::Block* b);
  bool lower_prim(tj::Node* n, const std::string& kind);
  void lower_if(tj::Node* n);
  void lower_loop(tj::Node* n);
  void lower_unpack(tj::Node* n);
  bool lower_getitem(tj::Node* n);
  bool fold_known(tj::Node* n, const std::string& op);
  std::optional<c10::IValue> facts_value(tj::Node* n, const std::string& kind);
  std::optional<bool> known_bool(const JV& j);
  void keep_unsupported(tj::Node* n);
  void record_source(tj::Node* n);  // appends n, as lowered, to Model::source_ops
  void add_outputs(const JV& j);
  void set_scope(tj::Node* n);
  int param_value(const std::string& name, const at::Tensor& t);
  JV attribute_value(const std::string& path, const c10::IValue& a);
  std::unordered_map<const void*, std::string> param_names_;  // TensorImpl -> dotted name of the parameter
  std::unordered_map<const void*, bool> is_buffer_;           // TensorImpl -> a registered buffer
  int new_value(const std::string& name);
};

}  // namespace flopwise
