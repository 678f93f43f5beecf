// src/torch/lowerer.cc — see lowerer.h.
#include "lowerer.h"

#include <torch/csrc/jit/ir/constants.h>

#include <cmath>
#include <cstdlib>
#include <exception>
#include <iostream>

#include "flopwise/errors.h"
#include "flopwise/infer.h"
#include "flopwise/limits.h"
#include "torch_types.h"

namespace flopwise {

namespace {
constexpr int64_t kMaxUnrolledNodes = 1000000;  // a prim::Loop unrolled past this is left unsupported

bool block_raises(tj::Block* b) {
  for (auto* n : b->nodes())
    if (n->kind() == c10::prim::RaiseException) return true;
  return false;
}
// A schema type as the aten lowerings see it.
AtenType::Kind kind_of(const c10::TypePtr& t) {
  static const std::pair<c10::TypeKind, AtenType::Kind> kKinds[] = {
      {c10::TypeKind::TensorType, AtenType::Tensor}, {c10::TypeKind::IntType, AtenType::Int},
      {c10::TypeKind::SymIntType, AtenType::Int},    {c10::TypeKind::FloatType, AtenType::Float},
      {c10::TypeKind::BoolType, AtenType::Bool},     {c10::TypeKind::NumberType, AtenType::Number},
      {c10::TypeKind::StringType, AtenType::String}, {c10::TypeKind::ListType, AtenType::List}};
  for (const auto& [k, a] : kKinds)
    if (t->kind() == k) return a;
  return AtenType::Other;
}

AtenType aten_type(c10::TypePtr t) {
  AtenType r;
  if (auto opt = t->cast<c10::OptionalType>()) {
    r.optional = true;
    t = opt->getElementType();
  }
  r.kind = kind_of(t);
  if (auto l = t->cast<c10::ListType>()) r.elem = kind_of(l->getElementType());
  return r;
}
}  // namespace

// ---- neutral values -------------------------------------------------------------------------------
TensorConst tensor_of(const at::Tensor& t) {
  TensorConst r;
  r.dtype = dtype_of_scalar_type(static_cast<int64_t>(t.scalar_type())).value_or(DType::Undefined);
  for (auto x : t.sizes()) r.sizes.push_back(x);
  if (t.numel() <= limits().max_const_elements && r.dtype != DType::Undefined) {
    ConstData d;
    auto c = t.contiguous().to(c10::kDouble).reshape({-1});
    auto acc = c.accessor<double, 1>();
    if (is_float(r.dtype)) {
      d.is_float = true;
      for (int64_t i = 0; i < c.numel(); ++i) d.floats.push_back(acc[i]);
    } else {
      for (int64_t i = 0; i < c.numel(); ++i) d.ints.push_back(Dim(static_cast<int64_t>(acc[i])));
    }
    r.data = std::move(d);
  }
  return r;
}

Known to_known(const c10::IValue& v) {
  Known k;
  if (v.isBool())
    k = Known::of_bool(v.toBool());
  else if (v.isInt())
    k = Known::of_int(v.toInt());
  else if (v.isDouble())
    k = Known::of_double(v.toDouble());
  else if (v.isString())
    k = Known::of_string(v.toStringRef());
  else if (v.isDevice())
    k = Known::of_string(v.toDevice().str(), Known::Kind::Device);
  else if (v.isIntList())
    k = Known::of_ints(v.toIntVector());
  else if (v.isDoubleList())
    k = Known::of_doubles(v.toDoubleVector());
  else if (v.isBoolList()) {
    std::vector<bool> b;
    for (bool x : v.toBoolList()) b.push_back(x);
    k = Known::of_bools(std::move(b));
  } else if (v.isTensor())
    k = Known::of_tensor(tensor_of(v.toTensor()));
  else if (v.isList() || v.isTuple()) {
    std::vector<Known> xs;
    for (const auto& x : v.isList() ? v.toListRef().vec() : v.toTupleRef().elements().vec())
      xs.push_back(to_known(x));
    k = Known::of_tuple(std::move(xs));
  } else if (!v.isNone())
    k = Known::other();
  k.host = v;
  return k;
}

c10::IValue to_ivalue(const Known& k) {
  if (const auto* iv = std::any_cast<c10::IValue>(&k.host)) return *iv;
  switch (k.kind()) {
    case Known::Kind::Bool:
      return c10::IValue(k.toBool());
    case Known::Kind::Int:
      return c10::IValue(k.toInt());
    case Known::Kind::Double:
      return c10::IValue(k.toDouble());
    case Known::Kind::String:
      return c10::IValue(k.toStringRef());
    case Known::Kind::Device:
      return c10::IValue(c10::Device(k.toStringRef()));
    case Known::Kind::Ints:
      return c10::IValue(k.toIntVector());
    case Known::Kind::Doubles:
      return c10::IValue(k.toDoubleVector());
    case Known::Kind::Bools: {
      c10::List<bool> b;
      for (bool x : k.toBoolList()) b.push_back(x);
      return c10::IValue(b);
    }
    case Known::Kind::Tuple: {
      std::vector<c10::IValue> xs;
      for (const auto& x : k.items()) xs.push_back(to_ivalue(x));
      return c10::IValue(c10::ivalue::Tuple::create(std::move(xs)));
    }
    default:
      return c10::IValue();
  }
}

// ---- the run ------------------------------------------------------------------------------------
void Lowerer::run() {
  auto ins = p_.graph->inputs();
  JV self;
  self.kind = JV::Module;
  self.obj = p_.module._ivalue();
  set(ins[0], self);
  for (size_t i = 1; i < ins.size(); ++i) {
    const InputDecl& d = p_.inputs[i - 1];
    if (d.value) {
      set(ins[i], known_jv(*d.value));
      continue;
    }
    int vi = g_.add_value(d.name);
    g_.values[vi].is_input = true;
    g_.values[vi].dtype = d.dtype;
    g_.values[vi].shape = *d.shape;
    g_.inputs.push_back(vi);
    set_ir(ins[i], vi);
  }
  for (const auto& np : p_.module.named_parameters(true)) {
    param_names_.emplace(np.value.unsafeGetTensorImpl(), np.name);
    is_buffer_.emplace(np.value.unsafeGetTensorImpl(), false);
  }
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
    if (fold_known(n, kind.substr(6))) return;
    if (lower_call(n, kind)) return;
  }
  keep_unsupported(n);
}

// An aten call through the neutral aten table: the node's values and schema argument names as AtenNode.
bool Lowerer::lower_call(tj::Node* n, const std::string& kind) {
  AtenNode call;
  call.kind = kind;
  for (const auto* v : n->inputs()) {
    call.ins.push_back(av(v));
    get(call.ins.back());  // a constant is known from here on
  }
  for (const auto* v : n->outputs()) call.outs.push_back(av(v));
  if (const auto* schema = n->maybeSchema()) {
    auto& names = arg_names_[schema];
    if (names.empty())
      for (const auto& a : schema->arguments()) names.push_back(a.name());
    call.arg_names = &names;
  }
  return lower_aten(call);
}

void Lowerer::record_source(tj::Node* n) {
  auto tensors = [&](const tj::Value* v) {
    std::vector<int> ids;
    auto it = env_.find(av(v));
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
const AtenValue* Lowerer::av(const tj::Value* v) {
  auto& slot = values_[v];
  if (!slot) {
    slot = std::make_unique<AtenValue>(AtenValue{v->debugName(), aten_type(v->type())});
    jit_of_.emplace(slot.get(), v);
  }
  return slot.get();
}

JV Lowerer::unbound(const AtenValue* v) {
  auto it = jit_of_.find(v);
  if (it == jit_of_.end()) return JV();
  if (auto iv = tj::toIValue(it->second)) return known_jv(*iv);
  return JV();
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
  auto registered = is_buffer_.find(key);  // a module's parameter counts at any rank (CLIP's 0-d logit_scale)
  v.is_buffer = registered != is_buffer_.end() && registered->second;
  v.is_parameter = registered != is_buffer_.end() && !registered->second;
  param_ir_[key] = vi;
  return vi;
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
  AtenLowerer::set_scope(std::move(scope), std::move(classes));
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
    set_ir(n->outputs()[k], res[k],
           n->outputs()[k]->type()->cast<c10::TensorType>() ? JV::Tensor : JV::ScalarIR);
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
  for (size_t i = 0; i < n->outputs().size(); ++i) set(n->outputs()[i], get(b->outputs()[i]));
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
    set(body->inputs()[0], JV::known(Known::of_int(it)));
    for (size_t j = 0; j < carried.size(); ++j) set(body->inputs()[j + 1], carried[j]);
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
  for (size_t j = 0; j < carried.size(); ++j) set(n->outputs()[j], carried[j]);
}

}  // namespace flopwise
