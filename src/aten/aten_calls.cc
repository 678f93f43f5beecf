// src/aten/aten_calls.cc — recorded aten calls (a PyTorch trace's cpu_ops with record_shapes, flopwise/
// aten_call.h) lowered without LibTorch: the overload of torch 2.14's schemas whose arguments fit the record,
// its tensors as inputs of the recorded shapes and dtypes, scalars and lists from the recorded concrete
// values, the rest from the schema's defaults; then the aten table, as for a .pt or .pt2's calls.
#include <cstdlib>
#include <deque>
#include <stdexcept>

#include "aten_table.h"
#include "flopwise/aten_call.h"
#include "flopwise/aten_lower.h"
#include "flopwise/aten_schema.h"

namespace flopwise {

namespace {

bool is_tensor_record(const std::string& rec) {
  return !rec.empty() && rec != "Scalar" && rec != "ScalarList" && rec != "TensorList";
}
bool is_scalar_kind(AtenType::Kind k) {
  return k == AtenType::Int || k == AtenType::Float || k == AtenType::Bool || k == AtenType::Number;
}

// Whether schema argument `a` can take what the trace recorded as `rec`.
bool fits(const AtenArg& a, const std::string& rec) {
  const AtenType& t = a.type;
  if (rec.empty()) return t.optional || a.default_value.has_value() || t.kind != AtenType::Tensor;
  if (rec == "TensorList") return t.kind == AtenType::List && t.elem == AtenType::Tensor;
  if (rec == "ScalarList") return t.kind == AtenType::List && is_scalar_kind(t.elem);
  if (rec == "Scalar") return is_scalar_kind(t.kind);
  return t.kind == AtenType::Tensor;
}

std::optional<Known> scalar_of(const std::string& text, AtenType::Kind k) {
  if (text.empty()) return std::nullopt;
  if (text == "True" || text == "False" || text == "true" || text == "false") {
    bool b = text[0] == 'T' || text[0] == 't';
    return k == AtenType::Int ? Known::of_int(b) : Known::of_bool(b);
  }
  char* end = nullptr;
  bool integral = text.find_first_of(".eEnN") == std::string::npos;  // nan, inf, 1e-05, 1.
  if (integral && k != AtenType::Float) {
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (end == text.c_str() || *end) return std::nullopt;
    return k == AtenType::Bool ? Known::of_bool(v != 0) : Known::of_int(v);
  }
  double d = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end) return std::nullopt;
  if (k == AtenType::Int) {
    constexpr double kTwo63 = 9223372036854775808.0;  // nan, inf and past int64 are no int (nor castable)
    if (!(d >= -kTwo63 && d < kTwo63) || d != static_cast<double>(static_cast<int64_t>(d)))
      return std::nullopt;
    return Known::of_int(static_cast<int64_t>(d));
  }
  return Known::of_double(d);
}

// "[2, 2]", "[True, False]", "[0.5, 1.]" as a list of `elem`.
std::optional<Known> list_of(const std::string& text, AtenType::Kind elem) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return std::nullopt;
  std::vector<std::string> items;
  std::string cur;
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    char c = text[i];
    if (c == ',')
      items.push_back(cur), cur.clear();
    else if (c != ' ')
      cur += c;
  }
  if (!cur.empty()) items.push_back(cur);
  std::vector<int64_t> ints;
  std::vector<double> doubles;
  std::vector<bool> bools;
  // A Scalar[] (Number) of non-integers is a list of doubles (the _foreach_ ops' step sizes).
  const bool real = elem == AtenType::Number && text.find_first_of(".eE") != std::string::npos;
  const AtenType::Kind k = elem == AtenType::Float || elem == AtenType::Bool ? elem
                           : real                                            ? AtenType::Float
                                                                             : AtenType::Int;
  for (const auto& item : items) {
    auto x = scalar_of(item, k);
    if (!x) return std::nullopt;
    if (k == AtenType::Float)
      doubles.push_back(x->isDouble() ? x->toDouble() : static_cast<double>(x->toInt()));
    else if (k == AtenType::Bool)
      bools.push_back(x->toBool());
    else
      ints.push_back(x->toInt());
  }
  if (k == AtenType::Float) return Known::of_doubles(doubles);
  if (k == AtenType::Bool) return Known::of_bools(bools);
  return Known::of_ints(ints);
}

// The overload whose arguments fit the record one for one; else (a trace of another PyTorch, whose schema
// gained or lost trailing arguments) the one whose first arguments fit, the rest non-tensors on the record's
// side or defaults on the schema's. nullptr when none does.
const AtenSchema* pick_schema(const AtenCall& call, const std::vector<const AtenSchema*>& ops) {
  const size_t nr = call.types.size();
  for (const AtenSchema* s : ops) {
    if (s->args.size() != nr) continue;
    bool ok = true;
    for (size_t i = 0; ok && i < nr; ++i) ok = fits(s->args[i], call.types[i]);
    if (ok) return s;
  }
  for (const AtenSchema* s : ops) {
    size_t ns = s->args.size(), common = std::min(ns, nr);
    bool ok = true;
    for (size_t i = 0; ok && i < common; ++i) ok = fits(s->args[i], call.types[i]);
    for (size_t i = common; ok && i < nr; ++i)
      ok = !is_tensor_record(call.types[i]) && call.types[i] != "TensorList";
    for (size_t i = common; ok && i < ns; ++i) ok = s->args[i].default_value.has_value();
    if (ok) return s;
  }
  return nullptr;
}

// One call as a one-call model: an input per recorded tensor, the call, its tensor results as outputs.
class CallLowerer : public AtenLowerer {
 public:
  explicit CallLowerer(Model& m) : AtenLowerer(m) {}
  void run(const AtenCall& call);

 private:
  std::deque<AtenValue> values_;
  const AtenValue* value(AtenType t) {
    values_.push_back(AtenValue{"v" + std::to_string(values_.size()), t});
    return &values_.back();
  }
  const AtenValue* known(Known k, AtenType t) {
    const AtenValue* v = value(t);
    set_known(v, std::move(k));
    return v;
  }
  const AtenValue* tensor(const std::vector<int64_t>& shape, const std::string& rec);
  const AtenValue* argument(const AtenCall& call, size_t i, const AtenArg* a);
};

const AtenValue* CallLowerer::tensor(const std::vector<int64_t>& shape, const std::string& rec) {
  DType t = trace_dtype(rec);
  if (t == DType::Undefined) throw std::runtime_error("tensor type " + rec + " not known");
  std::vector<Dim> dims;
  for (int64_t x : shape) dims.push_back(x >= 0 ? Dim(x) : Dim::unknown());
  int vi = g_.add_value("x" + std::to_string(g_.inputs.size()));
  g_.values[vi].is_input = true;
  g_.values[vi].dtype = t;
  g_.values[vi].shape = Shape(dims);
  g_.inputs.push_back(vi);
  const AtenValue* v = value(AtenType{AtenType::Tensor});
  set_ir(v, vi);
  return v;
}

// Argument `i` of the record, as schema argument `a` takes it (nullptr: an op the schemas do not know,
// read by position as recorded).
const AtenValue* CallLowerer::argument(const AtenCall& call, size_t i, const AtenArg* a) {
  const std::string rec = i < call.types.size() ? call.types[i] : "";
  const std::string concrete = i < call.concrete.size() ? call.concrete[i] : "";
  const AtenType t = a ? a->type : AtenType{};
  // A list passed but its value not recorded (a trace older than Concrete Inputs) is not taken as its
  // default: a convolution's stride of 2 is not 1. A scalar is (an add's alpha, a sum's keepdim: not the
  // cost).
  auto or_default = [&](std::optional<Known> v, bool list = false) {
    if (v) return known(std::move(*v), t);
    if (!a || !a->default_value || (list && concrete.empty()))
      throw std::runtime_error("argument " + (a ? a->name : std::to_string(i)) + " not recorded");
    return known(*a->default_value, t);
  };
  if (rec.empty()) {  // not recorded (None, a string, a device; or a trace older than Concrete Inputs)
    if (a && !a->default_value && !a->type.optional && a->type.kind != AtenType::Other)
      throw std::runtime_error("argument " + a->name + " not recorded");
    return known(a && a->default_value ? *a->default_value : Known(), t);
  }
  if (rec == "TensorList") {
    // The element types of a TensorList are not recorded one by one: the first tensor argument's, else float.
    std::string et = "float";
    for (const auto& r : call.types)
      if (is_tensor_record(r)) {
        et = r;
        break;
      }
    std::vector<JV> items;
    for (const auto& shape : call.dims[i]) items.push_back(get(tensor(shape, et)));
    const AtenValue* v = value(t);
    set(v, JV::list(std::move(items)));
    return v;
  }
  if (rec == "ScalarList") {
    AtenType::Kind elem = a                                                    ? a->type.elem
                          : concrete.find_first_of("TF") != std::string::npos  ? AtenType::Bool
                          : concrete.find_first_of(".eE") != std::string::npos ? AtenType::Float
                                                                               : AtenType::Int;
    return or_default(list_of(concrete, elem), true);
  }
  if (rec == "Scalar") return or_default(scalar_of(concrete, a ? a->type.kind : AtenType::Number));
  const auto& shapes = call.dims[i];
  return tensor(shapes.empty() ? std::vector<int64_t>{} : shapes[0], rec);
}

void CallLowerer::run(const AtenCall& call) {
  if (call.op.rfind("aten::", 0) != 0 && !aten_table().find(call.op))  // a library op without a record
    throw std::runtime_error(call.op.find("::") != std::string::npos
                                 ? "no cost rule (library op " + call.op + ")"
                                 : "not an aten op");
  if (call.dims.size() != call.types.size())
    throw std::runtime_error("Input Dims and Input type differ in length");
  const auto& ops = aten_schemas().overloads(call.op);
  const AtenSchema* s = pick_schema(call, ops);
  if (!s && !ops.empty()) throw std::runtime_error("no overload fits the recorded arguments");
  AtenNode n;
  n.kind = call.op;
  const size_t nargs = s ? s->args.size() : call.types.size();
  for (size_t i = 0; i < nargs; ++i) n.ins.push_back(argument(call, i, s ? &s->args[i] : nullptr));
  if (s) {
    n.arg_names = &s->arg_names;
    for (const AtenType& r : s->returns) n.outs.push_back(value(r));
  } else {
    n.outs.push_back(value(AtenType{AtenType::Tensor}));
  }
  if (!lower_aten(n)) {  // kept as a node of its own: "no cost rule" for it
    std::vector<int> ins;
    for (const AtenValue* v : n.ins)
      if (get(v).kind == JV::Tensor) ins.push_back(get(v).ir);
    std::vector<std::string> outs;
    for (size_t k = 0; k < n.outs.size(); ++k) outs.push_back("y" + std::to_string(k));
    auto res = emit(call.op.substr(call.op.rfind("::") + 2), ins, outs, {}, "aten", 1);
    for (size_t k = 0; k < n.outs.size(); ++k) set_ir(n.outs[k], res[k]);
  }
  for (const AtenValue* o : n.outs)
    if (o->type.is_tensor() && get(o).kind == JV::Tensor && get(o).ir >= 0) g_.outputs.push_back(get(o).ir);
}

}  // namespace

std::vector<Model> lower_aten_calls(const std::vector<AtenCall>& calls, std::vector<std::string>* why) {
  std::vector<Model> out(calls.size());
  why->assign(calls.size(), "");
  for (size_t i = 0; i < calls.size(); ++i) {
    Model& m = out[i];
    m.path = calls[i].op;
    m.format = ModelFormat::PytorchTrace;
    m.opsets[""] = kTorchOpset;
    m.opsets["flopwise"] = 1;
    m.graph.name = calls[i].op;
    try {
      CallLowerer(m).run(calls[i]);
    } catch (const std::exception& e) {
      (*why)[i] = e.what();
      m = Model();
    }
  }
  return out;
}

}  // namespace flopwise
