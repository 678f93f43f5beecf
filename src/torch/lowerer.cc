// src/torch/lowerer.cc — see lowerer.h.
#include "lowerer.h"

#include <torch/csrc/jit/ir/constants.h>

#include <cmath>
#include <cstdlib>
#include <exception>
#include <iostream>

#include "aten_table.h"
#include "flopwise/errors.h"
#include "flopwise/infer.h"
#include "torch_types.h"

namespace flopwise {

namespace {
constexpr int64_t kMaxUnrolledNodes = 1000000;  // a prim::Loop unrolled past this is left unsupported

bool block_raises(tj::Block* b) {
  for (auto* n : b->nodes())
    if (n->kind() == c10::prim::RaiseException) return true;
  return false;
}
}  // namespace

// ---- the run ------------------------------------------------------------------------------------
void Lowerer::run() {
  auto ins = p_.graph->inputs();
  JV self;
  self.kind = JV::Module;
  self.obj = p_.module._ivalue();
  env_[ins[0]] = self;
  for (size_t i = 1; i < ins.size(); ++i) {
    const InputDecl& d = p_.inputs[i - 1];
    if (d.value) {
      env_[ins[i]] = JV::known(*d.value);
      continue;
    }
    int vi = g_.add_value(d.name);
    g_.values[vi].is_input = true;
    g_.values[vi].dtype = d.dtype;
    g_.values[vi].shape = *d.shape;
    g_.inputs.push_back(vi);
    env_[ins[i]] = JV::of_ir(vi);
  }
  for (const auto& np : p_.module.named_parameters(true))
    param_names_.emplace(np.value.unsafeGetTensorImpl(), np.name);
  for (const auto& nb : p_.module.named_buffers(true)) {
    param_names_.emplace(nb.value.unsafeGetTensorImpl(), nb.name);
    is_buffer_.emplace(nb.value.unsafeGetTensorImpl(), true);
  }
  lower_block(p_.graph->block());
  for (auto* o : p_.graph->outputs()) add_outputs(get(o));
  // Parameters never used by forward are not in the graph: say so, with the count.
  int64_t unused = 0;
  for (const auto& np : p_.module.named_parameters(true))
    if (!param_ir_.count(np.value.unsafeGetTensorImpl())) unused += np.value.numel();
  if (unused > 0)
    m_.warnings.push_back(std::to_string(unused) +
                          " parameter elements are not used by forward (not counted)");
}

void Lowerer::lower_block(tj::Block* b) {
  for (auto* n : b->nodes()) lower(n);
}

void Lowerer::lower(tj::Node* n) {
  set_scope(n);
  const std::string kind = n->kind().toQualString();
  if (kind == "prim::If") return lower_if(n);
  if (kind == "prim::Loop") return lower_loop(n);
  if (lower_prim(n, kind)) return;
  if (kind.rfind("aten::", 0) == 0) {
    struct Record {  // on every way out: the op as run, for `flopwise run --verify`
      Lowerer& l;
      tj::Node* n;
      ~Record() {
        if (std::uncaught_exceptions() == 0) l.record_source(n);  // nothing to record when lowering failed
      }
    } record{*this, n};
    std::string op = kind.substr(6);
    if (fold_known(n, op)) return;
    bool inplace = op.size() > 1 && op.back() == '_' && op.rfind("__", 0) != 0;
    if (inplace) op.pop_back();
    AtenLowering fn = aten_table().find(op);
    bool lowered = false;
    try {
      lowered = fn && fn(*this, n, op);
    } catch (const std::out_of_range&) {  // an overload with fewer arguments than the lowering reads
      lowered = false;
    }
    if (lowered) {
      // An in-place op returns the tensor it mutated: later readers of its input see the result. Its node is
      // marked: the result shares its input's storage (what --train counts as kept for backward).
      if (inplace && !n->outputs().empty() && env_.count(n->output(0))) {
        const JV& out = env_[n->output(0)];
        if (out.kind == JV::Tensor && out.ir >= 0 && static_cast<size_t>(out.ir) < g_.values.size()) {
          const int producer = g_.values[static_cast<size_t>(out.ir)].producer;
          if (producer >= 0)
            g_.nodes[static_cast<size_t>(producer)].attrs[kInplaceAttr] = Attribute::of_int(1);
        }
        env_[n->input(0)] = out;
      }
      return;
    }
  }
  keep_unsupported(n);
}

void Lowerer::record_source(tj::Node* n) {
  auto tensors = [&](const tj::Value* v) {
    std::vector<int> ids;
    auto it = env_.find(v);
    if (it == env_.end()) return ids;
    const JV& j = it->second;
    if (j.kind == JV::Tensor) {
      ids.push_back(j.ir);
    } else if (j.kind == JV::List && v->type()->cast<c10::ListType>() &&
               v->type()->castRaw<c10::ListType>()->getElementType()->cast<c10::TensorType>()) {
      for (const auto& x : *j.items) ids.push_back(x.kind == JV::Tensor ? x.ir : -1);
    }
    return ids;
  };
  SourceOp s;
  s.kind = n->kind().toQualString();
  s.scope = scope();
  for (const auto* v : n->inputs()) s.inputs.push_back(tensors(v));
  for (const auto* v : n->outputs()) s.outputs.push_back(tensors(v));
  m_.source_ops.push_back(std::move(s));
}

// ---- values -------------------------------------------------------------------------------------
JV& Lowerer::get(const tj::Value* v) {
  auto it = env_.find(v);
  if (it == env_.end()) {
    JV u;
    if (auto iv = tj::toIValue(v)) {
      u.kind = JV::Known;
      u.iv = *iv;
    }
    it = env_.emplace(v, u).first;
  }
  return it->second;
}

JV* Lowerer::arg(tj::Node* n, const std::string& name) {
  const auto* s = n->maybeSchema();
  if (!s) return nullptr;
  for (size_t i = 0; i < s->arguments().size() && i < n->inputs().size(); ++i)
    if (s->arguments()[i].name() == name) return &get(n->input(i));
  return nullptr;
}

int Lowerer::new_value(const std::string& name) {
  std::string n = name;
  for (int k = 1; g_.find(n) >= 0; ++k) n = name + "_" + std::to_string(k);
  return g_.add_value(n);
}

int Lowerer::const_value(DType t, Shape s, ConstData d) {
  int vi = new_value("const_" + std::to_string(const_count_++));
  flopwise::Value& v = g_.values[vi];
  v.dtype = t;
  v.shape = std::move(s);
  v.data = std::move(d);
  v.synthetic = true;
  return vi;
}
int Lowerer::const_ints(const std::vector<int64_t>& xs) {
  ConstData d;
  for (auto x : xs) d.ints.push_back(Dim(x));
  return const_value(DType::Int64, Shape({Dim(static_cast<int64_t>(xs.size()))}), d);
}
int Lowerer::const_int(int64_t x) {
  ConstData d;
  d.ints.push_back(Dim(x));
  return const_value(DType::Int64, Shape::scalar(), d);
}
int Lowerer::const_float(double x) {
  ConstData d;
  d.is_float = true;
  d.floats.push_back(x);
  return const_value(DType::Float32, Shape::scalar(), d);
}

int Lowerer::tensor_const(const at::Tensor& t) {
  DType dt = dtype_of_scalar_type(static_cast<int64_t>(t.scalar_type())).value_or(DType::Undefined);
  std::vector<Dim> dims;
  for (auto x : t.sizes()) dims.push_back(Dim(x));
  std::optional<ConstData> data;
  if (t.numel() <= limits().max_const_elements && dt != DType::Undefined) {
    ConstData d;
    auto c = t.contiguous().to(c10::kDouble).reshape({-1});
    auto acc = c.accessor<double, 1>();
    if (is_float(dt)) {
      d.is_float = true;
      for (int64_t i = 0; i < c.numel(); ++i) d.floats.push_back(acc[i]);
    } else {
      for (int64_t i = 0; i < c.numel(); ++i) d.ints.push_back(Dim(static_cast<int64_t>(acc[i])));
    }
    data = d;
  }
  int vi = new_value("const_" + std::to_string(const_count_++));
  flopwise::Value& v = g_.values[vi];
  v.dtype = dt;
  v.shape = Shape(dims);
  v.data = data;
  v.synthetic = true;
  return vi;
}

// A module parameter or buffer: one initializer per tensor, named by its first dotted path.
int Lowerer::param_value(const std::string& name, const at::Tensor& t) {
  const void* key = t.unsafeGetTensorImpl();
  auto it = param_ir_.find(key);
  if (it != param_ir_.end()) return it->second;
  auto named = param_names_.find(key);
  int vi = new_value(named != param_names_.end() ? named->second : name);
  flopwise::Value& v = g_.values[vi];
  v.dtype = dtype_of_scalar_type(static_cast<int64_t>(t.scalar_type())).value_or(DType::Undefined);
  std::vector<Dim> dims;
  for (auto x : t.sizes()) dims.push_back(Dim(x));
  v.shape = Shape(dims);
  v.is_initializer = true;
  v.is_buffer = is_buffer_.count(key) > 0;
  param_ir_[key] = vi;
  return vi;
}

int Lowerer::as_ir(const JV& j) {
  switch (j.kind) {
    case JV::Tensor:
    case JV::ScalarIR:
    case JV::IntsIR:
      return j.ir;
    case JV::Known:
      if (j.iv.isInt()) return const_int(j.iv.toInt());
      if (j.iv.isBool()) {
        ConstData d;
        d.ints.push_back(Dim(j.iv.toBool() ? 1 : 0));
        return const_value(DType::Bool, Shape::scalar(), d);
      }
      if (j.iv.isDouble()) return const_float(j.iv.toDouble());
      if (j.iv.isIntList()) return const_ints(j.iv.toIntVector());
      if (j.iv.isTensor()) return tensor_const(j.iv.toTensor());
      return -1;
    case JV::List:
      return pack_ints(j);
    default:
      return -1;
  }
}

int Lowerer::pack_ints(const JV& j) {
  if (j.kind == JV::IntsIR) return j.ir;
  if (j.kind == JV::Known && j.iv.isIntList()) return const_ints(j.iv.toIntVector());
  if (j.kind == JV::Known && j.iv.isInt()) return const_ints({j.iv.toInt()});
  if (j.kind == JV::ScalarIR || j.kind == JV::Tensor)
    return emit("PackScalars", {j.ir}, {"pack"}, {}, "flopwise")[0];
  if (j.kind != JV::List) return -1;
  if (auto k = known_ints(j)) return const_ints(*k);
  std::vector<int> ins;
  for (const auto& it : *j.items) {
    if (it.kind != JV::Known && it.kind != JV::ScalarIR && it.kind != JV::Tensor) return -1;
    ins.push_back(as_ir(it));
  }
  return emit("PackScalars", ins, {"pack"}, {}, "flopwise")[0];
}

std::optional<int64_t> Lowerer::known_int(const JV& j) {
  if (j.kind == JV::Known && j.iv.isInt()) return j.iv.toInt();
  if (j.kind == JV::Known && j.iv.isBool()) return j.iv.toBool() ? 1 : 0;
  if (j.kind == JV::ScalarIR || j.kind == JV::Tensor) return known_scalar(j);
  return std::nullopt;
}
std::optional<double> Lowerer::known_num(const JV& j) {
  if (j.kind == JV::ScalarIR || j.kind == JV::Tensor) {
    const auto& v = facts(j.ir);
    if (v.shape.rank_known && v.shape.rank() == 0 && v.data && v.data->is_float && v.data->floats.size() == 1)
      return v.data->floats[0];
    if (auto x = known_scalar(j)) return static_cast<double>(*x);
    return std::nullopt;
  }
  if (j.kind != JV::Known) return std::nullopt;
  if (j.iv.isDouble()) return j.iv.toDouble();
  if (j.iv.isInt()) return static_cast<double>(j.iv.toInt());
  if (j.iv.isBool()) return j.iv.toBool() ? 1.0 : 0.0;
  return std::nullopt;
}
std::optional<std::vector<int64_t>> Lowerer::known_ints(const JV& j) {
  if (j.kind == JV::Known && j.iv.isIntList()) return j.iv.toIntVector();
  if (j.kind == JV::Known && j.iv.isInt()) return std::vector<int64_t>{j.iv.toInt()};
  if (j.kind == JV::List) {
    std::vector<int64_t> r;
    for (const auto& it : *j.items) {
      auto x = known_int(it);
      if (!x) return std::nullopt;
      r.push_back(*x);
    }
    return r;
  }
  return std::nullopt;
}
std::optional<std::vector<double>> Lowerer::known_doubles(const JV& j) {
  if (j.kind == JV::Known && j.iv.isDoubleList()) return j.iv.toDoubleVector();
  if (j.kind == JV::Known && j.iv.isIntList()) {
    std::vector<double> r;
    for (auto x : j.iv.toIntVector()) r.push_back(static_cast<double>(x));
    return r;
  }
  if (j.kind == JV::List) {
    std::vector<double> r;
    for (const auto& it : *j.items) {
      auto x = known_num(it);
      if (!x) return std::nullopt;
      r.push_back(*x);
    }
    return r;
  }
  return std::nullopt;
}

std::optional<c10::IValue> Lowerer::known_value(const JV& j) {
  if (j.kind == JV::Known) return j.iv;
  if (j.kind == JV::ScalarIR || j.kind == JV::Tensor) {
    const auto& v = facts(j.ir);
    if (!v.shape.rank_known || v.shape.rank() != 0) return std::nullopt;
    if (v.dtype == DType::Bool) {
      if (auto x = known_scalar(j)) return c10::IValue(*x != 0);
      return std::nullopt;
    }
    if (is_float(v.dtype)) {
      if (auto x = known_num(j)) return c10::IValue(*x);
      return std::nullopt;
    }
    if (auto x = known_scalar(j)) return c10::IValue(*x);
    return std::nullopt;
  }
  if (j.kind != JV::List) return std::nullopt;
  bool ints = true;
  std::vector<c10::IValue> xs;
  for (const auto& it : *j.items) {
    auto x = known_value(it);
    if (!x) return std::nullopt;
    ints = ints && x->isInt();
    xs.push_back(*x);
  }
  if (ints && !xs.empty()) {
    std::vector<int64_t> v;
    for (const auto& x : xs) v.push_back(x.toInt());
    return c10::IValue(v);
  }
  return c10::IValue(c10::ivalue::Tuple::create(std::move(xs)));
}

// ---- shape facts ----------------------------------------------------------------------------------
const flopwise::Value& Lowerer::facts(int ir) {
  if (inferred_upto_ < g_.nodes.size()) {
    infer_node_range(g_, inferred_upto_, g_.nodes.size(), facts_result_);
    inferred_upto_ = g_.nodes.size();
  }
  return g_.values[ir];
}

std::optional<int64_t> Lowerer::known_rank(const JV& j) {
  if (j.kind != JV::Tensor && j.kind != JV::ScalarIR && j.kind != JV::IntsIR) return std::nullopt;
  const auto& s = facts(j.ir).shape;
  if (!s.rank_known) return std::nullopt;
  return static_cast<int64_t>(s.rank());
}

std::optional<int64_t> Lowerer::known_scalar(const JV& j) {
  if (j.kind == JV::Known) {
    if (j.iv.isInt()) return j.iv.toInt();
    if (j.iv.isBool()) return j.iv.toBool() ? 1 : 0;
    return std::nullopt;
  }
  if (j.kind != JV::Tensor && j.kind != JV::ScalarIR) return std::nullopt;
  const auto& v = facts(j.ir);
  if (!v.data || v.data->size() != 1 || !v.shape.rank_known || v.shape.rank() > 1) return std::nullopt;
  if (v.data->is_float) {
    double f = v.data->floats[0];
    if (!std::isfinite(f) || f != std::floor(f) || std::fabs(f) > 9.0e18) return std::nullopt;
    return static_cast<int64_t>(f);
  }
  if (!v.data->ints[0].is_known()) return std::nullopt;
  return v.data->ints[0].value();
}

std::optional<bool> Lowerer::known_bool(const JV& j) {
  if (j.kind == JV::Known && j.iv.isBool()) return j.iv.toBool();
  if (j.kind == JV::Known && j.iv.isDouble()) return j.iv.toDouble() != 0.0;  // `if self.dropout:`
  if (j.kind == JV::Known && j.iv.isNone()) return false;
  if (j.kind == JV::Known && j.iv.isString()) return !j.iv.toStringRef().empty();
  if (auto x = known_scalar(j)) return *x != 0;
  return std::nullopt;
}

// ---- emission -----------------------------------------------------------------------------------
std::vector<int> Lowerer::emit(const std::string& op, const std::vector<int>& ins,
                               const std::vector<std::string>& outs, Attrs attrs, const std::string& domain,
                               int opset) {
  flopwise::Node n;
  n.op = op;
  n.domain = domain;
  n.opset = opset ? opset : (domain.empty() ? kTorchOpset : 1);
  n.inputs = ins;
  n.attrs = std::move(attrs);
  n.scope = scope_;
  n.scope_classes = classes_;
  std::string base = (scope_.empty() ? std::string() : scope_.back()) + "/" + op;
  int c = name_count_[base]++;
  n.name = c ? base + "_" + std::to_string(c) : base;
  int idx = static_cast<int>(g_.nodes.size());
  std::vector<int> res;
  for (const auto& o : outs) {
    int vi = new_value(o);
    g_.values[vi].producer = idx;
    n.outputs.push_back(vi);
    res.push_back(vi);
  }
  g_.nodes.push_back(std::move(n));
  return res;
}

int Lowerer::emit_to(const tj::Value* o, const std::string& op, const std::vector<int>& ins, Attrs attrs,
                     const std::string& domain, int opset) {
  int r = emit(op, ins, {ir_name(o)}, std::move(attrs), domain, opset)[0];
  env_[o] = JV::of_ir(r);
  return r;
}

int Lowerer::emit_tmp(const tj::Value* o, const std::string& what, const std::string& op,
                      const std::vector<int>& ins, Attrs attrs, const std::string& domain, int opset) {
  return emit(op, ins, {tmp(o, what)}, std::move(attrs), domain, opset)[0];
}

// Scope of a node from its inlined call stack: the instance names of the calls, resolved against the module
// tree (module_scope, torch_load.h).
void Lowerer::set_scope(tj::Node* n) {
  std::vector<std::string> scope, classes;
  if (auto cs = n->callstack()) {
    std::vector<std::pair<std::string, std::string>> calls;  // instance name, recorded class
    for (auto& e : (*cs)->vec()) {
      const auto& mi = std::get<2>(e);
      if (!mi) continue;
      calls.emplace_back(mi->instance_name(),
                         mi->class_type() ? clean_class(mi->class_type()->name()->qualifiedName()) : "");
    }
    for (auto& level : module_scope(p_.module, calls)) {
      scope.push_back(std::move(level.first));
      classes.push_back(std::move(level.second));
    }
  }
  // The IR nodes of one torch node, and consecutive torch nodes of one module, share one list.
  if (!(scope_ == scope)) scope_ = std::move(scope);
  if (!(classes_ == classes)) classes_ = std::move(classes);
}

void Lowerer::add_outputs(const JV& j) {
  if (j.kind == JV::List) {
    for (const auto& it : *j.items) add_outputs(it);
    return;
  }
  if (j.kind == JV::Dict) {
    for (const auto& kv : *j.dict) add_outputs(kv.second);
    return;
  }
  if (j.kind == JV::Known && (j.iv.isNone() || j.iv.isString())) return;
  int vi = as_ir(j);
  if (vi >= 0) g_.outputs.push_back(vi);
}

// Keeps an op we do not lower: a node in its own domain, so it is listed as unsupported.
void Lowerer::keep_unsupported(tj::Node* n) {
  std::string kind = n->kind().toQualString();
  if (std::getenv("FLOPWISE_DEBUG_LOWERING")) {  // developers: which node, and what its inputs were
    static const char* kinds[] = {"unknown", "tensor", "scalar", "ints", "known",
                                  "list",    "dict",   "module", "split"};
    std::cerr << "unsupported in '" << scope() << "': " << *n;
    for (auto* i : n->inputs())
      std::cerr << "  input %" << i->debugName() << ": " << kinds[get(i).kind] << "\n";
  }
  if (!n->blocks().empty()) {
    // Control flow that depends on runtime values: listed as unsupported, and the nodes inside its blocks
    // are not counted; say how many.
    size_t inner = 0;
    for (auto* b : n->blocks())
      for (auto* c : b->nodes()) inner += c->kind() != c10::prim::Constant;
    m_.warnings.push_back(kind + " in scope '" + scope() + "' could not be resolved statically: its " +
                          std::to_string(inner) + " inner node(s) are not counted");
  }
  auto sep = kind.find("::");
  std::string domain = kind.substr(0, sep), op = kind.substr(sep + 2);
  std::vector<int> ins;
  for (auto* i : n->inputs()) ins.push_back(as_ir(get(i)));
  std::vector<std::string> outs;
  for (auto* o : n->outputs()) outs.push_back(ir_name(o));
  auto res = emit(op, ins, outs, {}, domain, 1);
  for (size_t k = 0; k < n->outputs().size(); ++k)
    env_[n->outputs()[k]] =
        JV::of_ir(res[k], n->outputs()[k]->type()->cast<c10::TensorType>() ? JV::Tensor : JV::ScalarIR);
}

// ---- control flow -------------------------------------------------------------------------------
// prim::If: the condition from what is known now (constants, attributes, None-ness, the eval run's facts,
// shape facts the pass computed for the nodes so far), else the branch that does not raise.
void Lowerer::lower_if(tj::Node* n) {
  std::optional<size_t> pick;
  if (auto c = known_bool(in(n, 0))) pick = *c ? 0 : 1;
  bool r0 = block_raises(n->blocks()[0]), r1 = block_raises(n->blocks()[1]);
  if (pick && (*pick == 0 ? r0 : r1) && !(*pick == 0 ? r1 : r0)) {
    m_.warnings.push_back("scope '" + scope() +
                          "': forward raises here for the given input shapes; the branch that does not raise "
                          "is counted");
    pick = *pick == 0 ? 1 : 0;
  }
  if (!pick && r0 != r1) pick = r0 ? 1 : 0;
  if (!pick) return keep_unsupported(n);
  decisions_.emplace_back(n, *pick);
  tj::Block* b = n->blocks()[*pick];
  lower_block(b);
  for (size_t i = 0; i < n->outputs().size(); ++i) env_[n->outputs()[i]] = get(b->outputs()[i]);
}

// prim::Loop(max_trip_count, initial_condition, carried...) with a known trip count and a condition
// known at every iteration (a `for` loop over a range): unrolled.
void Lowerer::lower_loop(tj::Node* n) {
  auto trip = known_int(in(n, 0));
  auto cond = known_bool(in(n, 1));
  tj::Block* body = n->blocks()[0];
  int64_t body_nodes = 0;
  for (auto* c : body->nodes()) body_nodes += c->kind() != c10::prim::Constant;
  if (!trip || !cond || *trip < 0 || (*trip > 0 && body_nodes > kMaxUnrolledNodes / *trip))
    return keep_unsupported(n);
  std::vector<JV> carried;
  for (size_t i = 2; i < n->inputs().size(); ++i) carried.push_back(in(n, i));
  for (int64_t it = 0; it < *trip && *cond; ++it) {
    env_[body->inputs()[0]] = JV::known(c10::IValue(it));
    for (size_t j = 0; j < carried.size(); ++j) env_[body->inputs()[j + 1]] = carried[j];
    lower_block(body);
    cond = known_bool(get(body->outputs()[0]));
    for (size_t j = 0; j < carried.size(); ++j) carried[j] = get(body->outputs()[j + 1]);
    if (!cond) {
      m_.warnings.push_back("prim::Loop in scope '" + scope() + "': whether iteration " +
                            std::to_string(it + 2) + " runs depends on data; iterations after " +
                            std::to_string(it + 1) + " are not counted");
      for (auto& c : carried) c = JV();
      break;
    }
  }
  for (size_t j = 0; j < carried.size(); ++j) env_[n->outputs()[j]] = carried[j];
}

}  // namespace flopwise
