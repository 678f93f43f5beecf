// src/torch/torch_import.cc — TorchScript (.pt) -> flopwise IR, via LibTorch's JIT. Built as the plugin
// libflopwise_torch.so; the only file that sees LibTorch headers.
//
// Steps: torch::jit::load (eval), the forward graph copied and inlined (each node keeps its inlined call
// stack: module instance names and classes), prim::If nodes resolved statically where the condition is a
// module attribute or a constant (or one branch only raises), then every node lowered into the IR's
// canonical ops (the ONNX vocabulary, plus "flopwise" extensions). Non-tensor values (ints, int lists,
// bools, modules) are tracked at import when known; when they depend on shapes (aten::size) they become
// small int64 IR values whose contents (ConstData) the shape pass computes, so shape arithmetic resolves.
// Any op not lowered is kept as a node in its own domain ("aten", "prim", "myns") so it is listed as
// unsupported, never dropped.
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/script.h>
#include <torch/version.h>

#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <unordered_map>

#include "flopwise/errors.h"
#include "torch_plugin.h"

namespace flopwise {
namespace {

namespace tj = torch::jit;
using tj::Node;
using tj::Value;

constexpr int kOpset = 18;  // default-domain opset of the lowered nodes (newest input layouts)

// The first non-blank line of a (multi-line) LibTorch message.
std::string first_line(const std::string& s) {
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
  return s;
}

// "__torch__.torchvision.models.resnet.___torch_mangle_3.BasicBlock" -> "BasicBlock".
std::string clean_class(const std::string& q) {
  std::string s = q;
  auto dot = s.rfind('.');
  if (dot != std::string::npos) s = s.substr(dot + 1);
  return s;
}

// The one correspondence between torch's scalar types and the IR's dtypes, read both ways.
constexpr std::pair<c10::ScalarType, DType> kScalarTypes[] = {
    {c10::ScalarType::Float, DType::Float32}, {c10::ScalarType::Double, DType::Float64},
    {c10::ScalarType::Half, DType::Float16},  {c10::ScalarType::BFloat16, DType::BFloat16},
    {c10::ScalarType::Long, DType::Int64},    {c10::ScalarType::Int, DType::Int32},
    {c10::ScalarType::Short, DType::Int16},   {c10::ScalarType::Char, DType::Int8},
    {c10::ScalarType::Byte, DType::UInt8},    {c10::ScalarType::Bool, DType::Bool},
};

std::optional<DType> dtype_of_scalar_type(int64_t st) {
  for (const auto& [torch_type, dtype] : kScalarTypes)
    if (static_cast<int64_t>(torch_type) == st) return dtype;
  return std::nullopt;
}

// Float for types torch has no match for (zero inputs for a shape run only).
c10::ScalarType scalar_type_of(DType t) {
  for (const auto& [torch_type, dtype] : kScalarTypes)
    if (dtype == t) return torch_type;
  return c10::ScalarType::Float;
}

// ---- loading and graph preparation ---------------------------------------------------------------

struct InputDecl {
  std::string name;
  std::optional<Shape> shape;
  DType dtype = DType::Float32;
};

struct Prepared {
  tj::Module module;
  std::shared_ptr<tj::Graph> graph;  // forward, inlined, Ifs resolved
  std::vector<InputDecl> inputs;     // graph inputs after self
  std::vector<std::string> warnings;
};

bool is_zip(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char m[4] = {0, 0, 0, 0};
  f.read(m, 4);
  return f.gcount() == 4 && m[0] == 'P' && m[1] == 'K' && m[2] == 3 && m[3] == 4;
}

// Known non-tensor value at import time (constants, module attributes, simple arithmetic on them).
struct Evaluator {
  tj::Module& module;
  std::unordered_map<const Value*, std::optional<c10::IValue>> memo;

  std::optional<c10::IValue> eval(const Value* v) {
    auto it = memo.find(v);
    if (it != memo.end()) return it->second;
    auto r = compute(v);
    memo[v] = r;
    return r;
  }

  std::optional<c10::IValue> compute(const Value* v) {
    const Node* n = v->node();
    auto k = n->kind();
    if (k == c10::prim::Param) {
      if (v == n->owningGraph()->inputs()[0] && n->owningBlock() == n->owningGraph()->block())
        return c10::IValue(module._ivalue());
      return std::nullopt;
    }
    if (k == c10::prim::Constant) {
      auto iv = tj::toIValue(v);
      if (iv && iv->isTensor()) return std::nullopt;  // tensors are lowered, not evaluated
      return iv;
    }
    if (k == c10::prim::GetAttr) {
      auto obj = eval(n->input(0));
      if (!obj || !obj->isObject()) return std::nullopt;
      auto a = obj->toObject()->getAttr(n->s(c10::attr::name));
      if (a.isTensor()) return std::nullopt;
      return a;
    }
    std::vector<c10::IValue> in;
    for (auto* i : n->inputs()) {
      auto x = eval(i);
      if (!x) {
        // `x is None` is known when x's static type is None or x is a known non-None value.
        if ((k == c10::aten::__is__ || k == c10::aten::__isnot__) &&
            i->type()->kind() != c10::TypeKind::NoneType &&
            i->type()->kind() != c10::TypeKind::OptionalType) {
          in.push_back(c10::IValue(std::string("<not none>")));
          continue;
        }
        return std::nullopt;
      }
      in.push_back(*x);
    }
    auto num = [](const c10::IValue& x) -> std::optional<double> {
      if (x.isInt()) return static_cast<double>(x.toInt());
      if (x.isDouble()) return x.toDouble();
      if (x.isBool()) return x.toBool() ? 1.0 : 0.0;
      return std::nullopt;
    };
    if (k == c10::aten::__is__ || k == c10::aten::__isnot__) {
      bool same = in[0].isNone() == in[1].isNone() && in[0].isNone();
      return c10::IValue(k == c10::aten::__is__ ? same : !same);
    }
    if (k == c10::aten::__not__ && in.size() == 1 && in[0].isBool()) return c10::IValue(!in[0].toBool());
    if ((k == c10::aten::__and__ || k == c10::aten::__or__) && in.size() == 2 && in[0].isBool() &&
        in[1].isBool())
      return c10::IValue(k == c10::aten::__and__ ? in[0].toBool() && in[1].toBool()
                                                 : in[0].toBool() || in[1].toBool());
    if (in.size() == 2 && (k == c10::aten::eq || k == c10::aten::ne || k == c10::aten::lt ||
                           k == c10::aten::gt || k == c10::aten::le || k == c10::aten::ge)) {
      if (in[0].isString() && in[1].isString()) {
        bool eq = in[0].toStringRef() == in[1].toStringRef();
        if (k == c10::aten::eq) return c10::IValue(eq);
        if (k == c10::aten::ne) return c10::IValue(!eq);
        return std::nullopt;
      }
      auto a = num(in[0]), b = num(in[1]);
      if (!a || !b) return std::nullopt;
      bool r = k == c10::aten::eq   ? *a == *b
               : k == c10::aten::ne ? *a != *b
               : k == c10::aten::lt ? *a < *b
               : k == c10::aten::gt ? *a > *b
               : k == c10::aten::le ? *a <= *b
                                    : *a >= *b;
      return c10::IValue(r);
    }
    if (k == c10::aten::len && in.size() == 1 && in[0].isList())
      return c10::IValue(int64_t(in[0].toListRef().size()));
    return std::nullopt;
  }
};

bool block_raises(tj::Block* b) {
  for (auto* n : b->nodes())
    if (n->kind() == c10::prim::RaiseException) return true;
  return false;
}

void inline_block(Node* n, tj::Block* b) {
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    Node* c = *it;
    ++it;
    c->moveBefore(n);
  }
  for (size_t i = 0; i < n->outputs().size(); ++i) n->outputs()[i]->replaceAllUsesWith(b->outputs()[i]);
  n->destroy();
}

// Resolves prim::If nodes whose condition is known at import (module attributes such as `training` or
// `use_res_connect`, constants, `is None` tests on None-typed attributes), and Ifs where one branch only
// raises (input checks such as BatchNorm's dim test: a model that runs takes the other branch).
void resolve_ifs(tj::Graph& g, Evaluator& ev) {
  for (bool changed = true; changed;) {
    changed = false;
    for (auto* n : g.nodes()) {
      if (n->kind() != c10::prim::If) continue;
      tj::Block* keep = nullptr;
      if (auto c = ev.eval(n->input(0)); c && c->isBool()) {
        keep = n->blocks()[c->toBool() ? 0 : 1];
      } else if (block_raises(n->blocks()[0]) && !block_raises(n->blocks()[1])) {
        keep = n->blocks()[1];
      } else if (block_raises(n->blocks()[1]) && !block_raises(n->blocks()[0])) {
        keep = n->blocks()[0];
      }
      if (!keep) continue;
      inline_block(n, keep);
      ev.memo.clear();
      changed = true;
      break;
    }
  }
}

std::string strip_suffix(const std::string& debug_name) {
  static const std::regex re("\\.[0-9]+$");
  return std::regex_replace(debug_name, re, "");
}

// One line for a LibTorch load failure, saying what kind of file this is.
InputError load_error(const std::string& path, const std::string& what) {
  std::string msg = first_line(what);
  static const std::regex unknown_op("Unknown builtin op: ([A-Za-z0-9_:.]+?)\\.?\\s");
  std::smatch m;
  if (std::regex_search(what, m, unknown_op))
    return InputError(path + ": uses operator " + m[1].str() +
                      ", which LibTorch does not know (a custom op not registered in this build)");
  if (what.find("PytorchStreamReader") != std::string::npos || what.find("hasRecord") != std::string::npos ||
      what.find("constants.pkl") != std::string::npos || what.find("data.pkl") != std::string::npos)
    return InputError(
        path + ": a zip archive but not a TorchScript module (no torch.jit.save records: " + msg + ")");
  return InputError(path + ": LibTorch cannot load it: " + msg);
}

// Loads and prepares; throws InputError / UsageError with one line.
Prepared prepare(const std::string& path, const InferOptions& pins) {
  std::ifstream probe(path, std::ios::binary);
  if (!probe) throw InputError(path + ": cannot open");
  if (!is_zip(path))
    throw InputError(path + ": not a TorchScript file (TorchScript files are zip archives; this is not one)");
  Prepared p;
  tj::ExtraFilesMap extra{{"flopwise_inputs.json", ""}};
  try {
    p.module = tj::load(path, c10::Device(c10::kCPU), extra);
  } catch (const c10::Error& e) {
    throw load_error(path, e.what_without_backtrace());
  } catch (const std::exception& e) {  // torch::jit::ErrorReport: compiling the archive's code failed
    throw load_error(path, e.what());
  }
  p.module.eval();
  if (!p.module.find_method("forward")) throw InputError(path + ": TorchScript module has no forward method");
  p.graph = p.module.get_method("forward").graph()->copy();
  tj::Inline(*p.graph);
  Evaluator ev{p.module, {}};
  resolve_ifs(*p.graph, ev);
  tj::EliminateDeadCode(p.graph);

  // Inputs: recorded example inputs (written by flopwise's generator as an extra file), then pins.
  std::vector<InputDecl> recorded;
  if (!extra["flopwise_inputs.json"].empty()) {
    try {
      for (const auto& j : nlohmann::json::parse(extra["flopwise_inputs.json"])) {
        InputDecl d;
        d.name = j.value("name", "");
        std::vector<Dim> dims;
        for (auto x : j.at("shape")) dims.push_back(Dim(x.get<int64_t>()));
        d.shape = Shape(dims);
        if (auto t = parse_dtype(j.value("dtype", "float32"))) d.dtype = *t;
        recorded.push_back(d);
      }
    } catch (const std::exception& e) {
      p.warnings.push_back(std::string("ignored flopwise_inputs.json: ") + e.what());
      recorded.clear();
    }
  }
  auto ins = p.graph->inputs();
  size_t positional = 0;
  for (size_t i = 1; i < ins.size(); ++i) {
    InputDecl d;
    size_t k = i - 1;
    d.name = k < recorded.size() && !recorded[k].name.empty() ? recorded[k].name
                                                              : strip_suffix(ins[i]->debugName());
    if (auto tt = ins[i]->type()->cast<c10::TensorType>()) {
      if (auto sizes = tt->sizes().concrete_sizes()) {
        std::vector<Dim> dims;
        for (auto x : *sizes) dims.push_back(Dim(x));
        d.shape = Shape(dims);
      }
      if (auto st = tt->scalarType())
        if (auto dt = dtype_of_scalar_type(static_cast<int64_t>(*st))) d.dtype = *dt;
    } else {
      throw InputError(path + ": forward input '" + d.name + "' is not a tensor (" + ins[i]->type()->str() +
                       "); only tensor inputs are supported");
    }
    if (k < recorded.size()) {
      d.shape = recorded[k].shape;
      d.dtype = recorded[k].dtype;
    }
    bool pinned = false;
    for (const auto& pin : pins.inputs) {
      if (pin.name.empty() || pin.name != d.name) continue;
      pinned = true;
      if (pin.shape) d.shape = pin.shape;
      if (pin.dtype) d.dtype = *pin.dtype;
    }
    if (!pinned) {
      // Unnamed pins apply to the inputs in order (as the shape pass applies them).
      size_t seen = 0;
      for (const auto& pin : pins.inputs) {
        if (!pin.name.empty()) continue;
        if (seen++ == positional) {
          if (pin.shape) d.shape = pin.shape;
          if (pin.dtype) d.dtype = *pin.dtype;
          pinned = true;
          break;
        }
      }
      positional++;
    }
    if (!d.shape)
      throw UsageError(path + ": input '" + d.name +
                       "' has no recorded shape (a scripted module keeps none): give it with --input " +
                       d.name + ":SHAPE[:dtype] or --input SHAPE for the inputs in order");
    p.inputs.push_back(d);
  }
  return p;
}

// ---- lowering ---------------------------------------------------------------------------------------

// What a jit value is, for the lowering.
struct JV {
  enum Kind { Unknown, Tensor, ScalarIR, IntsIR, Known, List, Module, Split } kind = Unknown;
  int ir = -1;            // Tensor / ScalarIR / IntsIR
  c10::IValue iv;         // Known (int, double, bool, None, string, int list, ...)
  std::vector<JV> items;  // List and Tuple
  std::string path;       // Module: dotted path from the root ("" for the root)
  c10::intrusive_ptr<c10::ivalue::Object> obj;
  int64_t split_size = 0, split_dim = 0;  // Split: pending aten::split / chunk, resolved at ListUnpack
  bool split_is_chunks = false;
};

class Lowerer {
 public:
  Lowerer(Prepared& p, Model& m) : p_(p), m_(m), g_(m.graph) {}

  void run() {
    auto ins = p_.graph->inputs();
    JV self;
    self.kind = JV::Module;
    self.obj = p_.module._ivalue();
    env_[ins[0]] = self;
    for (size_t i = 1; i < ins.size(); ++i) {
      const InputDecl& d = p_.inputs[i - 1];
      int vi = g_.add_value(d.name);
      Value* jv = ins[i];
      g_.values[vi].is_input = true;
      g_.values[vi].dtype = d.dtype;
      g_.values[vi].shape = *d.shape;
      g_.inputs.push_back(vi);
      JV t;
      t.kind = JV::Tensor;
      t.ir = vi;
      env_[jv] = t;
    }
    for (auto* n : p_.graph->nodes()) lower(n);
    for (auto* o : p_.graph->outputs()) add_outputs(get(o));
    // Parameters never used by forward are not in the graph: say so, with the count.
    int64_t unused = 0;
    for (const auto& np : p_.module.named_parameters(true))
      if (!param_ir_.count(np.value.unsafeGetTensorImpl())) unused += np.value.numel();
    if (unused > 0)
      m_.warnings.push_back(std::to_string(unused) +
                            " parameter elements are not used by forward (not counted)");
  }

 private:
  Prepared& p_;
  Model& m_;
  Graph& g_;
  std::unordered_map<const Value*, JV> env_;
  std::unordered_map<const void*, int> param_ir_;  // TensorImpl -> initializer value (a shared tensor once)
  std::map<std::string, int> name_count_;
  int const_count_ = 0;
  Node* cur_ = nullptr;
  std::vector<std::string> scope_, classes_;

  // ---- values ----
  JV& get(const Value* v) {
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
  static std::string ir_name(const Value* v) { return "%" + v->debugName(); }

  int new_value(const std::string& name) {
    std::string n = name;
    for (int k = 1; g_.find(n) >= 0; ++k) n = name + "_" + std::to_string(k);
    return g_.add_value(n);
  }

  int const_value(DType t, Shape s, ConstData d) {
    int vi = new_value("const_" + std::to_string(const_count_++));
    flopwise::Value& v = g_.values[vi];
    v.dtype = t;
    v.shape = std::move(s);
    v.data = std::move(d);
    v.synthetic = true;
    return vi;
  }
  int const_ints(const std::vector<int64_t>& xs) {
    ConstData d;
    for (auto x : xs) d.ints.push_back(Dim(x));
    return const_value(DType::Int64, Shape({Dim(static_cast<int64_t>(xs.size()))}), d);
  }
  int const_int(int64_t x) {
    ConstData d;
    d.ints.push_back(Dim(x));
    return const_value(DType::Int64, Shape::scalar(), d);
  }
  int const_float(double x) {
    ConstData d;
    d.is_float = true;
    d.floats.push_back(x);
    return const_value(DType::Float32, Shape::scalar(), d);
  }

  int tensor_const(const at::Tensor& t) {
    DType dt = dtype_of_scalar_type(static_cast<int64_t>(t.scalar_type())).value_or(DType::Undefined);
    std::vector<Dim> dims;
    for (auto x : t.sizes()) dims.push_back(Dim(x));
    std::optional<ConstData> data;
    if (t.numel() <= kMaxConstElements && dt != DType::Undefined) {
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
  int param_value(const std::string& name, const at::Tensor& t) {
    const void* key = t.unsafeGetTensorImpl();
    auto it = param_ir_.find(key);
    if (it != param_ir_.end()) return it->second;
    int vi = new_value(name);
    flopwise::Value& v = g_.values[vi];
    v.dtype = dtype_of_scalar_type(static_cast<int64_t>(t.scalar_type())).value_or(DType::Undefined);
    std::vector<Dim> dims;
    for (auto x : t.sizes()) dims.push_back(Dim(x));
    v.shape = Shape(dims);
    v.is_initializer = true;
    param_ir_[key] = vi;
    return vi;
  }

  // The IR value for a jit value used as a tensor operand (scalars become constants).
  int as_ir(const JV& j) {
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
  // An int list (known, runtime, or mixed) as a 1-D int64 IR value.
  int pack_ints(const JV& j) {
    if (j.kind == JV::IntsIR) return j.ir;
    if (j.kind == JV::Known && j.iv.isIntList()) return const_ints(j.iv.toIntVector());
    if (j.kind == JV::Known && j.iv.isInt()) return const_ints({j.iv.toInt()});
    if (j.kind == JV::ScalarIR) return emit("PackScalars", {j.ir}, {"pack"}, {}, "flopwise")[0];
    if (j.kind != JV::List) return -1;
    std::vector<int64_t> known;
    bool all_known = true;
    for (const auto& it : j.items) {
      if (it.kind == JV::Known && it.iv.isInt())
        known.push_back(it.iv.toInt());
      else
        all_known = false;
    }
    if (all_known) return const_ints(known);
    std::vector<int> ins;
    for (const auto& it : j.items) ins.push_back(as_ir(it));
    return emit("PackScalars", ins, {"pack"}, {}, "flopwise")[0];
  }
  std::optional<int64_t> known_int(const JV& j) {
    if (j.kind == JV::Known && j.iv.isInt()) return j.iv.toInt();
    if (j.kind == JV::Known && j.iv.isBool()) return j.iv.toBool() ? 1 : 0;
    return std::nullopt;
  }
  std::optional<double> known_num(const JV& j) {
    if (j.kind != JV::Known) return std::nullopt;
    if (j.iv.isDouble()) return j.iv.toDouble();
    if (j.iv.isInt()) return static_cast<double>(j.iv.toInt());
    if (j.iv.isBool()) return j.iv.toBool() ? 1.0 : 0.0;
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> known_ints(const JV& j) {
    if (j.kind == JV::Known && j.iv.isIntList()) return j.iv.toIntVector();
    if (j.kind == JV::Known && j.iv.isInt()) return std::vector<int64_t>{j.iv.toInt()};
    if (j.kind == JV::List) {
      std::vector<int64_t> r;
      for (const auto& it : j.items) {
        auto x = known_int(it);
        if (!x) return std::nullopt;
        r.push_back(*x);
      }
      return r;
    }
    return std::nullopt;
  }
  static bool is_none(const JV& j) { return j.kind == JV::Known && j.iv.isNone(); }
  static bool is_tensorish(const JV& j) { return j.kind == JV::Tensor; }

  // ---- nodes ----
  using Attrs = std::map<std::string, Attribute>;
  static Attribute ai(int64_t v) { return Attribute::of_int(v); }
  static Attribute af(double v) { return Attribute::of_float(v); }
  static Attribute as(const std::string& v) { return Attribute::of_string(v); }
  static Attribute ais(std::vector<int64_t> v) { return Attribute::of_ints(std::move(v)); }

  // Emits one IR node in the current jit node's scope. Output names: "%<jit name>" for the final value.
  std::vector<int> emit(const std::string& op, const std::vector<int>& ins,
                        const std::vector<std::string>& outs, Attrs attrs = {},
                        const std::string& domain = "", int opset = 0) {
    flopwise::Node n;
    n.op = op;
    n.domain = domain;
    n.opset = opset ? opset : (domain.empty() ? kOpset : 1);
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
  // Emits an op whose single output is jit output `o` (a tensor).
  int emit_to(const Value* o, const std::string& op, const std::vector<int>& ins, Attrs attrs = {},
              const std::string& domain = "", int opset = 0) {
    int r = emit(op, ins, {ir_name(o)}, std::move(attrs), domain, opset)[0];
    JV t;
    t.kind = JV::Tensor;
    t.ir = r;
    env_[o] = t;
    return r;
  }
  std::string tmp(const Value* o, const std::string& what) { return ir_name(o) + "/" + what; }

  // Scope of a node from its inlined call stack, checked against the real module tree: each call's
  // instance name is a child of the previous level. Levels the call stack skips (a ModuleList iterated
  // by a scripted loop: `for layer in self.layer` records only "0") are recovered from the tree, and a
  // method called on the same module (`self._forward_impl`, recorded as "SELF"/"self") adds no level.
  void set_scope(Node* n) {
    scope_.clear();
    classes_.clear();
    auto cs = n->callstack();
    if (!cs) return;
    std::string path;
    c10::intrusive_ptr<c10::ivalue::Object> cur = p_.module._ivalue();
    auto child = [](const c10::intrusive_ptr<c10::ivalue::Object>& o,
                    const std::string& name) -> c10::intrusive_ptr<c10::ivalue::Object> {
      if (!o->type()->hasAttribute(name)) return {};
      auto a = o->getAttr(name);
      return a.isObject() ? a.toObject() : c10::intrusive_ptr<c10::ivalue::Object>();
    };
    auto push = [&](const std::string& name, const c10::intrusive_ptr<c10::ivalue::Object>& o) {
      path = path.empty() ? name : path + "." + name;
      scope_.push_back(path);
      classes_.push_back(clean_class(o->type()->name()->qualifiedName()));
      cur = o;
    };
    for (auto& e : (*cs)->vec()) {
      const auto& mi = std::get<2>(e);
      if (!mi) continue;
      std::string inst = mi->instance_name();
      if (inst.empty() || inst == "SELF") continue;  // a method of the same module
      if (auto c = child(cur, inst)) {
        push(inst, c);
        continue;
      }
      // A container level the call stack skipped: the child of a child.
      bool found = false;
      for (size_t i = 0; i < cur->type()->numAttributes() && !found; ++i) {
        auto a = cur->getSlot(i);
        if (!a.isObject()) continue;
        if (auto c = child(a.toObject(), inst)) {
          push(cur->type()->getAttributeName(i), a.toObject());
          push(inst, c);
          found = true;
        }
      }
      if (found || inst == "self") continue;
      // Not in the tree (should not happen): keep the recorded name and class.
      path = path.empty() ? inst : path + "." + inst;
      scope_.push_back(path);
      classes_.push_back(mi->class_type() ? clean_class(mi->class_type()->name()->qualifiedName()) : "");
    }
  }

  void add_outputs(const JV& j) {
    if (j.kind == JV::List) {
      for (const auto& it : j.items) add_outputs(it);
      return;
    }
    int vi = as_ir(j);
    if (vi >= 0) g_.outputs.push_back(vi);
  }

  // Keeps an op we do not lower: a node in its own domain, so it is listed as unsupported.
  void keep_unsupported(Node* n) {
    std::string kind = n->kind().toQualString();
    if (!n->blocks().empty()) {
      // Control flow that depends on runtime values (prim::If on data, prim::Loop): listed as unsupported,
      // and the nodes inside its blocks are not counted; say how many.
      size_t inner = 0;
      for (auto* b : n->blocks())
        for (auto* c : b->nodes()) inner += c->kind() != c10::prim::Constant;
      m_.warnings.push_back(kind + " in scope '" + (scope_.empty() ? std::string() : scope_.back()) +
                            "' could not be resolved statically: its " + std::to_string(inner) +
                            " inner node(s) are not counted");
    }
    auto sep = kind.find("::");
    std::string domain = kind.substr(0, sep), op = kind.substr(sep + 2);
    std::vector<int> ins;
    for (auto* i : n->inputs()) ins.push_back(as_ir(get(i)));
    std::vector<std::string> outs;
    for (auto* o : n->outputs()) outs.push_back(ir_name(o));
    auto res = emit(op, ins, outs, {}, domain, 1);
    for (size_t k = 0; k < n->outputs().size(); ++k) {
      JV t;
      t.kind = n->outputs()[k]->type()->cast<c10::TensorType>() ? JV::Tensor : JV::ScalarIR;
      t.ir = res[k];
      env_[n->outputs()[k]] = t;
    }
  }

  // Input of n by schema argument name.
  JV* arg(Node* n, const std::string& name) {
    const auto* s = n->maybeSchema();
    if (!s) return nullptr;
    for (size_t i = 0; i < s->arguments().size() && i < n->inputs().size(); ++i)
      if (s->arguments()[i].name() == name) return &get(n->input(i));
    return nullptr;
  }

  void set_known(const Value* o, c10::IValue iv) {
    JV j;
    j.kind = JV::Known;
    j.iv = std::move(iv);
    env_[o] = j;
  }
  void set_ir(const Value* o, int ir, JV::Kind k) {
    JV j;
    j.kind = k;
    j.ir = ir;
    env_[o] = j;
  }

  // ---- the lowering table ----
  void lower(Node* n) {
    cur_ = n;
    set_scope(n);
    const std::string kind = n->kind().toQualString();
    if (kind == "prim::Constant") {
      auto iv = tj::toIValue(n->output());
      if (!iv) return;
      if (iv->isTensor()) {
        set_ir(n->output(), tensor_const(iv->toTensor()), JV::Tensor);
        return;
      }
      set_known(n->output(), *iv);
      return;
    }
    if (kind == "prim::GetAttr") {
      JV& obj = get(n->input(0));
      if (obj.kind != JV::Module) return keep_unsupported(n);
      std::string name = n->s(c10::attr::name);
      auto a = obj.obj->getAttr(name);
      std::string path = obj.path.empty() ? name : obj.path + "." + name;
      if (a.isObject()) {
        JV j;
        j.kind = JV::Module;
        j.obj = a.toObject();
        j.path = path;
        env_[n->output()] = j;
      } else if (a.isTensor()) {
        set_ir(n->output(), param_value(path, a.toTensor()), JV::Tensor);
      } else {
        set_known(n->output(), a);
      }
      return;
    }
    if (kind == "prim::ListConstruct" || kind == "prim::TupleConstruct") {
      JV j;
      j.kind = JV::List;
      for (auto* i : n->inputs()) j.items.push_back(get(i));
      if (auto k = known_ints(j); k && !n->inputs().empty() && kind == "prim::ListConstruct")
        set_known(n->output(), c10::IValue(*k));
      else
        env_[n->output()] = j;
      return;
    }
    if (kind == "prim::ListUnpack" || kind == "prim::TupleUnpack") return lower_unpack(n);
    if (kind == "prim::TupleIndex" || kind == "aten::__getitem__" || kind == "prim::ListIndex") {
      JV lst = get(n->input(0));
      auto idx = known_int(get(n->input(1)));
      if (idx && lst.kind == JV::List) {
        int64_t i = *idx < 0 ? *idx + static_cast<int64_t>(lst.items.size()) : *idx;
        if (i >= 0 && i < static_cast<int64_t>(lst.items.size())) {
          env_[n->output()] = lst.items[i];
          return;
        }
      }
      if (idx && lst.kind == JV::Known && lst.iv.isList()) {
        auto l = lst.iv.toListRef();
        int64_t i = *idx < 0 ? *idx + static_cast<int64_t>(l.size()) : *idx;
        if (i >= 0 && i < static_cast<int64_t>(l.size())) return set_known(n->output(), l[i]);
      }
      if (lst.kind == JV::IntsIR) {
        int r =
            emit("Gather", {lst.ir, as_ir(get(n->input(1)))}, {ir_name(n->output())}, {{"axis", ai(0)}})[0];
        return set_ir(n->output(), r, JV::ScalarIR);
      }
      return keep_unsupported(n);
    }
    if (kind == "prim::NumToTensor" || kind == "aten::Int" || kind == "aten::Float" ||
        kind == "aten::ScalarImplicit" || kind == "aten::IntImplicit" || kind == "aten::FloatImplicit") {
      JV j = get(n->input(0));
      env_[n->output()] = j;
      return;
    }
    if (kind == "aten::warn" || kind == "prim::RaiseException" || kind == "aten::format") return;  // no value
    if (kind == "aten::size") {
      JV x = get(n->input(0));
      if (x.kind != JV::Tensor) return keep_unsupported(n);
      int shape = emit("Shape", {x.ir},
                       {n->inputs().size() == 2 ? tmp(n->output(), "shape") : ir_name(n->output())})[0];
      if (n->inputs().size() == 1) return set_ir(n->output(), shape, JV::IntsIR);
      int r = emit("Gather", {shape, as_ir(get(n->input(1)))}, {ir_name(n->output())}, {{"axis", ai(0)}})[0];
      return set_ir(n->output(), r, JV::ScalarIR);
    }
    if (kind == "aten::dim") {
      int shape = emit("Shape", {as_ir(get(n->input(0)))}, {tmp(n->output(), "shape")})[0];
      return set_ir(n->output(), emit("Size", {shape}, {ir_name(n->output())})[0], JV::ScalarIR);
    }
    if (kind == "aten::len") {
      JV l = get(n->input(0));
      if (l.kind == JV::List) return set_known(n->output(), c10::IValue(int64_t(l.items.size())));
      if (l.kind == JV::Known && l.iv.isList())
        return set_known(n->output(), c10::IValue(int64_t(l.iv.toListRef().size())));
      if (l.kind == JV::IntsIR)
        return set_ir(n->output(), emit("Size", {l.ir}, {ir_name(n->output())})[0], JV::ScalarIR);
      return keep_unsupported(n);
    }
    if (kind == "aten::__is__" || kind == "aten::__isnot__" || kind == "aten::__not__") {
      Evaluator ev{p_.module, {}};
      if (auto r = ev.eval(n->output())) return set_known(n->output(), *r);
      return keep_unsupported(n);
    }
    if (kind == "prim::device" || kind == "prim::dtype" || kind == "prim::layout") {
      JV u;
      env_[n->output()] = u;  // unknown; consumers treat it as "not given"
      return;
    }
    if (kind.rfind("aten::", 0) == 0 && lower_aten(n, kind.substr(6))) return;
    keep_unsupported(n);
  }

  void lower_unpack(Node* n) {
    JV src = get(n->input(0));
    size_t count = n->outputs().size();
    if (src.kind == JV::List && src.items.size() == count) {
      for (size_t i = 0; i < count; ++i) env_[n->outputs()[i]] = src.items[i];
      return;
    }
    if (src.kind == JV::Known && src.iv.isList() && src.iv.toListRef().size() == count) {
      for (size_t i = 0; i < count; ++i) set_known(n->outputs()[i], src.iv.toListRef()[i]);
      return;
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
      for (size_t i = 0; i < count; ++i) set_ir(n->outputs()[i], res[i], JV::Tensor);
      return;
    }
    keep_unsupported(n);
  }

  // Elementwise / arithmetic on ints known at import time.
  bool fold_scalar(Node* n, const std::string& op) {
    std::vector<double> xs;
    bool all_int = true;
    for (auto* i : n->inputs()) {
      auto x = known_num(get(i));
      if (!x) return false;
      const JV& j = get(i);
      if (!j.iv.isInt() && !j.iv.isBool()) all_int = false;
      xs.push_back(*x);
    }
    if (xs.empty()) return false;
    double r;
    if (op == "add" && xs.size() == 2)
      r = xs[0] + xs[1];
    else if (op == "sub" && xs.size() == 2)
      r = xs[0] - xs[1];
    else if (op == "mul" && xs.size() == 2)
      r = xs[0] * xs[1];
    else if (op == "div" && xs.size() == 2 && xs[1] != 0) {
      r = xs[0] / xs[1];
      all_int = false;
    } else if (op == "floordiv" && xs.size() == 2 && xs[1] != 0)
      r = std::floor(xs[0] / xs[1]);
    else if (op == "neg" && xs.size() == 1)
      r = -xs[0];
    else if (op == "sqrt" && xs.size() == 1) {
      r = std::sqrt(xs[0]);
      all_int = false;
    } else
      return false;
    if (all_int)
      set_known(n->output(), c10::IValue(static_cast<int64_t>(r)));
    else
      set_known(n->output(), c10::IValue(r));
    return true;
  }

  bool lower_aten(Node* n, std::string op) {
    const Value* o = n->outputs().empty() ? nullptr : n->output(0);
    if (op.size() > 1 && op.back() == '_' && op.substr(0, 2) != "__") op.pop_back();  // in-place: same cost
    auto in = [&](size_t i) -> JV& { return get(n->input(i)); };
    auto nin = n->inputs().size();

    if (fold_scalar(n, op)) return true;

    static const std::map<std::string, std::string> unary = {{"relu", "Relu"},
                                                             {"sigmoid", "Sigmoid"},
                                                             {"tanh", "Tanh"},
                                                             {"exp", "Exp"},
                                                             {"log", "Log"},
                                                             {"sqrt", "Sqrt"},
                                                             {"neg", "Neg"},
                                                             {"abs", "Abs"},
                                                             {"erf", "Erf"},
                                                             {"sin", "Sin"},
                                                             {"cos", "Cos"},
                                                             {"reciprocal", "Reciprocal"},
                                                             {"floor", "Floor"},
                                                             {"ceil", "Ceil"},
                                                             {"round", "Round"},
                                                             {"sign", "Sign"},
                                                             {"hardswish", "HardSwish"},
                                                             {"hardsigmoid", "HardSigmoid"},
                                                             {"logical_not", "Not"},
                                                             {"softplus", "Softplus"},
                                                             {"elu", "Elu"},
                                                             {"mish", "Mish"}};
    static const std::set<std::string> identity = {"contiguous",    "detach", "dropout", "feature_dropout",
                                                   "alpha_dropout", "clone",  "alias",   "lift_fresh"};
    static const std::map<std::string, std::string> binary = {
        {"add", "Add"},        {"sub", "Sub"},           {"mul", "Mul"},         {"div", "Div"},
        {"floordiv", "Div"},   {"floor_divide", "Div"},  {"pow", "Pow"},         {"maximum", "Max"},
        {"minimum", "Min"},    {"eq", "Equal"},          {"lt", "Less"},         {"gt", "Greater"},
        {"le", "LessOrEqual"}, {"ge", "GreaterOrEqual"}, {"logical_and", "And"}, {"logical_or", "Or"},
        {"remainder", "Mod"},  {"fmod", "Mod"}};

    if (identity.count(op)) return emit_to(o, "Identity", {as_ir(in(0))}), true;
    if (auto u = unary.find(op); u != unary.end()) {
      if (!is_tensorish(in(0)) && in(0).kind != JV::ScalarIR) return false;
      emit_to(o, u->second, {as_ir(in(0))});
      if (in(0).kind == JV::ScalarIR) set_ir(o, env_[o].ir, JV::ScalarIR);
      return true;
    }
    if (auto b = binary.find(op); b != binary.end() && nin >= 2) {
      JV a = in(0), c = in(1);
      bool scalar = a.kind != JV::Tensor && c.kind != JV::Tensor;
      if (a.kind == JV::Unknown || c.kind == JV::Unknown) return false;
      int ia = as_ir(a), ic = as_ir(c);
      if (ia < 0 || ic < 0) return false;
      if ((op == "add" || op == "sub") && nin >= 3) {
        auto alpha = known_num(in(2));
        if (alpha && *alpha != 1.0) ic = emit("Mul", {ic, const_float(*alpha)}, {tmp(o, "alpha")})[0];
      }
      emit_to(o, b->second, {ia, ic});
      if (scalar) set_ir(o, env_[o].ir, JV::ScalarIR);
      return true;
    }
    if (op == "ne" && nin == 2) {
      int e = emit("Equal", {as_ir(in(0)), as_ir(in(1))}, {tmp(o, "eq")})[0];
      return emit_to(o, "Not", {e}), true;
    }
    if (op == "rsub" && nin >= 2) return emit_to(o, "Sub", {as_ir(in(1)), as_ir(in(0))}), true;
    if (op == "rsqrt") {
      int s = emit("Sqrt", {as_ir(in(0))}, {tmp(o, "sqrt")})[0];
      return emit_to(o, "Reciprocal", {s}), true;
    }
    if (op == "silu") {  // x * sigmoid(x), as torch.onnx exports it
      int s = emit("Sigmoid", {as_ir(in(0))}, {tmp(o, "sigmoid")})[0];
      return emit_to(o, "Mul", {as_ir(in(0)), s}), true;
    }
    if (op == "gelu") {
      Attrs a;
      if (nin >= 2 && in(1).kind == JV::Known && in(1).iv.isString())
        a["approximate"] = as(in(1).iv.toStringRef());
      return emit_to(o, "Gelu", {as_ir(in(0))}, a, "", 20), true;
    }
    if (op == "relu6" || op == "hardtanh" || op == "clamp" || op == "clip") {
      double lo = op == "hardtanh" ? -1.0 : 0.0, hi = op == "hardtanh" ? 1.0 : 6.0;
      std::vector<int> ins{as_ir(in(0))};
      if (op == "relu6") {
        ins.push_back(const_float(0));
        ins.push_back(const_float(6));
      } else {
        for (size_t k = 1; k <= 2; ++k) {
          if (nin > k && is_none(in(k))) {
            ins.push_back(-1);
          } else if (nin > k) {
            auto x = known_num(in(k));
            ins.push_back(x ? const_float(*x) : as_ir(in(k)));
          } else {
            ins.push_back(const_float(k == 1 ? lo : hi));
          }
        }
        while (!ins.empty() && ins.back() < 0) ins.pop_back();
      }
      return emit_to(o, "Clip", ins), true;
    }
    if (op == "leaky_relu") {
      double slope = nin >= 2 ? known_num(in(1)).value_or(0.01) : 0.01;
      return emit_to(o, "LeakyRelu", {as_ir(in(0))}, {{"alpha", af(slope)}}), true;
    }
    if (op == "where" && nin == 3)
      return emit_to(o, "Where", {as_ir(in(0)), as_ir(in(1)), as_ir(in(2))}), true;
    if (op == "masked_fill" && nin == 3)
      return emit_to(o, "Where", {as_ir(in(1)), as_ir(in(2)), as_ir(in(0))}), true;
    if (op == "softmax" || op == "log_softmax") {
      auto dim = known_int(in(1));
      if (!dim) return false;
      return emit_to(o, op == "softmax" ? "Softmax" : "LogSoftmax", {as_ir(in(0))}, {{"axis", ai(*dim)}}),
             true;
    }

    // contractions
    if (op == "matmul" || op == "mm" || op == "bmm")
      return emit_to(o, "MatMul", {as_ir(in(0)), as_ir(in(1))}), true;
    if (op == "linear") {
      // y = x W^T + b: MatMul + Add, as torch.onnx exports a Linear on a rank-3 input (on rank 2 it
      // exports Gemm; MACs and FLOPs are the same: M*N*K MACs, 2*M*N*K + M*N FLOPs).
      int wt = emit("Transpose", {as_ir(in(1))}, {tmp(o, "weight_t")}, {{"perm", ais({1, 0})}})[0];
      if (nin < 3 || is_none(in(2))) return emit_to(o, "MatMul", {as_ir(in(0)), wt}), true;
      int mm = emit("MatMul", {as_ir(in(0)), wt}, {tmp(o, "matmul")})[0];
      return emit_to(o, "Add", {mm, as_ir(in(2))}), true;
    }
    if (op == "addmm" && nin >= 3) {
      double beta = nin > 3 ? known_num(in(3)).value_or(1) : 1,
             alpha = nin > 4 ? known_num(in(4)).value_or(1) : 1;
      return emit_to(o, "Gemm", {as_ir(in(1)), as_ir(in(2)), as_ir(in(0))},
                     {{"alpha", af(alpha)}, {"beta", af(beta)}}),
             true;
    }
    if (op == "einsum" && nin >= 2 && in(0).kind == JV::Known && in(0).iv.isString() &&
        in(1).kind == JV::List) {
      std::vector<int> ins;
      for (const auto& it : in(1).items) ins.push_back(as_ir(it));
      return emit_to(o, "Einsum", ins, {{"equation", as(in(0).iv.toStringRef())}}), true;
    }
    if (op == "_convolution" || op == "conv1d" || op == "conv2d" || op == "conv3d" || op == "convolution") {
      return lower_conv(n, op);
    }

    // norms
    if (op == "batch_norm" && nin >= 8) {
      auto eps = known_num(in(7)).value_or(1e-5);
      if (is_none(in(1)) || is_none(in(2)) || is_none(in(3)) || is_none(in(4))) return false;
      return emit_to(o, "BatchNormalization",
                     {as_ir(in(0)), as_ir(in(1)), as_ir(in(2)), as_ir(in(3)), as_ir(in(4))},
                     {{"epsilon", af(eps)}}),
             true;
    }
    if (op == "layer_norm" && nin >= 5) {
      auto shape = known_ints(in(1));
      if (!shape) return false;
      std::vector<int> ins{as_ir(in(0)), is_none(in(2)) ? -1 : as_ir(in(2))};
      if (!is_none(in(3))) ins.push_back(as_ir(in(3)));
      if (ins[1] < 0) return false;
      return emit_to(o, "LayerNormalization", ins,
                     {{"axis", ai(-static_cast<int64_t>(shape->size()))},
                      {"epsilon", af(known_num(in(4)).value_or(1e-5))}}),
             true;
    }
    if (op == "group_norm" && nin >= 5) {
      auto groups = known_int(in(1));
      if (!groups || is_none(in(2)) || is_none(in(3))) return false;
      // Opset 21's GroupNormalization: scale and bias per channel, as torch's.
      return emit_to(o, "GroupNormalization", {as_ir(in(0)), as_ir(in(2)), as_ir(in(3))},
                     {{"num_groups", ai(*groups)}, {"epsilon", af(known_num(in(4)).value_or(1e-5))}}, "", 21),
             true;
    }

    // pooling
    if (op == "max_pool1d" || op == "max_pool2d" || op == "max_pool3d" || op == "avg_pool1d" ||
        op == "avg_pool2d" || op == "avg_pool3d")
      return lower_pool(n, op);
    if (op == "adaptive_avg_pool1d" || op == "adaptive_avg_pool2d" || op == "adaptive_avg_pool3d") {
      auto size = known_ints(in(1));
      if (!size) return false;
      bool global = true;
      for (auto s : *size) global = global && s == 1;
      if (global) return emit_to(o, "GlobalAveragePool", {as_ir(in(0))}), true;
      return emit_to(o, "AdaptiveAvgPool", {as_ir(in(0))}, {{"output_size", ais(*size)}}, "flopwise"), true;
    }

    // embedding and indexing
    if (op == "embedding") return emit_to(o, "Gather", {as_ir(in(0)), as_ir(in(1))}, {{"axis", ai(0)}}), true;
    if (op == "select" && nin == 3) {
      auto dim = known_int(in(1));
      if (!dim) return false;
      return emit_to(o, "Gather", {as_ir(in(0)), as_ir(in(2))}, {{"axis", ai(*dim)}}), true;
    }
    if (op == "slice" && nin == 5) {
      auto dim = known_int(in(1));
      if (!dim) return false;
      int start = is_none(in(2)) ? const_ints({0}) : pack_ints(in(2));
      int end = is_none(in(3)) ? const_ints({INT64_MAX}) : pack_ints(in(3));
      int step = is_none(in(4)) ? const_ints({1}) : pack_ints(in(4));
      if (start < 0 || end < 0 || step < 0) return false;
      return emit_to(o, "Slice", {as_ir(in(0)), start, end, const_ints({*dim}), step}), true;
    }

    // layout
    if (op == "view" || op == "reshape") {
      int shape = pack_ints(in(1));
      if (shape < 0) return false;
      return emit_to(o, "Reshape", {as_ir(in(0)), shape}), true;
    }
    if (op == "flatten" && nin == 3) {
      auto s = known_int(in(1)), e = known_int(in(2));
      if (!s || !e || *e != -1) return false;
      if (*s == 1) return emit_to(o, "Flatten", {as_ir(in(0))}, {{"axis", ai(1)}}), true;
      if (*s < 0) return false;
      // Keep the leading `s` dims (Reshape's 0 copies the input dim), merge the rest.
      std::vector<int64_t> shape(static_cast<size_t>(*s), 0);
      shape.push_back(-1);
      return emit_to(o, "Reshape", {as_ir(in(0)), const_ints(shape)}), true;
    }
    if (op == "permute") {
      auto perm = known_ints(in(1));
      if (!perm) return false;
      for (auto p : *perm)
        if (p < 0) return false;
      return emit_to(o, "Transpose", {as_ir(in(0))}, {{"perm", ais(*perm)}}), true;
    }
    if (op == "transpose" && nin == 3) {
      auto a = known_int(in(1)), b = known_int(in(2));
      if (!a || !b) return false;
      return emit_to(o, "TransposeDims", {as_ir(in(0))}, {{"dim0", ai(*a)}, {"dim1", ai(*b)}}, "flopwise"),
             true;
    }
    if (op == "t")
      return emit_to(o, "TransposeDims", {as_ir(in(0))}, {{"dim0", ai(0)}, {"dim1", ai(1)}}, "flopwise"),
             true;
    if (op == "unsqueeze") {
      auto d = known_int(in(1));
      if (!d) return false;
      return emit_to(o, "Unsqueeze", {as_ir(in(0)), const_ints({*d})}), true;
    }
    if (op == "squeeze") {
      if (nin == 1) return emit_to(o, "Squeeze", {as_ir(in(0))}), true;
      auto d = known_ints(in(1));
      if (!d) return false;
      return emit_to(o, "Squeeze", {as_ir(in(0)), const_ints(*d)}), true;
    }
    if ((op == "cat" || op == "concat" || op == "stack") && nin == 2 && in(0).kind == JV::List) {
      auto dim = known_int(in(1));
      if (!dim) return false;
      std::vector<int> ins;
      for (const auto& it : in(0).items) {
        int x = as_ir(it);
        if (op == "stack") x = emit("Unsqueeze", {x, const_ints({*dim})}, {tmp(o, "unsqueeze")})[0];
        ins.push_back(x);
      }
      return emit_to(o, "Concat", ins, {{"axis", ai(*dim)}}), true;
    }
    if ((op == "split" || op == "chunk") && nin == 3 && o && !o->type()->cast<c10::TensorType>()) {
      auto s = known_int(in(1)), d = known_int(in(2));
      if (!s || !d || in(0).kind != JV::Tensor) return false;
      JV j;
      j.kind = JV::Split;
      j.ir = in(0).ir;
      j.split_size = *s;
      j.split_dim = *d;
      j.split_is_chunks = op == "chunk";
      env_[o] = j;
      return true;
    }
    if (op == "to" || op == "type_as") {
      JV* dt = op == "to" ? arg(n, "dtype") : nullptr;
      if (dt) {
        if (auto st = known_int(*dt))
          if (auto t = dtype_of_scalar_type(*st))
            return emit_to(o, "Cast", {as_ir(in(0))}, {{"to", ai(int64_t(*t))}}), true;
      }
      return emit_to(o, "Identity", {as_ir(in(0))}), true;
    }
    if (op == "expand_as") {
      int shape = emit("Shape", {as_ir(in(1))}, {tmp(o, "shape")})[0];
      return emit_to(o, "Expand", {as_ir(in(0)), shape}), true;
    }

    if (op == "lstm" || op == "gru" || op == "rnn_tanh" || op == "rnn_relu") return lower_rnn(n, op);
    if (op == "upsample_nearest2d" || op == "upsample_bilinear2d" || op == "upsample_nearest1d" ||
        op == "upsample_linear1d" || op == "upsample_nearest3d" || op == "upsample_trilinear3d" ||
        op == "upsample_bicubic2d")
      return lower_upsample(n, op);

    // reductions
    if ((op == "mean" || op == "sum" || op == "amax" || op == "amin") && nin >= 1) {
      std::string onnx = op == "mean"   ? "ReduceMean"
                         : op == "sum"  ? "ReduceSum"
                         : op == "amax" ? "ReduceMax"
                                        : "ReduceMin";
      if (nin <= 2) return emit_to(o, onnx, {as_ir(in(0))}, {{"keepdims", ai(0)}}), true;  // all elements
      auto dims = known_ints(in(1));
      auto keep = known_int(in(2));
      if (!dims || !keep) return false;
      return emit_to(o, onnx, {as_ir(in(0)), const_ints(*dims)}, {{"keepdims", ai(*keep)}}), true;
    }

    // creation
    if (op == "arange") {
      JV* start = arg(n, "start");
      JV* end = arg(n, "end");
      JV* step = arg(n, "step");
      if (!end) return false;
      int s = start ? as_ir(*start) : const_int(0);
      int e = as_ir(*end);
      int st = step ? as_ir(*step) : const_int(1);
      if (s < 0 || e < 0 || st < 0) return false;
      return emit_to(o, "Range", {s, e, st}), true;
    }
    if (op == "zeros" || op == "ones") {
      int shape = pack_ints(in(0));
      if (shape < 0) return false;
      Attribute v;
      v.kind = Attribute::Kind::Tensor;
      v.tensor.dtype = DType::Float32;
      if (JV* dt = arg(n, "dtype"))
        if (auto st = known_int(*dt))
          if (auto t = dtype_of_scalar_type(*st)) v.tensor.dtype = *t;
      v.tensor.dims = {1};
      return emit_to(o, "ConstantOfShape", {shape}, {{"value", v}}), true;
    }
    if (op == "tensor" || op == "scalar_tensor") {
      auto x = known_num(in(0));
      if (!x) return false;
      return set_ir(o, const_float(*x), JV::Tensor), true;
    }
    return false;
  }

  bool lower_conv(Node* n, const std::string& op) {
    const Value* o = n->output();
    auto in = [&](size_t i) -> JV& { return get(n->input(i)); };
    auto stride = known_ints(in(3));
    auto dil = known_ints(in(5));
    std::optional<int64_t> groups;
    bool transposed = false;
    std::vector<int64_t> out_pad;
    if (op == "_convolution" || op == "convolution") {
      auto t = known_int(in(6));
      if (!t) return false;
      transposed = *t != 0;
      if (auto op2 = known_ints(in(7))) out_pad = *op2;
      groups = known_int(in(8));
    } else {
      groups = known_int(in(6));
    }
    if (!stride || !dil || !groups) return false;
    Attrs a{{"strides", ais(*stride)}, {"dilations", ais(*dil)}, {"group", ai(*groups)}};
    JV& pad = in(4);
    if (pad.kind == JV::Known && pad.iv.isString()) {
      a["auto_pad"] = as(pad.iv.toStringRef() == "same" ? "SAME_UPPER" : "VALID");
    } else {
      auto p = known_ints(pad);
      if (!p) return false;
      std::vector<int64_t> pads = *p;
      pads.insert(pads.end(), p->begin(), p->end());
      a["pads"] = ais(pads);
    }
    if (transposed && !out_pad.empty()) a["output_padding"] = ais(out_pad);
    std::vector<int> ins{as_ir(in(0)), as_ir(in(1))};
    if (!is_none(in(2))) ins.push_back(as_ir(in(2)));
    return emit_to(o, transposed ? "ConvTranspose" : "Conv", ins, a), true;
  }

  // aten::lstm/gru/rnn_* (input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
  // batch_first) as torch.onnx exports them: per layer one ONNX LSTM/GRU/RNN (W, R, B from the layer's
  // w_ih, w_hh, b_ih, b_hh), Y [seq, dirs, batch, hidden] -> [seq, batch, dirs*hidden] for the next layer,
  // batch_first by transposes. Initial states are left out: they change neither shapes nor costs.
  bool lower_rnn(Node* n, const std::string& op) {
    auto in = [&](size_t i) -> JV& { return get(n->input(i)); };
    if (n->inputs().size() != 9 || in(2).kind != JV::List) return false;
    auto has_b = known_int(in(3)), layers = known_int(in(4)), bidir = known_int(in(7)), bf = known_int(in(8));
    if (!has_b || !layers || !bidir || !bf) return false;
    int64_t dirs = *bidir ? 2 : 1, per = *has_b ? 4 : 2;
    const auto& params = in(2).items;
    if (static_cast<int64_t>(params.size()) != *layers * dirs * per) return false;
    std::string onnx = op == "lstm" ? "LSTM" : op == "gru" ? "GRU" : "RNN";
    const Value* o = n->output(0);
    int x = as_ir(in(0));
    if (*bf) x = emit("Transpose", {x}, {tmp(o, "seq_first")}, {{"perm", ais({1, 0, 2})}})[0];
    std::vector<int> hs, cs;
    for (int64_t l = 0; l < *layers; ++l) {
      std::vector<int> w, r, b;
      for (int64_t d = 0; d < dirs; ++d) {
        size_t base = static_cast<size_t>((l * dirs + d) * per);
        auto unsq = [&](int v, const std::string& what) {
          return emit("Unsqueeze", {v, const_ints({0})}, {tmp(o, what)})[0];
        };
        w.push_back(unsq(as_ir(params[base]), "W"));
        r.push_back(unsq(as_ir(params[base + 1]), "R"));
        if (*has_b) {
          int cat = emit("Concat", {as_ir(params[base + 2]), as_ir(params[base + 3])}, {tmp(o, "bias")},
                         {{"axis", ai(0)}})[0];
          b.push_back(unsq(cat, "B"));
        }
      }
      auto join = [&](const std::vector<int>& v, const std::string& what) {
        return v.size() == 1 ? v[0] : emit("Concat", v, {tmp(o, what)}, {{"axis", ai(0)}})[0];
      };
      const Shape& whh = g_.values[as_ir(params[static_cast<size_t>(l * dirs * per + 1)])].shape;
      if (!whh.rank_known || whh.rank() != 2 || !whh.dims[1].is_known()) return false;
      Attrs a{{"hidden_size", ai(whh.dims[1].value())},
              {"direction", as(dirs == 2 ? "bidirectional" : "forward")}};
      if (op == "gru") a["linear_before_reset"] = ai(1);
      if (op == "rnn_relu") {
        Attribute acts;
        acts.kind = Attribute::Kind::Strings;
        acts.strings = {"Relu"};
        a["activations"] = acts;
      }
      std::vector<int> ins{x, join(w, "W_all"), join(r, "R_all")};
      if (*has_b) ins.push_back(join(b, "B_all"));
      std::vector<std::string> outs{tmp(o, "Y"), tmp(o, "Y_h")};
      if (op == "lstm") outs.push_back(tmp(o, "Y_c"));
      auto res = emit(onnx, ins, outs, a);
      hs.push_back(res[1]);
      if (op == "lstm") cs.push_back(res[2]);
      int t = emit("Transpose", {res[0]}, {tmp(o, "Y_t")}, {{"perm", ais({0, 2, 1, 3})}})[0];
      x = emit("Reshape", {t, const_ints({0, 0, -1})}, {tmp(o, "Y_seq")})[0];
    }
    if (*bf) x = emit("Transpose", {x}, {tmp(o, "batch_first")}, {{"perm", ais({1, 0, 2})}})[0];
    auto finish = [&](const Value* jo, int v) {
      set_ir(jo, emit("Identity", {v}, {ir_name(jo)})[0], JV::Tensor);
    };
    finish(o, x);
    auto concat_states = [&](const std::vector<int>& v, const Value* jo) {
      if (v.size() == 1) return finish(jo, v[0]);
      set_ir(jo, emit("Concat", v, {ir_name(jo)}, {{"axis", ai(0)}})[0], JV::Tensor);
    };
    concat_states(hs, n->output(1));
    if (op == "lstm") concat_states(cs, n->output(2));
    return true;
  }

  // aten::upsample_*(input, output_size?, [align_corners,] scale_factors?) (the .vec overloads) or
  // (input, output_size, [align_corners,] scales...) -> Resize with scales [1, 1, s...] or sizes
  // [N, C, output_size...].
  bool lower_upsample(Node* n, const std::string& op) {
    const Value* o = n->output();
    JV* size = arg(n, "output_size");
    JV* factors = arg(n, "scale_factors");
    std::string mode = op.find("nearest") != std::string::npos   ? "nearest"
                       : op.find("bicubic") != std::string::npos ? "cubic"
                                                                 : "linear";
    Attrs a{{"mode", as(mode)}};
    if (JV* ac = arg(n, "align_corners"))
      if (auto v = known_int(*ac); v && *v) a["coordinate_transformation_mode"] = as("align_corners");
    int x = as_ir(get(n->input(0)));
    if (factors && !is_none(*factors)) {
      std::vector<double> sc{1.0, 1.0};
      if (factors->kind == JV::Known && factors->iv.isDoubleList()) {
        for (double f : factors->iv.toDoubleVector()) sc.push_back(f);
      } else if (factors->kind == JV::List) {
        for (const auto& it : factors->items) {
          auto f = known_num(it);
          if (!f) return false;
          sc.push_back(*f);
        }
      } else {
        return false;
      }
      ConstData d;
      d.is_float = true;
      d.floats = sc;
      int scales = const_value(DType::Float32, Shape({Dim(static_cast<int64_t>(sc.size()))}), d);
      return emit_to(o, "Resize", {x, -1, scales}, a), true;
    }
    if (!size || is_none(*size)) return false;
    int sz = pack_ints(*size);
    if (sz < 0) return false;
    int shape = emit("Shape", {x}, {tmp(o, "shape")})[0];
    int nc = emit("Slice", {shape, const_ints({0}), const_ints({2})}, {tmp(o, "nc")})[0];
    int sizes = emit("Concat", {nc, sz}, {tmp(o, "sizes")}, {{"axis", ai(0)}})[0];
    return emit_to(o, "Resize", {x, -1, -1, sizes}, a), true;
  }

  bool lower_pool(Node* n, const std::string& op) {
    const Value* o = n->output();
    auto in = [&](size_t i) -> JV& { return get(n->input(i)); };
    bool is_max = op.rfind("max", 0) == 0;
    auto k = known_ints(in(1));
    auto s = known_ints(in(2));
    auto p = known_ints(in(3));
    if (!k || !p) return false;
    if (!s || s->empty()) s = k;
    std::vector<int64_t> pads = *p;
    pads.insert(pads.end(), p->begin(), p->end());
    Attrs a{{"kernel_shape", ais(*k)}, {"strides", ais(*s)}, {"pads", ais(pads)}};
    if (is_max) {
      auto d = known_ints(in(4));
      auto c = known_int(in(5));
      if (!d || !c) return false;
      a["dilations"] = ais(*d);
      a["ceil_mode"] = ai(*c);
      return emit_to(o, "MaxPool", {as_ir(in(0))}, a), true;
    }
    auto c = known_int(in(4));
    auto cip = known_int(in(5));
    if (!c || !cip) return false;
    if (n->inputs().size() > 6 && !is_none(in(6))) return false;  // divisor_override: not ONNX
    a["ceil_mode"] = ai(*c);
    a["count_include_pad"] = ai(*cip);
    return emit_to(o, "AveragePool", {as_ir(in(0))}, a), true;
  }
};

void write_err(const std::string& msg, char* err, size_t errlen) {
  if (!err || errlen == 0) return;
  std::snprintf(err, errlen, "%s", msg.c_str());
}

}  // namespace
}  // namespace flopwise

extern "C" __attribute__((visibility("default"))) int flopwise_torch_import(
    const char* path, const flopwise::InferOptions* pins, flopwise::Model* out, char* err, size_t errlen) {
  using namespace flopwise;
  try {
    InferOptions none;
    Prepared p = prepare(path, pins ? *pins : none);
    Model m;
    m.path = path;
    m.format = "torchscript";
    m.producer = std::string("pytorch ") + std::to_string(TORCH_VERSION_MAJOR) + "." +
                 std::to_string(TORCH_VERSION_MINOR);
    m.opsets[""] = kOpset;
    m.opsets["flopwise"] = 1;
    m.graph.name = clean_class(p.module.type()->name()->qualifiedName());
    m.warnings = p.warnings;
    Lowerer(p, m).run();
    *out = std::move(m);
    return kTorchOk;
  } catch (const UsageError& e) {
    write_err(e.what(), err, errlen);
    return kTorchUsageError;
  } catch (const Error& e) {
    write_err(e.what(), err, errlen);
    return kTorchInputError;
  } catch (const c10::Error& e) {
    write_err(std::string(path) + ": LibTorch: " + first_line(e.what_without_backtrace()), err, errlen);
    return kTorchInputError;
  } catch (const std::exception& e) {
    write_err(std::string(path) + ": " + e.what(), err, errlen);
    return kTorchInputError;
  }
}

extern "C" __attribute__((visibility("default"))) int flopwise_torch_real_shapes(
    const char* path, const flopwise::InferOptions* pins,
    std::vector<std::pair<std::string, std::vector<int64_t>>>* out, char* err, size_t errlen) {
  using namespace flopwise;
  namespace tj = torch::jit;
  try {
    InferOptions none;
    Prepared p = prepare(path, pins ? *pins : none);
    auto& g = *p.graph;
    std::vector<tj::Value*> probes;
    for (auto* n : g.nodes()) {
      if (std::string(n->kind().toQualString()).rfind("aten::", 0) != 0) continue;
      for (auto* o : n->outputs())
        if (o->type()->cast<c10::TensorType>()) probes.push_back(o);
    }
    // Return (original outputs..., every probed tensor) as one tuple.
    std::vector<tj::Value*> all(g.outputs().begin(), g.outputs().end());
    size_t n_orig = all.size();
    all.insert(all.end(), probes.begin(), probes.end());
    auto* tup = g.insertNode(g.createTuple(all));
    while (!g.outputs().empty()) g.eraseOutput(0);
    g.registerOutput(tup->output());
    std::vector<c10::IValue> stack{p.module._ivalue()};
    for (const auto& d : p.inputs) {
      std::vector<int64_t> dims;
      bool known = d.shape->fully_known();
      if (known)
        for (const auto& x : d.shape->dims) dims.push_back(x.value());
      if (!known)
        throw UsageError("input '" + d.name + "' needs a fully known shape to run (" + d.shape->str() + ")");
      stack.push_back(torch::zeros(dims, torch::TensorOptions().dtype(scalar_type_of(d.dtype))));
    }
    torch::NoGradGuard ng;
    tj::GraphFunction fn("flopwise_probe", p.graph, nullptr);
    auto res = fn(stack).toTuple();
    for (size_t i = 0; i < probes.size(); ++i) {
      auto t = res->elements()[n_orig + i].toTensor();
      out->push_back({"%" + probes[i]->debugName(), t.sizes().vec()});
    }
    return kTorchOk;
  } catch (const UsageError& e) {
    write_err(e.what(), err, errlen);
    return kTorchUsageError;
  } catch (const Error& e) {
    write_err(e.what(), err, errlen);
    return kTorchInputError;
  } catch (const c10::Error& e) {
    write_err(std::string(path) + ": LibTorch: " + first_line(e.what_without_backtrace()), err, errlen);
    return kTorchInputError;
  } catch (const std::exception& e) {
    write_err(std::string(path) + ": " + e.what(), err, errlen);
    return kTorchInputError;
  }
}
