// src/import/onnx_graph_importer.cc — GraphImporter's values and nodes (onnx_graph_importer.h): initializers,
// inputs and value infos typed, each node's inputs resolved (outer references, dangling names), its outputs
// defined once (SSA), subgraphs imported recursively, then the nodes sorted.
#include "onnx_graph_importer.h"

#include <cctype>
#include <memory>
#include <set>
#include <tuple>

#include "flopwise/errors.h"
#include "flopwise/limits.h"
#include "onnx_normalize.h"
#include "onnx_topo.h"

namespace flopwise::onnx_detail {

namespace {

// A main-graph input's dim with neither dim_value nor dim_param (`dim {}`: skl2onnx and onnxmltools write
// every batch dim so) is a size the model leaves open, like a dim_param: it gets a fresh symbol,
// <input>.<axis> as a .pt2 archive's inputs name theirs (characters other than letters, digits, '_' and '.'
// as '_'; '_' appended while the name is taken), so that costs are formulas in it and --dim binds it. A
// subgraph's inputs stay as declared: their op gives their shapes.
std::string anonymous_dim_name(const std::string& input, size_t axis, const std::set<std::string>& taken) {
  std::string name;
  for (char ch : input)
    name += std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.' ? ch : '_';
  name += "." + std::to_string(axis);
  while (taken.count(name)) name += '_';
  return name;
}

void name_anonymous_input_dims(Graph& g) {
  std::set<std::string> taken;
  for (int idx : g.inputs)
    for (const Dim& d : g.values[static_cast<size_t>(idx)].shape.dims)
      for (const std::string& s : d.symbols()) taken.insert(s);
  for (int idx : g.inputs) {
    Value& v = g.values[static_cast<size_t>(idx)];
    for (size_t k = 0; v.shape.rank_known && k < v.shape.dims.size(); ++k) {
      if (!v.shape.dims[k].is_unknown()) continue;
      const std::string name = anonymous_dim_name(v.name, k, taken);
      taken.insert(name);
      v.shape.dims[k] = Dim::symbol(name);
    }
  }
}

}  // namespace

void GraphImporter::import(const GraphParts& parts, Graph& g) {
  g.name = parts.name;
  std::set<std::string> init_names;
  g.reserve_values(parts.initializers.size() + parts.inputs.size());
  for (const auto& t : parts.initializers) {
    int idx = g.add_value(t.name);
    Value& v = g.values[idx];
    v.is_initializer = true;
    v.dtype = t.dtype;
    v.shape = t.dims.size() > static_cast<size_t>(limits().max_rank)
                  ? Shape()
                  : Shape(std::vector<Dim>(t.dims.begin(), t.dims.end()));
    v.data = t.data;
    v.external = t.external;
    init_names.insert(t.name);
  }
  for (const auto& vi : parts.inputs) {
    if (init_names.count(vi.name())) continue;  // IR < 4: initializers are listed as inputs too
    int idx = g.add_value(vi.name());
    Value& v = g.values[idx];
    v.is_input = true;
    std::tie(v.dtype, v.shape) = type_of(vi);
    g.inputs.push_back(idx);
  }
  if (!g.parent) name_anonymous_input_dims(g);
  for (const auto& vi : parts.value_info) {
    int idx = g.add_value(vi.name());
    g.values[idx].declared = type_of(vi);
  }
  g.nodes.reserve(parts.nodes.size() + parts.node_bytes.size());
  // Most nodes have one output; some (Split, LSTM) several.
  const size_t n_nodes = parts.nodes.size() + parts.node_bytes.size();
  g.reserve_values(g.values.size() + n_nodes + n_nodes / 8);
  for (const auto& np : parts.nodes) import_message(np, g, 0);
  WireNode wn;  // its vectors keep their room from node to node
  for (const auto& [p, len] : parts.node_bytes) {
    const uint8_t* bad_at;
    if (!read_node(p, len, &wn, &bad_at)) src_.bad("a node", bad_at);
    import_or_inline(wn, g, 0);
  }
  for (const auto& vi : parts.outputs) {
    int idx = g.find(vi.name());
    if (idx < 0) idx = ref(g, vi.name());
    if (vi.has_type() || !g.values[idx].declared) g.values[idx].declared = type_of(vi);  // value_info's stays
    g.outputs.push_back(idx);
  }
  // Values used before any node of this graph defined them: defined later in the file (an unsorted
  // graph, sorted below) or never.
  // A dangling input is a warning, not an error (README: Graph validation): the readers' shapes stay
  // unknown and their costs are listed as unknown, as after an unsupported op. One line lists them.
  std::string dangling;
  size_t n_dangling = 0;
  for (const auto& [name, idx] : undefined_[&g])
    if (g.values[idx].producer < 0 && !g.values[idx].is_input && !g.values[idx].is_initializer) {
      if (++n_dangling <= 5) dangling += (n_dangling > 1 ? ", '" : "'") + name + "'";
    } else if (g.values[idx].producer >= 0) {
      g.values[idx].is_outer = false;  // this graph's own value after all
    }
  if (n_dangling == 1)
    warnings_->push_back("value " + dangling + " is used but never defined; its shape is unknown");
  else if (n_dangling > 1)
    warnings_->push_back(std::to_string(n_dangling) + " values are used but never defined (" + dangling +
                         (n_dangling > 5 ? ", ..." : "") + "); their shapes are unknown");
  undefined_.erase(&g);
  sort_nodes(g, path_, warnings_);
}

int GraphImporter::ref(Graph& g, std::string_view name) {
  int idx = g.find(name);
  if (idx >= 0) return idx;
  idx = g.add_value(name);
  g.values[idx].is_outer = true;
  bool found = false;
  for (const Graph* p = g.parent; p && !found; p = p->parent) found = p->find(name) >= 0;
  if (!found && !g.parent) g.values[idx].is_outer = false;  // dangling in the main graph: stays unknown
  if (!found) undefined_[&g].emplace_back(name, idx);       // unless a later node defines it
  return idx;
}

int GraphImporter::add_subgraph(const onnx::GraphProto& gp, Node& n, Graph& parent) {
  auto sub = std::make_unique<Graph>();
  sub->parent = &parent;
  import(parts_from_proto(gp), *sub);
  n.subgraphs.push_back(std::move(sub));
  return static_cast<int>(n.subgraphs.size()) - 1;
}

// A node given as a message (a subgraph's, or one inlined from a function body): through its bytes,
// the one path every node takes.
void GraphImporter::import_message(const onnx::NodeProto& np, Graph& g, int depth) {
  const std::string bytes = np.SerializeAsString();
  WireNode wn;
  const uint8_t* bad_at;
  if (!read_node(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()), &wn,
                 &bad_at))
    src_.bad("a node", bad_at);
  import_or_inline(wn, g, depth);
}

void GraphImporter::import_node(const WireNode& np, Graph& g) {
  Node n;
  n.name.assign(np.name);
  n.op.assign(np.op_type);
  if (np.domain != "ai.onnx") n.domain.assign(np.domain);
  auto it = opsets_.find(n.domain);
  n.opset = it == opsets_.end() ? 0 : static_cast<int>(it->second);
  n.inputs.reserve(np.inputs.size());
  n.outputs.reserve(np.outputs.size());
  for (std::string_view in : np.inputs) n.inputs.push_back(in.empty() ? -1 : ref(g, in));
  for (const auto& [p, len] : np.attributes) import_attr_bytes(p, len, n, g);
  n.scope = scopes_.of_name(n.name);
  if (!np.metadata.empty()) {
    auto meta = node_metadata(np);
    if (auto s = meta.find("pkg.torch.onnx.name_scopes"); s != meta.end()) {
      auto c = meta.find("pkg.torch.onnx.class_hierarchy");
      const auto& scope = scopes_.of_metadata(s->second, c == meta.end() ? nullptr : &c->second);
      n.scope = scope.first;
      if (c != meta.end()) n.scope_classes = scope.second;
    }
  }
  normalize_onnx_node(n, g);
  int node_index = static_cast<int>(g.nodes.size());
  for (std::string_view out : np.outputs) {
    if (out.empty()) {
      n.outputs.push_back(-1);
      continue;
    }
    int idx = g.add_value(out);
    // Each value has one definition (ONNX graphs are SSA): a second writer would leave every reader
    // with one of two shapes, so two nodes writing one value, or a node overwriting an input or weight,
    // is refused.
    const Value& prev = g.values[idx];
    if (prev.producer >= 0 || prev.is_input || prev.is_initializer) {
      const std::string first = prev.producer == node_index ? std::string("the same node twice")
                                : prev.producer >= 0
                                    ? "node '" + g.nodes[static_cast<size_t>(prev.producer)].name + "'"
                                : prev.is_input ? std::string("a graph input")
                                                : std::string("an initializer");
      throw InputError(path_ + ": value '" + std::string(out) + "' is written by node '" + n.name +
                       "' and by " + first + " (a value has one definition)");
    }
    g.values[idx].producer = node_index;
    g.values[idx].is_outer = false;
    n.outputs.push_back(idx);
  }
  g.nodes.push_back(std::move(n));
}

}  // namespace flopwise::onnx_detail
