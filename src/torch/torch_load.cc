// src/torch/torch_load.cc — see torch_load.h.
#include "torch_load.h"

#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "flopwise/errors.h"
#include "torch_types.h"

namespace flopwise {
namespace {

namespace tj = torch::jit;
using tj::Node;
using tj::Value;

bool is_zip(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char m[4] = {0, 0, 0, 0};
  f.read(m, 4);
  return f.gcount() == 4 && m[0] == 'P' && m[1] == 'K' && m[2] == 3 && m[3] == 4;
}

// Non-tensor values known without shapes: constants, module attributes, and simple logic on them.
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
        // `x is None` is known when x's static type cannot be None.
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
      if (!in[0].isNone() && !in[1].isNone()) return std::nullopt;  // identity of two objects: not here
      bool same = in[0].isNone() && in[1].isNone();
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

// Resolves prim::If nodes whose condition is known without shapes (module attributes such as `training`
// or `use_res_connect`, constants, `is None` tests on None-typed attributes), and Ifs where one branch
// only raises (input checks: a model that runs takes the other). Conditions on shapes, dtypes and the
// inference run's facts are resolved later, while lowering (lowerer.cc), when shapes are known.
void resolve_static_ifs(tj::Graph& g, Evaluator& ev) {
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
  if (std::regex_search(what, m, unknown_op)) {
    std::string op = m[1].str();
    std::string version = std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR);
    // PyTorch's own namespaces: the archive was saved by a newer torch (torch 2.x's
    // aten::scaled_dot_product_attention in a LibTorch 1.13 build); any other is a custom op.
    if (op.rfind("aten::", 0) == 0 || op.rfind("prim::", 0) == 0 || op.rfind("quantized::", 0) == 0)
      return InputError(path + ": uses operator " + op + ", which this LibTorch (" + version +
                        ") does not know: the archive was saved by a newer PyTorch; build flopwise against a "
                        "LibTorch at least as new (docs/torchscript.md, TorchScript from PyTorch 2.x)");
    return InputError(path + ": uses operator " + op + ", which LibTorch " + version +
                      " does not know (a custom op not registered in this build)");
  }
  if (what.find("PytorchStreamReader") != std::string::npos || what.find("hasRecord") != std::string::npos ||
      what.find("constants.pkl") != std::string::npos || what.find("data.pkl") != std::string::npos) {
    return InputError(
        path + ": a zip archive but not a TorchScript module (no torch.jit.save records: " + msg + ")");
  }
  return InputError(path + ": LibTorch cannot load it: " + msg);
}

bool is_tensor_type(const c10::TypePtr& t) { return t->cast<c10::TensorType>() != nullptr; }

// Whether every argument after self is a tensor, or has a default (Optional hx, need_weights, ...).
bool callable_with_tensors(const c10::FunctionSchema& s) {
  for (size_t i = 1; i < s.arguments().size(); ++i) {
    const auto& a = s.arguments()[i];
    if (!is_tensor_type(a.type()) && !a.default_value()) return false;
  }
  return true;
}

// The method that stands for forward: `forward`, or for a module scripted with overloads (nn.LSTM,
// nn.GRU, nn.RNN compile `forward__0(Tensor input, hx=None)` and `forward__1(PackedSequence ...)`) the
// first overload callable with tensors alone.
std::string forward_method(tj::Module& m, const std::string& path) {
  if (m.find_method("forward")) return "forward";
  std::string names;
  for (const auto& meth : m.get_methods()) {
    const std::string& n = meth.name();
    if (n.rfind("forward", 0) != 0) continue;
    names += (names.empty() ? "" : ", ") + n;
    if (callable_with_tensors(meth.function().getSchema())) return n;
  }
  throw InputError(path + ": TorchScript module has no forward method" +
                   (names.empty() ? std::string() : " callable with tensors (overloads: " + names + ")"));
}

std::vector<InputDecl> read_recorded_inputs(const std::string& json, std::vector<std::string>& warnings) {
  std::vector<InputDecl> recorded;
  if (json.empty()) return recorded;
  try {
    for (const auto& j : nlohmann::json::parse(json)) {
      InputDecl d;
      d.name = j.value("name", "");
      std::vector<Dim> dims;
      for (const auto& x : j.at("shape")) {
        if (!x.is_number_integer() || x.get<int64_t>() < 0)
          throw std::runtime_error("shape entry " + x.dump() + " is not a non-negative integer");
        dims.push_back(Dim(x.get<int64_t>()));
      }
      d.shape = Shape(dims);
      if (auto t = parse_dtype(j.value("dtype", "float32"))) d.dtype = *t;
      recorded.push_back(d);
    }
  } catch (const std::exception& e) {
    warnings.push_back(std::string("ignored flopwise_inputs.json: ") + e.what());
    recorded.clear();
  }
  return recorded;
}

// Applies the pins to input `d` (by name, else, for a tensor argument, the next unnamed pin in order).
bool apply_pins(InputDecl& d, const InferOptions& pins, size_t& positional, bool allow_positional) {
  for (const auto& pin : pins.inputs) {
    if (pin.name.empty() || pin.name != d.name) continue;
    if (pin.shape) d.shape = pin.shape;
    if (pin.dtype) d.dtype = *pin.dtype;
    return true;
  }
  if (!allow_positional) return false;
  size_t seen = 0;
  for (const auto& pin : pins.inputs) {
    if (!pin.name.empty()) continue;
    if (seen++ == positional) {
      if (pin.shape) d.shape = pin.shape;
      if (pin.dtype) d.dtype = *pin.dtype;
      positional++;
      return true;
    }
  }
  positional++;
  return false;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> module_scope(
    const tj::Module& root, const std::vector<std::pair<std::string, std::string>>& calls) {
  std::vector<std::pair<std::string, std::string>> levels;
  std::string path;
  c10::intrusive_ptr<c10::ivalue::Object> cur = root._ivalue();
  auto child = [](const c10::intrusive_ptr<c10::ivalue::Object>& o,
                  const std::string& name) -> c10::intrusive_ptr<c10::ivalue::Object> {
    if (!o->type()->hasAttribute(name)) return {};
    auto a = o->getAttr(name);
    return a.isObject() ? a.toObject() : c10::intrusive_ptr<c10::ivalue::Object>();
  };
  auto push = [&](const std::string& name, const c10::intrusive_ptr<c10::ivalue::Object>& o) {
    path = path.empty() ? name : path + "." + name;
    levels.emplace_back(path, clean_class(o->type()->name()->qualifiedName()));
    cur = o;
  };
  for (const auto& [inst, cls] : calls) {
    if (inst.empty() || inst == "SELF" || inst == "TOP") continue;  // a method of the same module
    // The interpreter's frame of a free function (not inlined): "CALL_FUNCTION::name()::name".
    if (inst.rfind("CALL_FUNCTION", 0) == 0) continue;
    if (auto c = child(cur, inst)) {
      push(inst, c);
      continue;
    }
    // A container level the calls skipped: the child of a child. Several containers can hold a child of
    // that name (zip over two nn.ModuleLists: "stages.0" and "lateral.0"): the one of the recorded class
    // wins, else the first.
    size_t pick = SIZE_MAX;
    c10::intrusive_ptr<c10::ivalue::Object> picked;
    for (size_t i = 0; i < cur->type()->numAttributes(); ++i) {
      auto a = cur->getSlot(i);
      if (!a.isObject()) continue;
      auto c = child(a.toObject(), inst);
      if (!c) continue;
      bool same_class = clean_class(c->type()->name()->qualifiedName()) == cls;
      if (pick == SIZE_MAX || same_class) pick = i, picked = c;
      if (same_class) break;
    }
    if (pick != SIZE_MAX) {
      push(cur->type()->getAttributeName(pick), cur->getSlot(pick).toObject());
      push(inst, picked);
      continue;
    }
    if (inst == "self") continue;
    // Not in the tree (should not happen): keep the recorded name and class.
    path = path.empty() ? inst : path + "." + inst;
    levels.emplace_back(path, cls);
  }
  return levels;
}

std::vector<ModuleDecl> module_tree(const tj::Module& root) {
  std::vector<ModuleDecl> out;
  // One id per stored tensor: a tied parameter is the same storage at the same offset, shape and strides in
  // every module holding it (the archive pickles each storage once).
  std::map<std::tuple<const void*, int64_t, std::vector<int64_t>, std::vector<int64_t>>, int64_t> ids;
  // Pre-order with an explicit stack (children pushed in reverse so the first registered is visited first).
  std::vector<std::pair<std::string, tj::Module>> stack{{"", root}};
  constexpr size_t kMaxModules = 1 << 20;  // a hostile archive's tree is bounded like its graph
  while (!stack.empty() && out.size() < kMaxModules) {
    auto [path, m] = std::move(stack.back());
    stack.pop_back();
    ModuleDecl d;
    d.path = path;
    d.cls = clean_class(m.type()->name() ? m.type()->name()->qualifiedName() : std::string());
    for (const auto& p : m.named_parameters(/*recurse=*/false)) {
      const at::Tensor& t = p.value;
      if (!t.defined()) continue;
      auto key = std::make_tuple(
          t.has_storage() ? t.storage().data() : static_cast<const void*>(t.unsafeGetTensorImpl()),
          static_cast<int64_t>(t.has_storage() ? t.storage_offset() : 0), t.sizes().vec(), t.strides().vec());
      auto it = ids.try_emplace(std::move(key), static_cast<int64_t>(ids.size())).first;
      d.params.emplace_back(it->second, t.numel());
    }
    std::vector<std::pair<std::string, tj::Module>> children;
    for (const auto& c : m.named_children())
      children.emplace_back(path.empty() ? c.name : path + "." + c.name, c.value);
    for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back(std::move(*it));
    out.push_back(std::move(d));
  }
  return out;
}

void inline_block(tj::Node* n, tj::Block* b) {
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    tj::Node* c = *it;
    ++it;
    c->moveBefore(n);
  }
  for (size_t i = 0; i < n->outputs().size(); ++i) n->outputs()[i]->replaceAllUsesWith(b->outputs()[i]);
  n->destroy();
}

namespace {
// Inlines the calls in `b`, each with its callee's saved graph, itself inlined first (bottom-up, as
// torch::jit::Inline does, so the inlined call stacks are ordered outermost first). torch::jit::Inline takes
// each callee's pre-optimized graph instead (peephole rewrites such as merging a cat of cats): not the
// graph the archive holds, nor the one `flopwise run --verify` executes.
using Inlined = std::unordered_map<tj::GraphFunction*, std::shared_ptr<tj::Graph>>;
void inline_calls(tj::Block* b, Inlined& done, int depth);

std::shared_ptr<tj::Graph> inlined_graph(tj::GraphFunction* fn, Inlined& done, int depth) {
  constexpr int kMaxDepth = 256;  // TorchScript has no recursion; this bounds a malformed archive
  if (depth > kMaxDepth) throw InputError("TorchScript calls nest deeper than " + std::to_string(kMaxDepth));
  auto it = done.find(fn);
  if (it != done.end()) return it->second;
  auto g = fn->graph()->copy();
  inline_calls(g->block(), done, depth + 1);
  done.emplace(fn, g);
  return g;
}

// Sets the call stacks of `n` and every node in its blocks: the frame `top` put outside what they had.
void push_frame(tj::Node* n, const std::function<tj::InlinedCallStackPtr(tj::Node*)>& top) {
  n->setCallStack(top(n));
  for (auto* b : n->blocks())
    for (auto* m : b->nodes()) push_frame(m, top);
}

// Replaces call node `n` by the nodes of `callee` (its function `fn`'s graph). torch::jit::inlineCallTo
// gives the inserted nodes the call's frame but leaves nodes inside their blocks without it, so an op in an
// `if` of an inlined free function would lose its module scope: those get the same frame here.
void inline_call(tj::Node* n, tj::GraphFunction* fn, tj::Graph& callee) {
  tj::Node* before = n->prev();
  tj::Node* after = n->next();
  tj::SourceRange site = n->sourceRange();
  bool method = n->kind() == c10::prim::CallMethod;
  tj::inlineCallTo(n, fn, &callee);  // destroys n
  // The frame inlineCallTo made (its module instance cannot be built outside LibTorch), from any inserted
  // node; a function call has no module instance.
  // c10::optional in LibTorch 1.13, std::optional from 2.x: the type module_instance() returns.
  std::decay_t<decltype(std::declval<tj::InlinedCallStack&>().module_instance())> instance;
  bool found = false;
  for (tj::Node* m = before->next(); m != after && !found; m = m->next())
    if (auto cs = m->callstack(); cs && (*cs)->function() == fn)
      instance = (*cs)->module_instance(), found = true;
  if (!found && method) return;  // nothing inserted carries the instance
  std::unordered_map<tj::InlinedCallStack*, tj::InlinedCallStackPtr> framed;  // shared tails stay shared
  std::function<void(tj::Block*)> frame_block = [&](tj::Block* b) {
    for (auto* m : b->nodes()) {
      auto cs = m->callstack();
      if (!cs || (*cs)->function() != fn) {
        tj::InlinedCallStack* key = cs ? cs->get() : nullptr;
        auto it = framed.find(key);
        if (it == framed.end())
          it = framed
                   .emplace(key, cs ? c10::make_intrusive<tj::InlinedCallStack>(*cs, fn, site, instance)
                                    : c10::make_intrusive<tj::InlinedCallStack>(fn, site, instance))
                   .first;
        m->setCallStack(it->second);
      }
      for (auto* sub : m->blocks()) frame_block(sub);
    }
  };
  for (tj::Node* m = before->next(); m != after; m = m->next())
    for (auto* sub : m->blocks()) frame_block(sub);
}

void inline_calls(tj::Block* b, Inlined& done, int depth) {
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    tj::Node* n = *it++;
    if (n->kind() == c10::prim::CallMethod || n->kind() == c10::prim::CallFunction) {
      if (tj::GraphFunction* fn = tj::tryToGraphFunction(n)) {
        auto g = inlined_graph(fn, done, depth);
        if (n->kind() == c10::prim::CallFunction) n->removeInput(0);  // the function constant
        inline_call(n, fn, *g);
      }
      continue;
    }
    for (auto* sub : n->blocks()) inline_calls(sub, done, depth);
  }
}
}  // namespace

void inline_as_saved(tj::Graph& g) {
  Inlined done;
  inline_calls(g.block(), done, 0);
}

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
  p.method = forward_method(p.module, path);
  auto method = p.module.get_method(p.method);
  p.graph = method.graph()->copy();
  inline_as_saved(*p.graph);
  Evaluator ev{p.module, {}};
  resolve_static_ifs(*p.graph, ev);
  tj::EliminateDeadCode(p.graph);

  std::vector<InputDecl> recorded = read_recorded_inputs(extra["flopwise_inputs.json"], p.warnings);
  const auto& schema = method.function().getSchema();
  auto ins = p.graph->inputs();
  size_t positional = 0, next_recorded = 0;
  for (size_t i = 1; i < ins.size(); ++i) {
    InputDecl d;
    const c10::Argument* arg = i < schema.arguments().size() ? &schema.arguments()[i] : nullptr;
    d.name = arg ? arg->name() : strip_suffix(ins[i]->debugName());
    bool tensor = is_tensor_type(ins[i]->type());
    // Recorded example inputs are the tensors passed, in order (a trace's graph inputs; a script's
    // tensor arguments); a recorded name matching an optional argument passes that one too.
    bool named = false;
    for (const auto& r : recorded) named = named || (!r.name.empty() && r.name == d.name);
    if (tensor || named) {
      for (const auto& r : recorded)
        if (!r.name.empty() && r.name == d.name) d.shape = r.shape, d.dtype = r.dtype;
      if (!d.shape && tensor && next_recorded < recorded.size()) {
        d.shape = recorded[next_recorded].shape;
        d.dtype = recorded[next_recorded].dtype;
      }
      if (tensor) next_recorded++;
      if (auto tt = ins[i]->type()->cast<c10::TensorType>(); tt && !d.shape) {
        if (auto sizes = tt->sizes().concrete_sizes()) {
          std::vector<Dim> dims;
          for (auto x : *sizes) dims.push_back(Dim(x));
          d.shape = Shape(dims);
        }
        if (auto st = tt->scalarType())
          if (auto dt = dtype_of_scalar_type(static_cast<int64_t>(*st))) d.dtype = *dt;
      }
    }
    bool pinned = apply_pins(d, pins, positional, tensor);
    if (!tensor && !named && !pinned) {
      if (!arg || !arg->default_value())
        throw InputError(path + ": forward argument '" + d.name + "' is not a tensor (" +
                         ins[i]->type()->str() + ") and has no default; only tensor inputs can be given");
      d.value = *arg->default_value();
      p.inputs.push_back(d);
      continue;
    }
    if (!d.shape)
      throw UsageError(path + ": input '" + d.name +
                       "' has no recorded shape (a scripted module keeps none): give it with --input " +
                       d.name + ":SHAPE[:dtype] or --input SHAPE for the inputs in order");
    p.inputs.push_back(d);
  }
  return p;
}

}  // namespace flopwise
