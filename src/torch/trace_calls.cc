// src/torch/trace_calls.cc — recorded aten calls lowered through the aten table (torch_plugin.h,
// flopwise_torch_lower_calls): a PyTorch trace's op, with its recorded argument types, shapes and concrete
// scalars, becomes a one-node TorchScript graph (the overload whose schema fits the record), and the lowering
// that imports a .pt's ops turns it into IR nodes, so a trace's ops are costed by the very rules of .pt
// files.
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <cstdlib>
#include <sstream>

#include "flopwise/aten_call.h"
#include "lowerer.h"
#include "torch_plugin.h"
#include "torch_types.h"

namespace flopwise {
namespace {

using c10::IValue;
using c10::TypeKind;

bool is_tensor_type(const std::string& rec) {
  return !rec.empty() && rec != "Scalar" && rec != "ScalarList" && rec != "TensorList";
}

c10::TypePtr unwrap_optional(const c10::TypePtr& t, bool* optional) {
  if (t->kind() == TypeKind::OptionalType) {
    *optional = true;
    return t->castRaw<c10::OptionalType>()->getElementType();
  }
  *optional = false;
  return t;
}

// Whether schema argument `a` can take what the trace recorded as `rec`.
bool fits(const c10::Argument& a, const std::string& rec) {
  bool opt = false;
  c10::TypePtr t = unwrap_optional(a.type(), &opt);
  TypeKind k = t->kind();
  if (rec.empty()) return opt || a.default_value().has_value() || k != TypeKind::TensorType;
  if (rec == "TensorList") {
    if (k != TypeKind::ListType) return false;
    bool eopt = false;
    return unwrap_optional(t->castRaw<c10::ListType>()->getElementType(), &eopt)->kind() ==
           TypeKind::TensorType;
  }
  if (rec == "ScalarList") {
    if (k != TypeKind::ListType) return false;
    TypeKind e = t->castRaw<c10::ListType>()->getElementType()->kind();
    return e == TypeKind::IntType || e == TypeKind::FloatType || e == TypeKind::BoolType ||
           e == TypeKind::SymIntType || e == TypeKind::NumberType;
  }
  if (rec == "Scalar")
    return k == TypeKind::IntType || k == TypeKind::FloatType || k == TypeKind::BoolType ||
           k == TypeKind::NumberType || k == TypeKind::SymIntType || k == TypeKind::ComplexType;
  return k == TypeKind::TensorType;  // a dtype name: a tensor
}

std::optional<IValue> scalar_of(const std::string& text, TypeKind k) {
  if (text.empty()) return std::nullopt;
  if (text == "True" || text == "False" || text == "true" || text == "false") {
    bool b = text[0] == 'T' || text[0] == 't';
    if (k == TypeKind::IntType || k == TypeKind::SymIntType) return IValue(static_cast<int64_t>(b));
    return IValue(b);
  }
  char* end = nullptr;
  bool integral = text.find_first_of(".eEnN") == std::string::npos;  // nan, inf, 1e-05, 1.
  if (integral && k != TypeKind::FloatType) {
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (end == text.c_str() || *end) return std::nullopt;
    if (k == TypeKind::BoolType) return IValue(v != 0);
    return IValue(static_cast<int64_t>(v));
  }
  double d = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end) return std::nullopt;
  if (k == TypeKind::IntType || k == TypeKind::SymIntType) {
    if (d != static_cast<double>(static_cast<int64_t>(d))) return std::nullopt;
    return IValue(static_cast<int64_t>(d));
  }
  return IValue(d);
}

// "[2, 2]", "[True, False]", "[0.5, 1.]" as the list type `elem` of the schema.
std::optional<IValue> list_of(const std::string& text, TypeKind elem) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return std::nullopt;
  std::vector<std::string> items;
  std::string cur;
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    char c = text[i];
    if (c == ',') {
      items.push_back(cur), cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  if (!cur.empty()) items.push_back(cur);
  // Each item as the element type; the list as the IValue of a list of it.
  auto convert = [&](auto list, TypeKind k, auto get) -> std::optional<IValue> {
    for (const auto& item : items) {
      auto x = scalar_of(item, k);
      if (!x) return std::nullopt;
      list.push_back(get(*x));
    }
    return IValue(std::move(list));
  };
  if (elem == TypeKind::FloatType)
    return convert(std::vector<double>{}, elem, [](const IValue& x) { return x.toDouble(); });
  if (elem == TypeKind::BoolType)
    return convert(c10::List<bool>{}, elem, [](const IValue& x) { return x.toBool(); });
  return convert(std::vector<int64_t>{}, TypeKind::IntType, [](const IValue& x) { return x.toInt(); });
}

// The overload of `call.op` whose arguments fit the record, one for one; nullptr when none does.
const c10::FunctionSchema* pick_schema(const AtenCall& call,
                                       const std::vector<std::shared_ptr<torch::jit::Operator>>& ops) {
  for (const auto& op : ops) {
    const c10::FunctionSchema& s = op->schema();
    if (s.arguments().size() != call.types.size()) continue;
    bool ok = true;
    for (size_t i = 0; ok && i < call.types.size(); ++i) ok = fits(s.arguments()[i], call.types[i]);
    if (ok) return &s;
  }
  // A trace of another PyTorch than this LibTorch: its schema may have gained trailing keyword arguments
  // (scaled_dot_product_attention's enable_gqa), or lost some. The overload whose arguments fit the record's
  // first ones, the rest being non-tensors on the record's side or defaults on the schema's.
  for (const auto& op : ops) {
    const c10::FunctionSchema& s = op->schema();
    size_t ns = s.arguments().size(), nr = call.types.size(), common = std::min(ns, nr);
    bool ok = true;
    for (size_t i = 0; ok && i < common; ++i) ok = fits(s.arguments()[i], call.types[i]);
    for (size_t i = common; ok && i < nr; ++i)
      ok = !is_tensor_type(call.types[i]) && call.types[i] != "TensorList";
    for (size_t i = common; ok && i < ns; ++i) ok = s.arguments()[i].default_value().has_value();
    if (ok) return &s;
  }
  return nullptr;
}

std::vector<Dim> dims_of(const std::vector<int64_t>& d) {
  std::vector<Dim> out;
  for (int64_t x : d) out.push_back(x >= 0 ? Dim(x) : Dim::unknown());
  return out;
}

// An op of a newer PyTorch than this LibTorch (scaled_dot_product_attention, recorded by torch 2.x): the
// node is made without a schema, its arguments in the recorded order (tensors as inputs, scalars and lists as
// constants of the type their text has, unrecorded ones None), for the lowerings that read arguments by
// position. One output.
template <class TensorInput>
void build_schemaless(const AtenCall& call, Prepared& p, TensorInput&& tensor_input) {
  torch::jit::Graph& g = *p.graph;
  std::vector<torch::jit::Value*> args;
  for (size_t i = 0; i < call.types.size(); ++i) {
    const std::string& rec = call.types[i];
    const std::string concrete = i < call.concrete.size() ? call.concrete[i] : "";
    if (rec.empty()) {
      args.push_back(g.insertConstant(IValue()));
    } else if (rec == "TensorList") {
      throw std::runtime_error("a tensor list argument of an op this LibTorch does not know");
    } else if (rec == "ScalarList") {
      bool floats = concrete.find_first_of(".eE") != std::string::npos,
           bools = concrete.find_first_of("TF") != std::string::npos;
      auto v = list_of(concrete, bools    ? TypeKind::BoolType
                                 : floats ? TypeKind::FloatType
                                          : TypeKind::IntType);
      args.push_back(g.insertConstant(v ? *v : IValue()));
    } else if (rec == "Scalar") {
      auto v = scalar_of(concrete, TypeKind::NumberType);
      args.push_back(g.insertConstant(v ? *v : IValue()));
    } else {
      const auto& shapes = call.dims[i];
      args.push_back(tensor_input(shapes.empty() ? std::vector<int64_t>{} : shapes[0], rec));
    }
  }
  torch::jit::Node* n = g.insertNode(g.create(c10::Symbol::fromQualString(call.op), args, 1));
  n->output()->setType(c10::TensorType::get());
  g.registerOutput(n->output());
}

// Builds the one-node graph of `call` into `p` (self, then one input per tensor); throws std::runtime_error
// naming what does not fit.
void build(const AtenCall& call, Prepared& p) {
  if (call.op.rfind("aten::", 0) != 0) throw std::runtime_error("not an aten op");
  if (call.dims.size() != call.types.size())
    throw std::runtime_error("Input Dims and Input type differ in length");
  const auto& ops = torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(call.op));
  const c10::FunctionSchema* s = pick_schema(call, ops);
  if (!s && !ops.empty()) throw std::runtime_error("no overload fits the recorded arguments");
  p.module = torch::jit::Module(c10::QualifiedName("__torch__.flopwise_trace.Call"));
  p.method = "forward";
  p.graph = std::make_shared<torch::jit::Graph>();
  torch::jit::Graph& g = *p.graph;
  g.addInput("self")->setType(p.module.type());
  std::vector<torch::jit::Value*> args;
  auto tensor_input = [&](const std::vector<int64_t>& shape, const std::string& rec) {
    DType t = trace_dtype(rec);
    if (t == DType::Undefined) throw std::runtime_error("tensor type " + rec + " not known");
    InputDecl d;
    d.name = "x" + std::to_string(p.inputs.size());
    d.shape = Shape(dims_of(shape));
    d.dtype = t;
    torch::jit::Value* v = g.addInput(d.name);
    v->setType(c10::TensorType::get());
    p.inputs.push_back(std::move(d));
    return v;
  };
  if (!s) {  // an op this LibTorch does not know (newer than it): positional arguments as recorded
    build_schemaless(call, p, tensor_input);
    return;
  }
  for (size_t i = 0; i < s->arguments().size(); ++i) {
    const c10::Argument& a = s->arguments()[i];
    const std::string rec = i < call.types.size() ? call.types[i] : "";
    const std::string concrete = i < call.concrete.size() ? call.concrete[i] : "";
    bool opt = false;
    c10::TypePtr t = unwrap_optional(a.type(), &opt);
    if (rec.empty()) {
      args.push_back(g.insertConstant(a.default_value() ? *a.default_value() : IValue()));
    } else if (rec == "TensorList") {
      std::vector<torch::jit::Value*> items;
      // The element types of a TensorList are not recorded one by one: the first tensor argument's, else
      // float.
      std::string et = "float";
      for (const auto& r : call.types)
        if (is_tensor_type(r)) {
          et = r;
          break;
        }
      for (const auto& shape : call.dims[i]) items.push_back(tensor_input(shape, et));
      args.push_back(g.insertNode(g.createList(c10::TensorType::get(), items))->output());
    } else if (rec == "ScalarList") {
      auto v = list_of(concrete, t->castRaw<c10::ListType>()->getElementType()->kind());
      if (!v) {
        if (!a.default_value()) throw std::runtime_error("argument " + a.name() + " not recorded");
        v = *a.default_value();
      }
      args.push_back(g.insertConstant(*v));
    } else if (rec == "Scalar") {
      auto v = scalar_of(concrete, t->kind());
      if (!v) {
        if (!a.default_value()) throw std::runtime_error("argument " + a.name() + " not recorded");
        v = *a.default_value();
      }
      args.push_back(g.insertConstant(*v));
    } else {
      const auto& shapes = call.dims[i];
      args.push_back(tensor_input(shapes.empty() ? std::vector<int64_t>{} : shapes[0], rec));
    }
  }
  torch::jit::Node* n =
      g.insertNode(g.create(c10::Symbol::fromQualString(call.op), args, s->returns().size()));
  for (size_t i = 0; i < s->returns().size(); ++i) n->output(i)->setType(s->returns()[i].type());
  if (!n->maybeSchema()) throw std::runtime_error("the recorded arguments match no schema");
  for (auto* o : n->outputs())
    if (o->type()->kind() == TypeKind::TensorType) g.registerOutput(o);
}

}  // namespace
}  // namespace flopwise

extern "C" __attribute__((visibility("default"))) int flopwise_torch_lower_calls(
    const std::vector<flopwise::AtenCall>* calls, std::vector<flopwise::Model>* out,
    std::vector<std::string>* why) {
  using namespace flopwise;
  out->clear();
  out->resize(calls->size());
  why->assign(calls->size(), "");
  for (size_t i = 0; i < calls->size(); ++i) {
    const AtenCall& call = (*calls)[i];
    try {
      Prepared p;
      build(call, p);
      Model m;
      m.path = call.op;
      m.format = "torchscript";
      m.opsets[""] = kTorchOpset;
      m.opsets["flopwise"] = 1;
      m.graph.name = call.op;
      Lowerer(p, m).run();
      (*out)[i] = std::move(m);
    } catch (const c10::Error& e) {
      (*why)[i] = std::string("LibTorch: ") + first_line(e.what_without_backtrace());
      (*out)[i] = Model();
    } catch (const std::exception& e) {
      (*why)[i] = e.what();
      (*out)[i] = Model();
    }
  }
  return kTorchOk;
}
