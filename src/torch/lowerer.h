// src/torch/lowerer.h — TorchScript graph -> flopwise IR. Owns: jit values as the aten lowering's neutral
// values (flopwise/aten_lower.h), module scopes from inlined call stacks, the prim:: ops (constants,
// attributes, lists, tuples, dicts), control flow resolved while lowering (prim::If on shape facts through
// incremental inference, prim::Loop with a known trip count unrolled). The aten:: calls go to the neutral
// aten table (src/aten/). Sees LibTorch.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "flopwise/aten_lower.h"
#include "flopwise/infer.h"
#include "flopwise/ir.h"
#include "torch_load.h"

namespace flopwise {

namespace tj = torch::jit;

// A c10::IValue as a neutral value known at import (the IValue kept as its host), and back.
Known to_known(const c10::IValue& v);
c10::IValue to_ivalue(const Known& k);
TensorConst tensor_of(const at::Tensor& t);  // its type, sizes and, when small, contents
inline JV known_jv(const c10::IValue& v) { return JV::known(to_known(v)); }
inline JV known_jv(Known k) { return JV::known(std::move(k)); }
inline c10::IValue iv_of(const JV& j) { return to_ivalue(j.iv); }

// The TorchScript importer's lowering: jit values as AtenValues, prim:: ops, modules and their attributes,
// control flow; aten:: calls go to the AtenLowerer (flopwise/aten_lower.h).
class Lowerer : public AtenLowerer {
 public:
  Lowerer(Prepared& p, Model& m) : AtenLowerer(m), p_(p) {}

  // Lowers the whole forward graph into m.graph.
  void run();

  // Branch taken by each prim::If resolved while lowering (node, block index), in the order decided:
  // the LibTorch test probe inlines the same branches to run the graph the IR describes.
  const std::vector<std::pair<tj::Node*, size_t>>& decisions() const { return decisions_; }

  // The neutral view of a jit value (its debug name and schema type), made once.
  const AtenValue* av(const tj::Value* v);

  using AtenLowerer::emit_tmp;
  using AtenLowerer::emit_to;
  using AtenLowerer::get;
  using AtenLowerer::ir_name;
  using AtenLowerer::set;
  using AtenLowerer::set_ir;
  using AtenLowerer::set_known;
  using AtenLowerer::tmp;
  JV& get(const tj::Value* v) { return get(av(v)); }
  JV& in(tj::Node* n, size_t i) { return get(n->input(i)); }
  std::optional<c10::IValue> known_iv(const JV& j) {
    auto k = known_value(j);
    return k ? std::optional<c10::IValue>(to_ivalue(*k)) : std::nullopt;
  }
  int emit_to(const tj::Value* o, const std::string& op, const std::vector<int>& ins, Attrs attrs = {},
              const std::string& domain = "", int opset = 0) {
    return emit_to(av(o), op, ins, std::move(attrs), domain, opset);
  }
  int emit_tmp(const tj::Value* o, const std::string& what, const std::string& op,
               const std::vector<int>& ins, Attrs attrs = {}, const std::string& domain = "", int opset = 0) {
    return emit_tmp(av(o), what, op, ins, std::move(attrs), domain, opset);
  }
  void set(const tj::Value* o, JV j) { set(av(o), std::move(j)); }
  void set_known(const tj::Value* o, const c10::IValue& iv) { set(av(o), known_jv(iv)); }
  void set_ir(const tj::Value* o, int ir, JV::Kind k = JV::Tensor) { set_ir(av(o), ir, k); }
  std::string ir_name(const tj::Value* v) { return ir_name(av(v)); }
  std::string tmp(const tj::Value* o, const std::string& what) { return tmp(av(o), what); }

 protected:
  JV unbound(const AtenValue* v) override;

 private:
  Prepared& p_;
  std::unordered_map<const tj::Value*, std::unique_ptr<AtenValue>> values_;
  std::unordered_map<const AtenValue*, const tj::Value*> jit_of_;
  std::unordered_map<const void*, int> param_ir_;  // TensorImpl -> initializer value (a shared tensor once)
  std::vector<std::pair<tj::Node*, size_t>> decisions_;
  std::unordered_map<const c10::FunctionSchema*, std::vector<std::string>> arg_names_;

  void lower(tj::Node* n);
  void lower_block(tj::Block* b);
  bool lower_call(tj::Node* n, const std::string& kind);
  bool lower_prim(tj::Node* n, const std::string& kind);
  void lower_if(tj::Node* n);
  void lower_loop(tj::Node* n);
  void lower_unpack(tj::Node* n);
  bool lower_getitem(tj::Node* n);
  bool fold_known(tj::Node* n, const std::string& op);
  std::optional<c10::IValue> facts_value(tj::Node* n, const std::string& kind);
  void keep_unsupported(tj::Node* n);
  void record_source(tj::Node* n);  // appends n, as lowered, to Model::source_ops
  void add_outputs(const JV& j);
  void set_scope(tj::Node* n);
  int param_value(const std::string& name, const at::Tensor& t);
  JV attribute_value(const std::string& path, const c10::IValue& a);
  std::unordered_map<const void*, std::string> param_names_;  // TensorImpl -> dotted name of the parameter
  std::unordered_map<const void*, bool> is_buffer_;  // TensorImpl -> a buffer (true), a parameter (false)
};

}  // namespace flopwise
