// src/torch/lower_prim.cc — the Lowerer's non-tensor values: prim:: ops (constants, attributes, lists,
// tuples, dicts, unpacking, casts), Python arithmetic and logic on values known at import, and the facts
// of the run a user measures (eval mode, no grad, CPU, TorchScript interpreter).
#include <torch/csrc/jit/ir/constants.h>

#include <cmath>

#include "lowerer.h"
#include "torch_types.h"

namespace flopwise {

namespace {

std::optional<double> num(const c10::IValue& x) {
  if (x.isInt()) return static_cast<double>(x.toInt());
  if (x.isDouble()) return x.toDouble();
  if (x.isBool()) return x.toBool() ? 1.0 : 0.0;
  return std::nullopt;
}

bool is_int_like(const c10::IValue& x) { return x.isInt() || x.isBool(); }

// Elements of a known list or tuple value.
std::optional<std::vector<c10::IValue>> elements(const c10::IValue& x) {
  if (x.isList()) return x.toListRef().vec();
  if (x.isTuple()) return x.toTupleRef().elements().vec();
  return std::nullopt;
}

bool equal_values(const c10::IValue& a, const c10::IValue& b) {
  auto ea = elements(a), eb = elements(b);
  if (ea && eb) {
    if (ea->size() != eb->size()) return false;
    for (size_t i = 0; i < ea->size(); ++i)
      if (!equal_values((*ea)[i], (*eb)[i])) return false;
    return true;
  }
  if (a.isString() && b.isString()) return a.toStringRef() == b.toStringRef();
  if (a.isNone() || b.isNone()) return a.isNone() && b.isNone();
  if (a.isDevice() && b.isDevice()) return a.toDevice() == b.toDevice();
  auto x = num(a), y = num(b);
  return x && y && *x == *y;
}

using Values = std::vector<c10::IValue>;
using Folded = std::optional<c10::IValue>;
using Fold = Folded (*)(const Values& xs);

Folded fold_number(double r, bool as_int) {
  if (!as_int) return c10::IValue(r);
  if (!std::isfinite(r) || std::fabs(r) > 9.0e18) return std::nullopt;
  return c10::IValue(static_cast<int64_t>(r));
}

// f(a, b, all_int) on two numbers (ints, floats, bools; all_int: none a float), f(a, all_int) on one.
template <typename F>
Folded on_two(const Values& xs, F f) {
  auto a = xs.size() == 2 ? num(xs[0]) : std::nullopt, b = xs.size() == 2 ? num(xs[1]) : std::nullopt;
  if (!a || !b) return std::nullopt;
  return f(*a, *b, is_int_like(xs[0]) && is_int_like(xs[1]));
}
template <typename F>
Folded on_one(const Values& xs, F f) {
  auto a = xs.size() == 1 ? num(xs[0]) : std::nullopt;
  return a ? f(*a, is_int_like(xs[0])) : std::nullopt;
}

Folded fold_bits(const Values& xs, int64_t (*f)(int64_t, int64_t)) {
  return on_two(xs, [&](double a, double b, bool all_int) -> Folded {
    if (!all_int) return std::nullopt;
    int64_t r = f(static_cast<int64_t>(a), static_cast<int64_t>(b));
    if (xs[0].isBool() && xs[1].isBool()) return c10::IValue(r != 0);
    return c10::IValue(r);
  });
}

template <bool all>  // all(xs) / any(xs) of a list of numbers
Folded fold_all_any(const Values& xs) {
  auto e = xs.size() == 1 ? elements(xs[0]) : std::nullopt;
  if (!e) return std::nullopt;
  bool every = true, some = false;
  for (const auto& x : *e) {
    auto v = num(x);
    if (!v) return std::nullopt;
    every = every && *v != 0;
    some = some || *v != 0;
  }
  return c10::IValue(all ? every : some);
}

Folded fold_contains(const Values& xs) {
  if (xs.size() != 2) return std::nullopt;
  if (xs[0].isString() && xs[1].isString())
    return c10::IValue(xs[0].toStringRef().find(xs[1].toStringRef()) != std::string::npos);
  auto e = elements(xs[0]);
  if (!e) return std::nullopt;
  bool found = false;
  for (const auto& x : *e) found = found || equal_values(x, xs[1]);
  return c10::IValue(found);
}

Folded fold_find(const Values& xs) {
  if (xs.size() < 2 || !xs[0].isString() || !xs[1].isString()) return std::nullopt;
  const std::string& h = xs[0].toStringRef();
  int64_t start = xs.size() > 2 && xs[2].isInt() ? xs[2].toInt() : 0;
  auto at = h.find(xs[1].toStringRef(), static_cast<size_t>(std::max<int64_t>(0, start)));
  return c10::IValue(at == std::string::npos ? int64_t(-1) : static_cast<int64_t>(at));
}

Folded fold_str(const Values& xs) {
  if (xs.size() != 1) return std::nullopt;
  if (xs[0].isDevice()) return c10::IValue(xs[0].toDevice().str());
  if (xs[0].isString()) return xs[0];
  return std::nullopt;
}

Folded fold_len(const Values& xs) {
  if (xs.size() != 1) return std::nullopt;
  if (auto e = elements(xs[0])) return c10::IValue(static_cast<int64_t>(e->size()));
  if (xs[0].isString()) return c10::IValue(static_cast<int64_t>(xs[0].toStringRef().size()));
  return std::nullopt;
}

Folded fold_not(const Values& xs) {
  if (xs.size() != 1) return std::nullopt;
  if (xs[0].isString()) return c10::IValue(xs[0].toStringRef().empty());
  if (auto x = num(xs[0])) return c10::IValue(*x == 0);
  return std::nullopt;
}

bool three_ints(const Values& xs) {
  return xs.size() == 3 && xs[0].isInt() && xs[1].isInt() && xs[2].isInt();
}

Folded fold_range_length(const Values& xs) {
  if (!three_ints(xs)) return std::nullopt;
  int64_t lo = xs[0].toInt(), hi = xs[1].toInt(), step = xs[2].toInt();
  if (step == 0) return std::nullopt;
  return c10::IValue(step > 0 ? (hi > lo ? (hi - lo + step - 1) / step : 0)
                              : (lo > hi ? (lo - hi - step - 1) / -step : 0));
}

Folded fold_derive_index(const Values& xs) {
  if (!three_ints(xs)) return std::nullopt;
  return c10::IValue(xs[1].toInt() + xs[0].toInt() * xs[2].toInt());
}

template <bool eq>  // eq / ne of two known values
Folded fold_equal(const Values& xs) {
  if (xs.size() != 2) return std::nullopt;
  return c10::IValue(equal_values(xs[0], xs[1]) == eq);
}

// Python's arithmetic, comparisons, casts and logic on known values, by op name (aten:: or prim::, without
// it); nullopt when an operand does not fit (a division by zero, a float where ints are asked).
// Python's arithmetic and comparisons on two numbers.
void add_two_number_folds(std::unordered_map<std::string, Fold>& r) {
  using B = bool;
  const std::pair<const char*, Fold> rows[] = {
      {"add",
       [](const Values& x) {
         return on_two(x, [](double a, double b, B i) { return fold_number(a + b, i); });
       }},
      {"sub",
       [](const Values& x) {
         return on_two(x, [](double a, double b, B i) { return fold_number(a - b, i); });
       }},
      {"mul",
       [](const Values& x) {
         return on_two(x, [](double a, double b, B i) { return fold_number(a * b, i); });
       }},
      {"div",
       [](const Values& x) {
         return on_two(
             x, [](double a, double b, B) { return b != 0 ? fold_number(a / b, false) : std::nullopt; });
       }},
      {"floordiv",
       [](const Values& x) {
         return on_two(x, [](double a, double b, B i) {
           return b != 0 ? fold_number(std::floor(a / b), i) : std::nullopt;
         });
       }},
      {"remainder",
       [](const Values& x) {
         return on_two(x, [](double a, double b, B i) {
           return b != 0 ? fold_number(a - std::floor(a / b) * b, i) : std::nullopt;
         });
       }},
      {"pow",
       [](const Values& x) {
         return on_two(x, [](double a, double b, B i) { return fold_number(std::pow(a, b), i && b >= 0); });
       }},
      {"lt", [](const Values& x) { return on_two(x, [](double a, double b, B) { return Folded(a < b); }); }},
      {"gt", [](const Values& x) { return on_two(x, [](double a, double b, B) { return Folded(a > b); }); }},
      {"le", [](const Values& x) { return on_two(x, [](double a, double b, B) { return Folded(a <= b); }); }},
      {"ge", [](const Values& x) { return on_two(x, [](double a, double b, B) { return Folded(a >= b); }); }},
      {"min",
       [](const Values& x) {
         return on_two(x, [](double a, double b, B i) { return fold_number(std::min(a, b), i); });
       }},
      {"max",
       [](const Values& x) {
         return on_two(x, [](double a, double b, B i) { return fold_number(std::max(a, b), i); });
       }},
      {"__and__", [](const Values& x) { return fold_bits(x, [](int64_t a, int64_t b) { return a & b; }); }},
      {"__or__", [](const Values& x) { return fold_bits(x, [](int64_t a, int64_t b) { return a | b; }); }},
      {"__xor__", [](const Values& x) { return fold_bits(x, [](int64_t a, int64_t b) { return a ^ b; }); }},
  };
  for (const auto& [op, f] : rows) r[op] = f;
}

// Python's math and casts on one number.
void add_one_number_folds(std::unordered_map<std::string, Fold>& r) {
  using B = bool;
  const std::pair<const char*, Fold> rows[] = {
      {"neg", [](const Values& x) { return on_one(x, [](double a, B i) { return fold_number(-a, i); }); }},
      {"abs",
       [](const Values& x) { return on_one(x, [](double a, B i) { return fold_number(std::fabs(a), i); }); }},
      {"sqrt",
       [](const Values& x) {
         return on_one(x, [](double a, B) { return fold_number(std::sqrt(a), false); });
       }},
      {"floor",
       [](const Values& x) {
         return on_one(x, [](double a, B) { return fold_number(std::floor(a), true); });
       }},
      {"ceil",
       [](const Values& x) {
         return on_one(x, [](double a, B) { return fold_number(std::ceil(a), true); });
       }},
      {"round",
       [](const Values& x) {
         return on_one(x, [](double a, B) { return fold_number(std::nearbyint(a), true); });
       }},
      {"trunc",
       [](const Values& x) {
         return on_one(x, [](double a, B) { return fold_number(std::trunc(a), true); });
       }},
      {"exp",
       [](const Values& x) {
         return on_one(x, [](double a, B) { return fold_number(std::exp(a), false); });
       }},
      {"log",
       [](const Values& x) {
         return on_one(x, [](double a, B) { return fold_number(std::log(a), false); });
       }},
      {"Float", [](const Values& x) { return on_one(x, [](double a, B) { return fold_number(a, false); }); }},
      {"Bool", [](const Values& x) { return on_one(x, [](double a, B) { return Folded(a != 0); }); }},
      {"ScalarImplicit", [](const Values& x) { return on_one(x, [&](double, B) { return Folded(x[0]); }); }},
  };
  for (const auto& [op, f] : rows) r[op] = f;
}

// Python's arithmetic, comparisons, casts and logic on known values, by op name (aten:: or prim::, without
// it); nullopt when an operand does not fit (a division by zero, a float where ints are asked).
const std::unordered_map<std::string, Fold>& known_folds() {
  static const auto m = [] {
    std::unordered_map<std::string, Fold> r = {
        {"eq", fold_equal<true>},
        {"ne", fold_equal<false>},
        {"__contains__", fold_contains},
        {"all", fold_all_any<true>},
        {"any", fold_all_any<false>},
        {"find", fold_find},
        {"str", fold_str},
        {"len", fold_len},
        {"__not__", fold_not},
        {"__range_length", fold_range_length},
        {"__derive_index", fold_derive_index},
    };
    add_two_number_folds(r);
    add_one_number_folds(r);
    const std::pair<const char*, const char*> same[] = {{"floor_divide", "floordiv"},
                                                        {"fmod", "remainder"},
                                                        {"Int", "trunc"},
                                                        {"IntImplicit", "trunc"},
                                                        {"FloatImplicit", "Float"}};
    for (const auto& [alias, op] : same) r[alias] = r.at(op);
    return r;
  }();
  return m;
}

}  // namespace

// Python arithmetic, comparison and logic on values all known at import (shape constants, attributes).
bool Lowerer::fold_known(tj::Node* n, const std::string& op) {
  auto fold = known_folds().find(op);
  if (fold == known_folds().end()) return false;
  // Int-list equality on sizes the shape pass computed (`target.size() == input.size()`, the size check of
  // F.mse_loss and the other pointwise losses): a bool, so the warning branch it guards resolves.
  if ((fold->second == fold_equal<true> || fold->second == fold_equal<false>)&&n->inputs().size() == 2 &&
      n->outputs().size() == 1 && n->output()->type()->kind() == c10::TypeKind::BoolType &&
      (get(n->input(0)).kind == JV::IntsIR || get(n->input(1)).kind == JV::IntsIR)) {
    auto int_list = [&](const JV& j) -> std::optional<std::vector<int64_t>> {
      if (j.kind != JV::IntsIR) return known_ints(j);
      const auto& v = facts(j.ir);
      if (!v.data || v.data->is_float || !v.shape.rank_known || v.shape.rank() != 1) return std::nullopt;
      std::vector<int64_t> r;
      for (const auto& d : v.data->ints) {
        if (!d.is_known()) return std::nullopt;
        r.push_back(d.value());
      }
      return r;
    };
    auto a = int_list(get(n->input(0))), b = int_list(get(n->input(1)));
    if (!a || !b) return false;
    set_known(n->output(), c10::IValue((*a == *b) == (fold->second == fold_equal<true>)));
    return true;
  }
  std::vector<c10::IValue> xs;
  for (auto* i : n->inputs()) {
    auto x = known_iv(get(i));
    if (!x) return false;
    xs.push_back(*x);
  }
  if (n->outputs().size() != 1 || n->output()->type()->cast<c10::TensorType>()) return false;
  auto r = fold->second(xs);
  if (r) set_known(n->output(), *r);
  return r.has_value();
}

// Facts of the run the analysis stands for: eval mode, gradients off (torch.no_grad / inference), CPU,
// no autocast, strided dense tensors, running in the TorchScript interpreter (torch.jit.is_scripting()
// is true there). Parameters require grad; computed tensors do not. Tensor dtypes from the shape pass.
std::optional<c10::IValue> Lowerer::facts_value(tj::Node* n, const std::string& kind) {
  auto tensor_ir = [&](size_t i) -> int {
    const JV& j = in(n, i);
    return j.kind == JV::Tensor || j.kind == JV::ScalarIR || j.kind == JV::IntsIR ? j.ir : -1;
  };
  if (kind == "prim::device") return c10::IValue(c10::Device(c10::kCPU));
  if (kind == "prim::layout") return c10::IValue(static_cast<int64_t>(c10::kStrided));
  if (kind == "prim::is_cuda" || kind == "prim::is_nested" || kind == "prim::is_sparse" ||
      kind == "prim::is_sparse_csr" || kind == "prim::is_mkldnn" || kind == "prim::is_quantized" ||
      kind == "prim::is_meta" || kind == "prim::is_xpu" || kind == "prim::is_mps" ||
      kind == "prim::is_vulkan" || kind == "prim::is_ort" || kind == "prim::is_ipu" ||
      kind == "aten::is_grad_enabled" || kind == "aten::is_autocast_enabled" ||
      kind == "aten::is_autocast_cpu_enabled" || kind == "aten::_is_any_autocast_enabled" ||
      kind == "prim::is_tracing" || kind == "aten::is_tracing" || kind == "aten::has_torch_function" ||
      kind == "aten::is_inference_mode_enabled")
    return c10::IValue(false);
  if (kind == "aten::is_scripting") return c10::IValue(true);
  if (kind == "prim::requires_grad") {
    int ir = tensor_ir(0);
    return c10::IValue(ir >= 0 && g_.values[ir].is_initializer);
  }
  if (kind == "prim::dtype" || kind == "aten::is_floating_point" || kind == "aten::is_complex") {
    int ir = tensor_ir(0);
    if (ir < 0) return std::nullopt;
    DType t = facts(ir).dtype;
    if (t == DType::Undefined) return std::nullopt;
    if (kind == "aten::is_floating_point") return c10::IValue(is_float(t));
    if (kind == "aten::is_complex") return c10::IValue(t == DType::Complex64 || t == DType::Complex128);
    return c10::IValue(static_cast<int64_t>(scalar_type_of(t)));
  }
  return std::nullopt;
}

// A dict value: a dict built in forward, or a known dict (a module attribute such as
// IntermediateLayerGetter's return_layers) as entries.
std::optional<JV> as_dict(const JV& j) {
  if (j.kind == JV::Dict) return j;
  if (j.kind != JV::Known || !iv_of(j).isGenericDict()) return std::nullopt;
  JV d;
  d.kind = JV::Dict;
  d.dict = std::make_shared<std::vector<std::pair<Known, JV>>>();
  const c10::IValue dict = iv_of(j);
  for (const auto& kv : dict.toGenericDict()) d.dict->emplace_back(to_known(kv.key()), known_jv(kv.value()));
  return d;
}

// A module attribute: a submodule, a parameter or buffer, a list/tuple holding tensors (nn.LSTM's
// _flat_weights), or a plain value.
JV Lowerer::attribute_value(const std::string& path, const c10::IValue& a) {
  if (a.isObject()) {
    JV j;
    j.kind = JV::Module;
    j.obj = a.toObject();
    j.path = path;
    return j;
  }
  if (a.isTensor()) return JV::of_ir(param_value(path, a.toTensor()));
  if ((a.isList() || a.isTuple()) && !a.isIntList() && !a.isDoubleList() && !a.isBoolList()) {
    auto xs = a.isList() ? a.toListRef().vec() : a.toTupleRef().elements().vec();
    bool any_tensor = false;
    for (const auto& x : xs) any_tensor = any_tensor || x.isTensor() || x.isObject();
    if (any_tensor) {
      std::vector<JV> items;
      for (size_t i = 0; i < xs.size(); ++i)
        items.push_back(attribute_value(path + "." + std::to_string(i), xs[i]));
      return JV::list(std::move(items));
    }
  }
  return known_jv(a);
}

bool Lowerer::lower_prim(tj::Node* n, const std::string& kind) {
  const tj::Value* o = n->outputs().empty() ? nullptr : n->output(0);
  if (kind == "prim::Constant") {
    auto iv = tj::toIValue(n->output());
    if (!iv) return true;
    if (iv->isTensor())
      set_ir(o, tensor_const(tensor_of(iv->toTensor())));
    else
      set_known(o, *iv);
    return true;
  }
  if (kind == "prim::GetAttr") {
    JV& obj = get(n->input(0));
    if (obj.kind != JV::Module) return false;
    std::string name = n->s(c10::attr::name);
    auto a = std::any_cast<c10::intrusive_ptr<c10::ivalue::Object>>(obj.obj)->getAttr(name);
    std::string path = obj.path.empty() ? name : obj.path + "." + name;
    set(o, attribute_value(path, a));
    return true;
  }
  if (kind == "prim::ListConstruct" || kind == "prim::TupleConstruct") {
    std::vector<JV> xs;
    for (auto* i : n->inputs()) xs.push_back(get(i));
    set(o, JV::list(std::move(xs)));
    return true;
  }
  if (kind == "prim::ListUnpack" || kind == "prim::TupleUnpack") return lower_unpack(n), true;
  if (kind == "prim::TupleIndex" || kind == "aten::__getitem__" || kind == "prim::ListIndex")
    return lower_getitem(n);
  if (kind == "prim::NumToTensor" || kind == "aten::Int" || kind == "aten::Float" || kind == "aten::Bool" ||
      kind == "aten::ScalarImplicit" || kind == "aten::IntImplicit" || kind == "aten::FloatImplicit" ||
      kind == "prim::unchecked_cast" || kind == "prim::data" || kind == "aten::list") {
    JV j = get(n->input(0));
    if (j.kind == JV::Known || j.kind == JV::Tensor || j.kind == JV::ScalarIR || j.kind == JV::IntsIR ||
        j.kind == JV::List || j.kind == JV::Dict) {
      if (kind == "aten::list" && j.kind == JV::List) j = JV::list(*j.items);  // a copy
      set(o, j);
      return true;
    }
    return false;
  }
  if (kind == "aten::format") {
    // The message of a check (`why_not_fast_path = "... {}".format(x)`): only its emptiness is ever tested,
    // so the template with each {} replaced by the argument when known, else by "?".
    const JV& f = get(n->input(0));
    if (f.kind != JV::Known || !iv_of(f).isString()) return false;
    std::string t = iv_of(f).toStringRef(), r;
    size_t arg = 1;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t.compare(i, 2, "{}") == 0) {
        auto v = arg < n->inputs().size() ? known_iv(get(n->input(arg))) : std::nullopt;
        r += v && v->isInt() ? std::to_string(v->toInt()) : v && v->isString() ? v->toStringRef() : "?";
        ++arg, ++i;
      } else {
        r += t[i];
      }
    }
    return set_known(o, c10::IValue(r)), true;
  }
  if (kind == "aten::warn" || kind == "prim::RaiseException" || kind == "prim::Print" ||
      kind == "prim::SetAttr" || kind == "prim::Uninitialized")
    return true;  // no value (a message, a raise, or a value only used where forward raises)
  if (auto f = facts_value(n, kind)) return set_known(o, *f), true;
  if (kind == "prim::isinstance") {
    const auto& types = n->tys(c10::attr::types);
    const auto t = n->input(0)->type();
    bool any = false, all_known = true;
    for (const auto& ty : types) {
      if (t->isSubtypeOf(*ty))
        any = true;
      else if (ty->isSubtypeOf(*t))
        all_known = false;  // t is wider: the runtime value decides
    }
    if (!any && !all_known) return false;
    return set_known(o, c10::IValue(any)), true;
  }
  if (kind == "aten::size") {
    JV x = get(n->input(0));
    if (x.kind != JV::Tensor) return false;
    int shape = emit("Shape", {x.ir}, {n->inputs().size() == 2 ? tmp(o, "shape") : ir_name(o)})[0];
    if (n->inputs().size() == 1) return set_ir(o, shape, JV::IntsIR), true;
    int r = emit("Gather", {shape, as_ir(get(n->input(1)))}, {ir_name(o)}, {{"axis", ai(0)}})[0];
    return set_ir(o, r, JV::ScalarIR), true;
  }
  if (kind == "aten::dim" || kind == "aten::numel") {
    JV x = get(n->input(0));
    if (x.kind != JV::Tensor) return false;
    if (kind == "aten::numel") return set_ir(o, emit("Size", {x.ir}, {ir_name(o)})[0], JV::ScalarIR), true;
    int shape = emit("Shape", {x.ir}, {tmp(o, "shape")})[0];
    return set_ir(o, emit("Size", {shape}, {ir_name(o)})[0], JV::ScalarIR), true;
  }
  if (kind == "aten::len") {
    JV l = get(n->input(0));
    if (l.kind == JV::List) return set_known(o, c10::IValue(int64_t(l.items->size()))), true;
    if (auto d = as_dict(l)) return set_known(o, c10::IValue(int64_t(d->dict->size()))), true;
    if (l.kind == JV::Known && iv_of(l).isList())
      return set_known(o, c10::IValue(int64_t(iv_of(l).toListRef().size()))), true;
    if (l.kind == JV::IntsIR) return set_ir(o, emit("Size", {l.ir}, {ir_name(o)})[0], JV::ScalarIR), true;
    if (l.kind == JV::Known && iv_of(l).isTuple())
      return set_known(o, c10::IValue(int64_t(iv_of(l).toTupleRef().elements().size()))), true;
    if (l.kind == JV::Tensor) {  // len(tensor): its first dim
      int shape = emit("Shape", {l.ir}, {tmp(o, "shape")})[0];
      return set_ir(o, emit("Gather", {shape, const_int(0)}, {ir_name(o)}, {{"axis", ai(0)}})[0],
                    JV::ScalarIR),
             true;
    }
    return false;
  }
  if (kind == "aten::__is__" || kind == "aten::__isnot__") {
    // None-ness is known for every value the lowering knows; two tensors are the same object when they
    // are the same IR value (distinct forward inputs are distinct tensors).
    const JV &a = get(n->input(0)), &b = get(n->input(1));
    auto none_state = [](const JV& j) -> std::optional<bool> {
      if (j.kind == JV::Known) return iv_of(j).isNone();
      if (j.kind == JV::Unknown) return std::nullopt;
      return false;
    };
    auto na = none_state(a), nb = none_state(b);
    std::optional<bool> same;
    if (na && nb && (*na || *nb))
      same = *na && *nb;
    else if (na && nb && a.ir >= 0 && b.ir >= 0)
      same = a.ir == b.ir;
    if (!same) return false;
    return set_known(o, c10::IValue(kind == "aten::__is__" ? *same : !*same)), true;
  }
  if (kind == "aten::__not__" || kind == "aten::__and__" || kind == "aten::__or__") {
    // On an IR bool (a comparison of sizes): Not / And / Or nodes the shape pass folds.
    if (n->outputs().size() != 1 || n->output()->type()->cast<c10::TensorType>()) return false;
    std::vector<int> ins;
    bool all_known = true;
    for (auto* i : n->inputs()) {
      const JV& j = get(i);
      if (j.kind != JV::ScalarIR && j.kind != JV::Known) return false;
      all_known = all_known && j.kind == JV::Known;
    }
    if (all_known) return false;  // constants: fold_known computes the bool
    for (auto* i : n->inputs()) ins.push_back(as_ir(get(i)));
    std::string op = kind == "aten::__not__" ? "Not" : kind == "aten::__and__" ? "And" : "Or";
    auto cast_bool = [&](int v) {
      return emit("Cast", {v}, {tmp(o, "bool")}, {{"to", ai(int64_t(DType::Bool))}})[0];
    };
    for (auto& x : ins) x = cast_bool(x);
    return set_ir(o, emit(op, ins, {ir_name(o)})[0], JV::ScalarIR), true;
  }
  // Lists and dicts.
  if (kind == "aten::append" || kind == "aten::insert" || kind == "aten::extend") {
    JV& l = get(n->input(0));
    if (l.kind == JV::Known && iv_of(l).isList()) {  // a constant list gets items (every alias is this Value)
      std::vector<JV> xs;
      for (const auto& x : iv_of(l).toListRef().vec()) xs.push_back(known_jv(x));
      l = JV::list(std::move(xs));
    }
    if (l.kind != JV::List) return false;
    if (kind == "aten::append") {
      l.items->push_back(get(n->input(1)));
    } else if (kind == "aten::extend") {
      JV other = get(n->input(1));
      if (other.kind != JV::List) return false;
      std::vector<JV> copy = *other.items;
      l.items->insert(l.items->end(), copy.begin(), copy.end());
    } else {
      auto at = known_int(get(n->input(1)));
      if (!at) return false;
      int64_t sz = static_cast<int64_t>(l.items->size()),
              i = *at < 0 ? std::max<int64_t>(0, *at + sz) : std::min(*at, sz);
      l.items->insert(l.items->begin() + i, get(n->input(2)));
    }
    if (o) set(o, l);
    return true;
  }
  if (kind == "prim::DictConstruct") {  // key0, value0, key1, value1, ...
    JV d;
    d.kind = JV::Dict;
    d.dict = std::make_shared<std::vector<std::pair<Known, JV>>>();
    for (size_t i = 0; i + 1 < n->inputs().size(); i += 2) {
      auto key = known_iv(get(n->input(i)));
      if (!key) return false;
      d.dict->emplace_back(to_known(*key), get(n->input(i + 1)));
    }
    return set(o, d), true;
  }
  if (kind == "prim::max" || kind == "prim::min") {  // of two numbers, or of a list
    const bool is_max = kind == "prim::max";
    if (n->inputs().size() == 1) {
      auto items = list_items(get(n->input(0)));
      if (!items || items->empty()) return false;
      std::optional<double> best;
      bool ints = true;
      for (const auto& it : *items) {
        auto v = known_iv(it);
        if (!v) return false;
        auto x = num(*v);
        if (!x) return false;
        ints = ints && v->isInt();
        best = !best ? *x : is_max ? std::max(*best, *x) : std::min(*best, *x);
      }
      return set_known(o, ints ? c10::IValue(static_cast<int64_t>(*best)) : c10::IValue(*best)), true;
    }
    return fold_known(n, is_max ? "max" : "min");
  }
  if (kind == "aten::dict") {
    JV d;
    d.kind = JV::Dict;
    d.dict = std::make_shared<std::vector<std::pair<Known, JV>>>();
    return set(o, d), true;
  }
  if (kind == "aten::_set_item") {
    JV& d = get(n->input(0));
    auto key = known_iv(get(n->input(1)));
    if (d.kind == JV::List) {  // list[i] = x
      auto i = key && key->isInt() ? std::optional<int64_t>(key->toInt()) : std::nullopt;
      int64_t sz = static_cast<int64_t>(d.items->size());
      if (!i || *i < -sz || *i >= sz) return false;
      (*d.items)[*i < 0 ? *i + sz : *i] = get(n->input(2));
      return true;
    }
    if (d.kind != JV::Dict || !key) return false;
    for (auto& kv : *d.dict)
      if (equal_values(to_ivalue(kv.first), *key)) return kv.second = get(n->input(2)), true;
    d.dict->emplace_back(to_known(*key), get(n->input(2)));
    return true;
  }
  if (kind == "aten::__contains__" && as_dict(get(n->input(0)))) {
    JV d = *as_dict(get(n->input(0)));
    auto key = known_iv(get(n->input(1)));
    if (!key) return false;
    bool found = false;
    for (const auto& kv : *d.dict) found = found || equal_values(to_ivalue(kv.first), *key);
    return set_known(o, c10::IValue(found)), true;
  }
  if (kind == "aten::keys" || kind == "aten::values" || kind == "aten::items") {
    auto dd = as_dict(get(n->input(0)));
    if (!dd) return false;
    const JV& d = *dd;
    std::vector<JV> xs;
    for (const auto& kv : *d.dict) {
      if (kind == "aten::keys")
        xs.push_back(known_jv(kv.first));
      else if (kind == "aten::values")
        xs.push_back(kv.second);
      else
        xs.push_back(JV::list({known_jv(kv.first), kv.second}));
    }
    return set(o, JV::list(std::move(xs))), true;
  }
  if ((kind == "aten::add" || kind == "aten::mul") && n->inputs().size() == 2 && o &&
      o->type()->kind() == c10::TypeKind::ListType) {
    // list + list, list * n
    auto ia = list_items(get(n->input(0)));
    if (!ia) return false;
    if (kind == "aten::add") {
      auto ib = list_items(get(n->input(1)));
      if (!ib) return false;
      ia->insert(ia->end(), ib->begin(), ib->end());
      return set(o, JV::list(*ia)), true;
    }
    auto times = known_int(get(n->input(1)));
    if (!times) return false;
    std::vector<JV> r;
    for (int64_t k = 0; k < *times; ++k) r.insert(r.end(), ia->begin(), ia->end());
    return set(o, JV::list(std::move(r))), true;
  }
  if (kind == "aten::slice" && n->inputs().size() == 4 && o && o->type()->kind() == c10::TypeKind::ListType) {
    // list[start:end:step]
    const JV& l = get(n->input(0));
    auto step = is_none(get(n->input(3))) ? std::optional<int64_t>(1) : known_int(get(n->input(3)));
    if (!step || *step <= 0) return false;
    if (l.kind == JV::IntsIR) {
      int start = is_none(get(n->input(1))) ? const_ints({0}) : pack_ints(get(n->input(1)));
      int end = is_none(get(n->input(2))) ? const_ints({INT64_MAX}) : pack_ints(get(n->input(2)));
      if (start < 0 || end < 0) return false;
      int r = emit("Slice", {l.ir, start, end, const_ints({0}), const_ints({*step})}, {ir_name(o)})[0];
      return set_ir(o, r, JV::IntsIR), true;
    }
    std::vector<JV> xs;
    if (l.kind == JV::List)
      xs = *l.items;
    else if (l.kind == JV::Known && iv_of(l).isList())
      for (const auto& x : iv_of(l).toListRef().vec()) xs.push_back(known_jv(x));
    else
      return false;
    int64_t sz = static_cast<int64_t>(xs.size());
    auto norm = [&](const JV& j, int64_t dflt) -> std::optional<int64_t> {
      if (is_none(j)) return dflt;
      auto v = known_int(j);
      if (!v) return std::nullopt;
      int64_t x = *v < 0 ? *v + sz : *v;
      return std::clamp<int64_t>(x, 0, sz);
    };
    auto s = norm(get(n->input(1)), 0), e = norm(get(n->input(2)), sz);
    if (!s || !e) return false;
    std::vector<JV> r;
    for (int64_t i = *s; i < *e; i += *step) r.push_back(xs[i]);
    return set(o, JV::list(std::move(r))), true;
  }
  return false;
}

void Lowerer::lower_unpack(tj::Node* n) {
  JV src = get(n->input(0));
  size_t count = n->outputs().size();
  if (src.kind == JV::List && src.items->size() == count) {
    for (size_t i = 0; i < count; ++i) env_[av(n->outputs()[i])] = (*src.items)[i];
    return;
  }
  if (src.kind == JV::Known && (iv_of(src).isList() || iv_of(src).isTuple())) {
    auto e = iv_of(src).isList() ? iv_of(src).toListRef().vec() : iv_of(src).toTupleRef().elements().vec();
    if (e.size() == count) {
      for (size_t i = 0; i < count; ++i) set_known(n->outputs()[i], e[i]);
      return;
    }
  }
  if (src.kind == JV::IntsIR) {
    for (size_t i = 0; i < count; ++i) {
      int r = emit("Gather", {src.ir, const_int(static_cast<int64_t>(i))}, {ir_name(n->outputs()[i])},
                   {{"axis", ai(0)}})[0];
      set_ir(n->outputs()[i], r, JV::ScalarIR);
    }
    return;
  }
  if (src.kind == JV::Split) {
    // torch.split(x, s, dim) / chunk: `count` pieces; ONNX Split with num_outputs (last piece smaller
    // when the dim does not divide), as torch.onnx exports it.
    std::vector<std::string> outs;
    for (auto* o : n->outputs()) outs.push_back(ir_name(o));
    auto res = emit("Split", {src.ir}, outs,
                    {{"axis", ai(src.split_dim)}, {"num_outputs", ai(static_cast<int64_t>(count))}});
    for (size_t i = 0; i < count; ++i) set_ir(n->outputs()[i], res[i]);
    return;
  }
  keep_unsupported(n);
}

bool Lowerer::lower_getitem(tj::Node* n) {
  const tj::Value* o = n->output();
  JV lst = get(n->input(0));
  if (auto d = as_dict(lst)) lst = *d;
  if (lst.kind == JV::Dict) {
    auto key = known_iv(get(n->input(1)));
    if (!key) return false;
    for (const auto& kv : *lst.dict)
      if (equal_values(to_ivalue(kv.first), *key)) return set(o, kv.second), true;
    return false;
  }
  auto idx = known_int(get(n->input(1)));
  if (idx && lst.kind == JV::List) {
    int64_t i = *idx < 0 ? *idx + static_cast<int64_t>(lst.items->size()) : *idx;
    if (i >= 0 && i < static_cast<int64_t>(lst.items->size())) return set(o, (*lst.items)[i]), true;
  }
  if (idx && lst.kind == JV::Known && (iv_of(lst).isList() || iv_of(lst).isTuple())) {
    auto l = iv_of(lst).isList() ? iv_of(lst).toListRef().vec() : iv_of(lst).toTupleRef().elements().vec();
    int64_t i = *idx < 0 ? *idx + static_cast<int64_t>(l.size()) : *idx;
    if (i >= 0 && i < static_cast<int64_t>(l.size())) return set_known(o, l[i]), true;
  }
  if (lst.kind == JV::IntsIR) {
    int r = emit("Gather", {lst.ir, as_ir(get(n->input(1)))}, {ir_name(o)}, {{"axis", ai(0)}})[0];
    return set_ir(o, r, JV::ScalarIR), true;
  }
  return false;
}

}  // namespace flopwise
