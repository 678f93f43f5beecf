// src/pt2/pt2_nodes.cc — a program's nodes lowered (pt2_lower.h): aten calls with every argument in
// schema position, outputs bound to the names the program gives them, higher-order ops, and what is not
// counted (custom ops, triton kernels, data-dependent control flow) listed with why.
#include <algorithm>

#include "flopwise/errors.h"
#include "pt2/pt2_lower.h"

namespace flopwise::pt2 {

namespace {

std::optional<std::pair<std::string_view, std::string_view>> aten_target(std::string_view t) {
  constexpr std::string_view kAten = "torch.ops.aten.";
  if (t.substr(0, kAten.size()) != kAten) return std::nullopt;
  t.remove_prefix(kAten.size());
  auto dot = t.find('.');
  if (dot == std::string_view::npos) return std::make_pair(t, std::string_view("default"));
  return std::make_pair(t.substr(0, dot), t.substr(dot + 1));
}

// Ops that compute nothing a cost counts: checks and symbolic-size bookkeeping.
bool is_bookkeeping_op(std::string_view op) {
  static const std::string_view kOps[] = {
      "_assert_scalar", "_assert_tensor_metadata", "sym_constrain_range",      "sym_constrain_range_for_size",
      "_assert_async",  "_check_is_size",          "_functional_assert_async", "_print"};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

bool has_tensor_output(const Node& n) {
  for (const Argument& a : n.outputs)
    if (a.kind == ArgKind::Tensor || a.kind == ArgKind::Tensors || a.kind == ArgKind::OptionalTensors)
      return true;
  return false;
}

const Argument* input_named(const Node& n, std::string_view name) {
  for (const NamedArgument& a : n.inputs)
    if (a.name == name) return &a.arg;
  return nullptr;
}

// "L['self'].layers[0].attn" / "layers.0.attn" -> "layers.0.attn"; "" for the root.
std::string module_path(std::string_view p) {
  for (std::string_view root : {"L['self']", "L[\"self\"]", "self"}) {
    if (p.substr(0, root.size()) == root) {
      p.remove_prefix(root.size());
      if (!p.empty() && p.front() == '.') p.remove_prefix(1);
      break;
    }
  }
  std::string r;
  r.reserve(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '[') {
      if (!r.empty()) r += '.';
      continue;
    }
    if (c == ']' || c == '\'' || c == '"') continue;
    r += c;
  }
  return r;
}

// "torch.nn.modules.linear.Linear" / "<class 'x.Y'>" -> "Linear" / "Y".
std::string module_class(std::string_view t) {
  while (!t.empty() && (t.back() == '>' || t.back() == '\'')) t.remove_suffix(1);
  auto dot = t.rfind('.');
  return std::string(dot == std::string_view::npos ? t : t.substr(dot + 1));
}

}  // namespace

void Pt2Lowerer::set_node_scope(const Node& n) {
  if (scope_set_ && n.module_stack.same(scope_frames_)) return;  // consecutive nodes share one
  scope_frames_ = n.module_stack;
  scope_set_ = true;
  std::vector<std::string> scope, classes;
  for (const ModuleFrame& f : n.module_stack) {
    std::string path = module_path(f.path);
    if (path.empty()) continue;
    scope.push_back(std::move(path));
    classes.push_back(module_class(f.type));
  }
  set_scope(std::move(scope), std::move(classes));
}

void Pt2Lowerer::lower_graph_nodes(const Graph& g) {
  for (const Node& n : g.nodes) lower_node(n);
}

void Pt2Lowerer::lower_node(const Node& n) {
  set_node_scope(n);
  if (auto t = aten_target(n.target)) {
    if (is_bookkeeping_op(t->first) || !has_tensor_output(n)) return;  // sizes are the program's records
    if (!lower_aten_call(n, t->first, t->second)) keep_unsupported(n, "aten", t->first, "");
    return;
  }
  constexpr std::string_view kHop = "torch.ops.higher_order.";
  if (n.target.substr(0, kHop.size()) == kHop) {
    std::string_view hop = n.target.substr(kHop.size());
    if (!lower_hop(n, hop)) keep_unsupported(n, "higher_order", hop, "");
    return;
  }
  if (!has_tensor_output(n)) return;  // Python arithmetic on sizes (_operator.*, torch.sym_*, math.*)
  auto dot = n.target.rfind('.');
  std::string_view target = n.target.substr(0, dot == std::string_view::npos ? n.target.size() : dot);
  constexpr std::string_view kOps = "torch.ops.";
  if (target.substr(0, kOps.size()) != kOps) {
    // A Python function (torch.vmap's torch._functorch.predispatch._add_batch_dim): "module::function".
    if (dot != std::string_view::npos) {
      const std::string qualified = std::string(target) + "::" + std::string(n.target.substr(dot + 1));
      if (aten_schemas().find(qualified, "") && lower_schema_call(n, qualified, "")) return;
    }
    keep_unsupported(n, "python", n.target, "a Python function: flopwise has no cost rule for it");
    return;
  }
  target.remove_prefix(kOps.size());
  auto sep = target.find('.');
  const std::string_view ns = sep == std::string_view::npos ? "python" : target.substr(0, sep);
  const std::string_view op = sep == std::string_view::npos ? target : target.substr(sep + 1);
  // A library op flopwise knows as an aten op in all but name (aten_schema.h).
  const std::string qualified = std::string(ns) + "::" + std::string(op);
  if (sep != std::string_view::npos && aten_schemas().find(qualified, n.target.substr(dot + 1)) &&
      lower_schema_call(n, qualified, n.target.substr(dot + 1)))
    return;
  keep_unsupported(n, ns, op, "a custom op: flopwise has no cost rule for it");
}

// The schema looked up once per distinct target (a model calls a few dozen ops thousands of times).
bool Pt2Lowerer::lower_aten_call(const Node& n, std::string_view name, std::string_view overload) {
  auto [it, fresh] = aten_schema_of_.try_emplace(n.target, nullptr);
  if (fresh) it->second = aten_schemas().find("aten::" + std::string(name), overload);
  return lower_schema_call(n, it->second);
}

bool Pt2Lowerer::lower_schema_call(const Node& n, const std::string& name, std::string_view overload) {
  return lower_schema_call(n, aten_schemas().find(name, overload));
}

bool Pt2Lowerer::lower_schema_call(const Node& n, const AtenSchema* s) {
  if (!s) return false;
  AtenNode call;
  call.kind = s->name;
  call.arg_names = &s->arg_names;
  call.ins.reserve(s->args.size());
  size_t positional = 0;
  for (size_t i = 0; i < s->args.size(); ++i) {
    const AtenArg& a = s->args[i];
    const Argument* given = input_named(n, a.name);
    if (!given && n.inputs.size() > positional && n.inputs[positional].name.empty())
      given = &n.inputs[positional].arg;
    ++positional;
    if (given) {
      call.ins.push_back(value_of(*given, a.type));
    } else if (a.default_value) {
      call.ins.push_back(default_literal(a));
    } else {
      return false;
    }
  }
  // Outputs: one per returned value; a returned list (split, unbind) is one value, unpacked after.
  std::vector<const AtenValue*> outs;
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    const Argument& o = n.outputs[i];
    AtenType t = i < s->returns.size() ? s->returns[i] : AtenType();
    if (o.kind == ArgKind::Tensor) t.kind = AtenType::Tensor;
    const AtenValue* v = o.kind == ArgKind::Tensor || (!o.s.empty() && o.kind != ArgKind::Tensors)
                             ? named(o.s, t)
                             : make("out" + std::to_string(anon_++), t);
    outs.push_back(v);
  }
  call.outs = outs;
  if (!lower_aten(call)) return false;
  bind_outputs(n.outputs, outs);
  return true;
}

// A returned list's items bound to the names the program gives them (a pending split becomes one Split
// node); every named tensor gets its recorded type.
void Pt2Lowerer::bind_outputs(const std::vector<Argument>& outs, const std::vector<const AtenValue*>& vals) {
  for (size_t i = 0; i < outs.size() && i < vals.size(); ++i) {
    const Argument& o = outs[i];
    if (o.kind == ArgKind::Tensor) {
      declare(vals[i], o.s);
      continue;
    }
    if (o.kind != ArgKind::Tensors && o.kind != ArgKind::OptionalTensors) continue;
    JV list = get(vals[i]);
    std::vector<JV> items;
    if (list.kind == JV::List && list.items->size() == o.items.size()) {
      items = *list.items;
    } else if (list.kind == JV::Split) {
      std::vector<std::string> names;
      for (const Argument& x : o.items) names.push_back("%" + std::string(x.s));
      auto res =
          emit("Split", {list.ir}, names,
               {{"axis", ai(list.split_dim)}, {"num_outputs", ai(static_cast<int64_t>(o.items.size()))}});
      for (int r : res) items.push_back(JV::of_ir(r));
    } else {
      continue;
    }
    for (size_t k = 0; k < o.items.size(); ++k) {
      if (o.items[k].kind != ArgKind::Tensor) continue;
      const AtenValue* item = named(o.items[k].s, AtenType{AtenType::Tensor});
      set(item, items[k]);
      declare(item, o.items[k].s);
    }
  }
}

// Kept as a node of its own domain: listed as unsupported (with why, where there is more to say).
void Pt2Lowerer::keep_unsupported(const Node& n, std::string_view domain, std::string_view op,
                                  const std::string& why) {
  std::vector<int> ins;
  for (const NamedArgument& a : n.inputs)
    if (a.arg.kind == ArgKind::Tensor) ins.push_back(as_ir(get(named(a.arg.s, AtenType{AtenType::Tensor}))));
  std::vector<std::string> outs;
  std::vector<std::string_view> names;
  for (const Argument& o : n.outputs) {
    if (o.kind == ArgKind::Tensor) names.push_back(o.s);
    for (const Argument& x : o.items)
      if (x.kind == ArgKind::Tensor) names.push_back(x.s);
  }
  for (auto nm : names) outs.push_back("%" + std::string(nm));
  auto res = emit(std::string(op), ins, outs, {}, std::string(domain), 1);
  for (size_t k = 0; k < names.size(); ++k) {
    const AtenValue* v = named(names[k], AtenType{AtenType::Tensor});
    set_ir(v, res[k]);
    declare(v, names[k]);
  }
  if (!why.empty())
    warn(std::string(domain) + "::" + std::string(op) + " in scope '" + scope() + "': " + why);
}

}  // namespace flopwise::pt2
