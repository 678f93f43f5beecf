// src/pt2/pt2_program.cc — a program as a whole (pt2_lower.h): the signature's inputs (user inputs with
// their symbolic sizes, parameters and buffers as initializers, a tied parameter once), its outputs, the
// higher-order ops' subgraphs, the module tree, and the entry points of flopwise/pt2_import.h.
#include <algorithm>
#include <deque>
#include <map>
#include <unordered_map>

#include "flopwise/errors.h"
#include "flopwise/pt2_import.h"
#include "pt2/pt2_lower.h"

namespace flopwise::pt2 {

void Pt2Lowerer::run() {
  // Room for what the nodes become (Llama-3: 1.3 IR nodes, 2.1 IR values and 2.8 bound values per program
  // node), so that the tables do not regrow and rehash as they fill.
  const size_t n = p_.graph.nodes.size();
  g_.nodes.reserve(n + n / 2);
  g_.reserve_values(p_.inputs.size() + n * 5 / 2);
  env_.reserve(p_.inputs.size() + n * 3);
  frames_.push_back(Frame{&p_.graph, {}});
  inputs();
  lower_graph_nodes(p_.graph);
  set_scope({}, {});
  scope_set_ = false;
  outputs();
  module_tree();
  dim_names();
  for (auto& w : dims_.warnings) warn(w);
}

// torch's symbols as other names of the input dims they stand for (--dim s70=8), and their range_constraints.
void Pt2Lowerer::dim_names() {
  for (const auto& [torch_name, name] : dims_.names().aliases())
    if (torch_name != name) m_.dim_aliases[torch_name] = name;
  for (const auto& [expr, range] : p_.range_constraints) {
    Dim d = dims_.expr(expr);
    if (!d.is_symbolic() || d.terms().size() != 1) continue;
    const auto& [mono, coef] = d.terms()[0];
    if (coef != 1 || mono.size() != 1 || Dim::atom(mono[0])) continue;
    m_.dim_bounds[mono[0]] = {range.min, range.max};
  }
}

void Pt2Lowerer::inputs() {
  std::map<std::string_view, int> by_payload;  // canonical parameter name -> its initializer
  for (const InputSpec& in : p_.inputs) {
    if (in.arg.kind != ArgKind::Tensor) {
      if (in.arg.kind == ArgKind::SymInt && !in.arg.s.empty()) named(in.arg.s, AtenType{AtenType::Int});
      continue;  // tokens, custom objects, constant inputs (bound where used)
    }
    const AtenValue* v = named(in.arg.s, AtenType{AtenType::Tensor});
    auto meta = p_.graph.tensor_values.find(in.arg.s);
    if (meta == p_.graph.tensor_values.end())
      throw InputError("input '" + std::string(in.arg.s) + "' has no tensor value");
    const ScalarTypeInfo* info = scalar_type_info(meta->second.dtype_code);
    if (in.kind == InputKind::UserInput) {
      int vi = g_.add_value(std::string(in.arg.s));
      g_.values[vi].is_input = true;
      g_.values[vi].dtype = info ? info->ir : DType::Undefined;
      g_.values[vi].shape = shape_of(meta->second);
      g_.inputs.push_back(vi);
      set_ir(v, vi);
      continue;
    }
    std::string_view canon = p_.canonical_payload(in.target);
    if (auto it = by_payload.find(canon); it != by_payload.end()) {
      set_ir(v, it->second);  // a tied parameter: the tensor it shares, counted once
      continue;
    }
    int vi = new_value(std::string(in.target.empty() ? in.arg.s : in.target));
    g_.values[vi].dtype = info ? info->ir : DType::Undefined;
    g_.values[vi].shape = shape_of(meta->second);
    g_.values[vi].is_initializer = true;
    g_.values[vi].is_buffer = in.kind != InputKind::Parameter;
    g_.values[vi].is_parameter = in.kind == InputKind::Parameter;
    by_payload.emplace(canon, vi);
    set_ir(v, vi);
  }
}

void Pt2Lowerer::outputs() {
  std::vector<int> forward_roots;  // what the forward computes: its outputs, the loss, mutated buffers
  bool joint = false;
  for (const OutputSpec& o : p_.outputs) {
    joint = joint || o.kind == OutputKind::GradientToParameter || o.kind == OutputKind::GradientToUserInput;
    if (o.arg.kind != ArgKind::Tensor) continue;
    const bool result = o.kind == OutputKind::UserOutput || o.kind == OutputKind::LossOutput;
    if (!result && o.kind != OutputKind::BufferMutation && o.kind != OutputKind::UserInputMutation) continue;
    int vi = as_ir(get(named(o.arg.s, AtenType{AtenType::Tensor})));
    if (vi < 0) continue;
    if (result) g_.outputs.push_back(vi);
    forward_roots.push_back(vi);
  }
  if (joint) mark_backward(forward_roots);
}

// A joint program (gradients among its outputs): the nodes no forward root depends on are its backward.
void Pt2Lowerer::mark_backward(const std::vector<int>& forward_roots) {
  std::vector<char> forward(g_.nodes.size(), 0);
  std::vector<int> stack;
  auto reach = [&](int vi) {
    const int p = vi >= 0 ? g_.values[static_cast<size_t>(vi)].producer : -1;
    if (p >= 0 && !forward[static_cast<size_t>(p)]) forward[static_cast<size_t>(p)] = 1, stack.push_back(p);
  };
  for (int vi : forward_roots) reach(vi);
  while (!stack.empty()) {
    const flopwise::Node& n = g_.nodes[static_cast<size_t>(stack.back())];
    stack.pop_back();
    for (int in : n.inputs) reach(in);
  }
  for (size_t i = 0; i < g_.nodes.size(); ++i) g_.nodes[i].backward = !forward[i];
}

std::optional<std::vector<JV>> Pt2Lowerer::run_graph(const Graph& g, const std::vector<JV>& args) {
  if (g.inputs.size() != args.size() || depth_ >= 64) return std::nullopt;
  frames_.push_back(Frame{&g, {}});
  ++depth_;
  for (size_t i = 0; i < args.size(); ++i)
    if (!g.inputs[i].s.empty()) set(named(g.inputs[i].s, AtenType{AtenType::Tensor}), args[i]);
  lower_graph_nodes(g);
  std::vector<JV> results;
  for (const Argument& o : g.outputs)
    results.push_back(o.kind == ArgKind::Tensor || o.kind == ArgKind::SymInt
                          ? get(named(o.s, AtenType{AtenType::Tensor}))
                          : JV());
  --depth_;
  frames_.pop_back();
  return results;
}

// The calling node's outputs (a returned list item by item) bound to a subgraph's results.
void Pt2Lowerer::bind_results(const std::vector<Argument>& outs, const std::vector<JV>& results) {
  std::vector<const Argument*> flat;
  for (const Argument& o : outs) {
    if (o.kind == ArgKind::Tensors)
      for (const Argument& x : o.items) flat.push_back(&x);
    else
      flat.push_back(&o);
  }
  for (size_t k = 0; k < flat.size() && k < results.size(); ++k) {
    if (flat[k]->kind != ArgKind::Tensor) continue;
    const AtenValue* v = named(flat[k]->s, AtenType{AtenType::Tensor});
    set(v, results[k]);
    declare(v, flat[k]->s);
  }
}

bool Pt2Lowerer::inline_graph(const Graph& g, const std::vector<JV>& args,
                              const std::vector<Argument>& outs) {
  auto results = run_graph(g, args);
  if (!results) return false;
  bind_results(outs, *results);
  return true;
}

// One branch of a cond as an IR subgraph: its inputs are the caller's values, referred to by name (outer
// values of the If's graph).
std::unique_ptr<flopwise::Graph> Pt2Lowerer::branch(const Graph& g, const std::vector<JV>& args) {
  if (g.inputs.size() != args.size() || depth_ >= 64) return nullptr;
  Model tmp;
  Pt2Lowerer inner(p_, tmp);
  inner.depth_ = depth_ + 1;
  inner.anon_ = anon_;
  inner.frames_.push_back(Frame{&g, {}});
  for (size_t i = 0; i < args.size(); ++i) {
    const int outer = as_ir(args[i]);
    if (outer < 0 || g.inputs[i].s.empty()) continue;
    const flopwise::Value& ov = facts(outer);
    int v = tmp.graph.add_value(g_.values[outer].name);
    tmp.graph.values[v].is_outer = true;
    tmp.graph.values[v].dtype = ov.dtype;
    tmp.graph.values[v].shape = ov.shape;
    inner.set_ir(inner.named(g.inputs[i].s, AtenType{AtenType::Tensor}), v);
  }
  inner.lower_graph_nodes(g);
  for (const Argument& o : g.outputs) {
    int v =
        o.kind == ArgKind::Tensor ? inner.as_ir(inner.get(inner.named(o.s, AtenType{AtenType::Tensor}))) : -1;
    if (v >= 0) tmp.graph.outputs.push_back(v);
  }
  anon_ = inner.anon_;
  for (auto& w : tmp.warnings) warn(w);
  auto sub = std::make_unique<flopwise::Graph>(std::move(tmp.graph));
  sub->parent = &g_;
  return sub;
}

bool Pt2Lowerer::lower_cond_on_data(const Node& n, const Graph* then_g, const Graph* else_g,
                                    const std::vector<JV>& args, int pred) {
  auto then_sub = branch(*then_g, args), else_sub = branch(*else_g, args);
  if (!then_sub || !else_sub) return false;
  if (pred < 0) {
    pred = new_value("cond_predicate");
    g_.values[pred].dtype = DType::Bool;
    g_.values[pred].shape = Shape::scalar();
  }
  std::vector<std::string_view> names;
  for (const Argument& o : n.outputs) {
    if (o.kind == ArgKind::Tensor) names.push_back(o.s);
    for (const Argument& x : o.items)
      if (x.kind == ArgKind::Tensor) names.push_back(x.s);
  }
  std::vector<std::string> outs;
  for (auto nm : names) outs.push_back("%" + std::string(nm));
  Attribute then_a, else_a;
  then_a.kind = else_a.kind = Attribute::Kind::Graph;
  then_a.graphs = {0};
  else_a.graphs = {1};
  auto res = emit("If", {pred}, outs, {{"then_branch", then_a}, {"else_branch", else_a}});
  g_.nodes.back().subgraphs.push_back(std::move(then_sub));
  g_.nodes.back().subgraphs.push_back(std::move(else_sub));
  for (size_t k = 0; k < names.size() && k < res.size(); ++k) {
    const AtenValue* v = named(names[k], AtenType{AtenType::Tensor});
    set_ir(v, res[k]);
    declare(v, names[k]);
  }
  return true;
}

namespace {
// The subgraph-taking higher-order ops that run their (first) subgraph once on the arguments after it.
bool runs_subgraph_once(std::string_view hop) {
  static const std::string_view kOnce[] = {"wrap_with_set_grad_enabled", "wrap_with_autocast",
                                           "invoke_subgraph", "tag_activation_checkpoint",
                                           "wrap_activation_checkpoint"};
  return std::find(std::begin(kOnce), std::end(kOnce), hop) != std::end(kOnce);
}
}  // namespace

bool Pt2Lowerer::lower_hop(const Node& n, std::string_view hop) {
  std::vector<const Graph*> graphs;
  std::vector<JV> args;  // the tensors and values after the first subgraph, lists flattened
  for (const NamedArgument& a : n.inputs) {
    if (a.arg.kind == ArgKind::Graph && a.arg.graph) {
      graphs.push_back(a.arg.graph.get());
      continue;
    }
    if (graphs.empty()) continue;
    if (a.arg.kind == ArgKind::Tensors)
      for (const Argument& x : a.arg.items) args.push_back(get(value_of(x, AtenType{AtenType::Tensor})));
    else if (a.arg.kind != ArgKind::String)
      args.push_back(get(value_of(a.arg, AtenType{AtenType::Tensor})));
  }
  if (runs_subgraph_once(hop) && !graphs.empty()) return inline_graph(*graphs[0], args, n.outputs);
  if (hop == "cond" && graphs.size() == 2 && !n.inputs.empty()) {
    auto pred = known_bool(get(value_of(n.inputs[0].arg, AtenType{AtenType::Bool})));
    if (pred) return inline_graph(*graphs[*pred ? 0 : 1], args, n.outputs);
    return lower_cond_on_data(n, graphs[0], graphs[1], args,
                              as_ir(get(value_of(n.inputs[0].arg, AtenType{AtenType::Bool}))));
  }
  std::string why;
  if (lower_loop_hop(n, hop, &why)) return true;
  if (hop.find("triton") != std::string_view::npos)
    why = "a user Triton kernel: flopwise cannot see inside it";
  for (const NamedArgument& a : n.inputs)
    if (a.arg.kind == ArgKind::Operator && why.empty())
      why = "runs " + std::string(a.arg.s) + ", which is not counted (no cost rule for a custom op)";
  if (why.empty()) return false;
  keep_unsupported(n, "higher_order", hop, why);
  return true;
}

// Model::modules: the module call graph's order (declaration order), each module's class from the nodes'
// stacks, and the parameters each one registers (a tied tensor under one id).
void Pt2Lowerer::module_tree() {
  std::deque<std::string> order;                                   // paths in first-seen order (stable)
  std::unordered_map<std::string_view, size_t> index;              // keys: views of `order`
  std::unordered_map<std::string_view, std::string_view> classes;  // views of the nodes' scopes
  auto add = [&](std::string_view path) {
    if (index.count(path)) return;
    order.emplace_back(path);
    index.emplace(order.back(), order.size() - 1);
  };
  add("");
  for (const ModuleCallEntry& e : p_.module_call_graph) add(e.fqn);
  const flopwise::Node* prev = nullptr;  // a module's nodes run in a row: its scope is seen once
  for (const flopwise::Node& n : g_.nodes) {
    if (prev && prev->scope == n.scope && prev->scope_classes == n.scope_classes) continue;
    for (size_t i = 0; i < n.scope.size(); ++i) {
      // A level the previous scope had (a module's parents): added with its class then, first seen first.
      if (prev && i < prev->scope.size() && prev->scope[i] == n.scope[i] &&
          (i < prev->scope_classes.size()) == (i < n.scope_classes.size()))
        continue;
      add(n.scope[i]);
      if (i < n.scope_classes.size()) classes.emplace(n.scope[i], n.scope_classes[i]);
    }
    prev = &n;
  }
  struct Held {
    std::string owner;
    int64_t id, elems;
  };
  std::vector<Held> held;
  std::map<std::string_view, int64_t> ids;
  for (const InputSpec& in : p_.inputs) {
    if (in.kind != InputKind::Parameter || in.arg.kind != ArgKind::Tensor) continue;
    std::string target(in.target);
    auto dot = target.rfind('.');
    std::string owner = dot == std::string::npos ? "" : target.substr(0, dot);
    add(owner);
    const int vi = get(named(in.arg.s, AtenType{AtenType::Tensor})).ir;
    Dim elems = vi >= 0 ? g_.values[vi].shape.numel() : Dim::unknown();
    int64_t id = ids.emplace(p_.canonical_payload(in.target), static_cast<int64_t>(ids.size())).first->second;
    if (elems.is_known()) held.push_back(Held{owner, id, elems.value()});
  }
  std::vector<ModuleDecl> mods(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    mods[i].path = order[i];
    if (auto c = classes.find(order[i]); c != classes.end()) mods[i].cls = std::string(c->second);
  }
  for (const Held& h : held) mods[index.at(h.owner)].params.emplace_back(h.id, h.elems);
  m_.modules = std::move(mods);
}

}  // namespace flopwise::pt2

namespace flopwise {

namespace {
Model lower_program(const pt2::Program& p, const std::string& path) {
  Model m;
  m.path = path;
  m.format = ModelFormat::ExportArchive;
  m.producer = "torch " + p.torch_version + " (torch.export schema " + std::to_string(p.schema_major) + "." +
               std::to_string(p.schema_minor) + ")";
  m.opsets[""] = kTorchOpset;
  m.warnings = p.warnings;
  pt2::Pt2Lowerer(p, m).run();
  return m;
}
}  // namespace

Model import_pt2_file(const std::string& path, const std::string& program) {
  return lower_program(pt2::read_pt2_file(path, program), path);
}

Model import_pt2_bytes(std::string_view bytes, const std::string& label, const std::string& program) {
  bool zip = bytes.size() >= 4 && bytes.substr(0, 2) == "PK";
  return lower_program(
      zip ? pt2::read_pt2_bytes(bytes, label, program) : pt2::read_program_json(bytes, label), label);
}

}  // namespace flopwise
