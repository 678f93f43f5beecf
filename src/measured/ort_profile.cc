// src/measured/ort_profile.cc — reads ONNX Runtime profiles and maps their kernels back to the original
// graph (flopwise/ort_profile.h). Sees no protobuf: the graph comes as flopwise's IR.
//
// Mapping, in order (each kernel keeps the first that applies):
//   1. name:      the kernel's name is a node's name (every kernel at ORT's "disabled" level; kept nodes
//                 and fusions that keep their first node's name at the others).
//   2. output:    the name is an original value's name plus suffixes ORT appends ("_nchwc", "_bn_nchwc":
//                 the NCHWc layout transformer names its Conv/Pool kernels after the output they replace).
//   3. fusion:    the name is "<node>/<Something>Fusion/" (MatMulScaleFusion, MatmulTransposeFusion),
//                 nested when fusions apply in turn: the fused node is named after the node it started from;
//                 or "fused <node>" (GemmActivationFusion's FusedGemm).
//   4. structure: a name ORT made up ("BiasGelu", "BiasGelu_token_3"): the kernel claims the original
//                 nodes no kernel kept that lie, in the graph, between the mapped kernels run just before
//                 and just after it; the kernels that follow it with no nodes of their own are the rest of
//                 the same expansion (an op ORT runs as its function body: HardSwish as HardSigmoid + Mul).
//   5. inserted:  a kernel with no original nodes at all (ReorderOutput, MemcpyToHost): counted to the
//                 node run just before it, and listed.
// Original nodes that no kernel kept and that run at all (they depend on a graph input: ORT folds the
// rest into constants) were fused into a neighbour: an elementwise op into the kernel run before it (the
// activation or residual add of a FusedConv, the bias of a Gemm), any other op into the kernel that
// consumes it (the Conv of a Conv+Relu named after the Relu). A kernel's time is split over the nodes it
// covers in proportion to their static FLOPs; a kernel of no FLOPs is the time of the node it is named
// after; memory bytes, then equal shares, stand in where FLOPs are unknown.
#include "flopwise/ort_profile.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unordered_map>

#include "flopwise/convention.h"
#include "flopwise/errors.h"
#include "flopwise/input_file.h"
#include "flopwise/ops.h"

namespace flopwise {

using json = nlohmann::json;

const char* map_method_name(MapMethod m) {
  switch (m) {
    case MapMethod::name:
      return "name";
    case MapMethod::output:
      return "output value";
    case MapMethod::fusion:
      return "fused-node name";
    case MapMethod::structure:
      return "graph structure";
    case MapMethod::inserted:
      return "inserted by ORT";
    case MapMethod::none:
      return "unattributed";
  }
  return "?";
}

namespace {

bool ends_with(const std::string& s, std::string_view suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

std::vector<std::vector<int64_t>> shapes_of(const json& list) {
  std::vector<std::vector<int64_t>> out;
  if (!list.is_array()) return out;
  for (const auto& entry : list) {  // [{"float": [1, 3, 224, 224]}, ...]
    std::vector<int64_t> dims;
    if (entry.is_object() && !entry.empty()) {
      const json& d = entry.begin().value();
      if (d.is_array())
        for (const auto& x : d) dims.push_back(x.is_number_integer() ? x.get<int64_t>() : -1);
    }
    out.push_back(std::move(dims));
  }
  return out;
}

double number(const json& e, const char* key, const std::string& where) {
  auto it = e.find(key);
  if (it == e.end() || !it->is_number() || it->get<double>() < 0)
    throw InputError(where + ": a node event has no valid \"" + key + "\"");
  return it->get<double>();
}

}  // namespace

OrtProfile read_ort_profile(const std::string& path) {
  const std::string text = read_input_file(path, " the profile");
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw InputError(path + ": not valid JSON (a truncated profile?): " + std::string(e.what()));
  }
  const json* events = &doc;
  if (doc.is_object() && doc.contains("traceEvents")) events = &doc["traceEvents"];
  if (!events->is_array())
    throw InputError(path + ": not an ONNX Runtime profile (expected a JSON array of trace events)");

  OrtProfile p;
  p.path = path;
  std::vector<std::pair<double, double>> runs;  // model_run [start, end)
  std::vector<const json*> nodes;
  for (const auto& e : *events) {
    if (!e.is_object()) continue;
    std::string cat = e.value("cat", "");
    if (cat == "Session" && e.value("name", "") == "model_run" && e.contains("ts") && e.contains("dur") &&
        e["ts"].is_number() && e["dur"].is_number())
      runs.emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
    else if (cat == "Node" && e.value("ph", "X") == "X")
      nodes.push_back(&e);
  }
  if (nodes.empty())
    throw InputError(path +
                     ": no node events (\"cat\": \"Node\"): not an ONNX Runtime profile, or one "
                     "written without node events");
  std::sort(runs.begin(), runs.end());

  // Run of each event: the model_run that contains it; without model_run events, a new run starts each
  // time the first kernel comes round again (the sequential executor runs the same kernels each run).
  std::unordered_map<std::string, size_t> index;
  std::string first_key;
  int implicit_run = -1;
  for (const json* ep : nodes) {
    const json& e = *ep;
    if (!e.contains("name") || !e["name"].is_string()) throw InputError(path + ": a node event has no name");
    std::string key = e["name"].get<std::string>();
    for (std::string_view suf : {"_kernel_time", "_fence_before", "_fence_after"})
      if (ends_with(key, suf)) {
        key.resize(key.size() - suf.size());
        break;
      }
    double dur = number(e, "dur", path), ts = number(e, "ts", path);
    int run;
    if (!runs.empty()) {
      auto it = std::upper_bound(runs.begin(), runs.end(), std::make_pair(ts, 1e300));
      if (it == runs.begin() || ts > std::prev(it)->second) {
        p.outside_runs_us += dur;
        continue;
      }
      run = static_cast<int>(std::prev(it) - runs.begin());
    } else {
      if (first_key.empty()) first_key = key;
      if (key == first_key && !ends_with(e["name"].get<std::string>(), "_fence_after")) ++implicit_run;
      run = std::max(0, implicit_run);
    }
    ++p.events;
    auto [it, fresh] = index.try_emplace(key, p.kernels.size());
    if (fresh) {
      OrtKernel k;
      k.key = key;
      const json& args = e.contains("args") && e["args"].is_object() ? e["args"] : json::object();
      k.op = args.value("op_name", "");
      k.provider = args.value("provider", "");
      if (args.contains("input_type_shape")) k.in_shapes = shapes_of(args["input_type_shape"]);
      if (args.contains("output_type_shape")) k.out_shapes = shapes_of(args["output_type_shape"]);
      p.kernels.push_back(std::move(k));
    }
    auto& us = p.kernels[it->second].us;
    if (us.size() <= static_cast<size_t>(run)) us.resize(static_cast<size_t>(run) + 1, 0.0);
    us[static_cast<size_t>(run)] += dur;
  }
  size_t n_runs = !runs.empty() ? runs.size() : static_cast<size_t>(std::max(1, implicit_run + 1));
  if (p.events == 0)
    throw InputError(path + ": none of its node events lies inside a model_run: an incomplete profile");
  for (auto& k : p.kernels) k.us.resize(n_runs, 0.0);
  if (!runs.empty()) {
    for (const auto& [a, b] : runs) p.run_ms.push_back((b - a) / 1000.0);
  } else {  // no run events: each run's node time stands in for its wall time
    p.run_ms.assign(n_runs, 0.0);
    for (const auto& k : p.kernels)
      for (size_t r = 0; r < n_runs; ++r) p.run_ms[r] += k.us[r] / 1000.0;
  }
  return p;
}

std::map<std::string, std::vector<int64_t>> profile_input_shapes(const Model& model, const OrtProfile& p,
                                                                 const ProfileAttribution& at) {
  const Graph& g = model.graph;
  std::vector<int> kernel_of(g.nodes.size(), -1);  // the kernel that covers each node
  for (size_t k = 0; k < at.kernels.size(); ++k)
    if (at.kernels[k].method != MapMethod::inserted)
      for (const auto& [i, share] : at.kernels[k].nodes)
        if (kernel_of[static_cast<size_t>(i)] < 0) kernel_of[static_cast<size_t>(i)] = static_cast<int>(k);
  std::map<std::string, std::vector<int64_t>> out;
  for (int in : g.inputs) {
    const Value& v = g.values[in];
    for (size_t i = 0; i < g.nodes.size() && !out.count(v.name); ++i) {
      const Node& n = g.nodes[i];
      auto slot = std::find(n.inputs.begin(), n.inputs.end(), in);
      if (slot == n.inputs.end() || kernel_of[i] < 0) continue;
      const OrtKernel& k = p.kernels[static_cast<size_t>(kernel_of[i])];
      // The kernel's inputs are its node's when it kept the node's name; a fused kernel's first input is
      // its first node's first input.
      size_t s = k.key == n.name ? static_cast<size_t>(slot - n.inputs.begin()) : 0;
      if (k.key != n.name && slot != n.inputs.begin()) continue;
      if (s < k.in_shapes.size() && !k.in_shapes[s].empty() &&
          (!v.shape.rank_known || v.shape.rank() == k.in_shapes[s].size()))
        out[v.name] = k.in_shapes[s];
    }
  }
  return out;
}

namespace {

std::string shape_text(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

// Weight of a node when a kernel's time is split: its FLOPs, else memory bytes (second), else 1 (third).
struct Weights {
  double flops = 0, bytes = 0;
  bool flops_known = true, bytes_known = true;
};

}  // namespace

ProfileAttribution attribute_profile(const Model& model, const Report& report, const OrtProfile& p) {
  const Graph& g = model.graph;
  const size_t n_nodes = g.nodes.size(), n_kernels = p.kernels.size();
  const size_t n_runs = p.run_ms.size();
  ProfileAttribution at;
  at.kernels.resize(n_kernels);

  std::unordered_map<std::string, int> node_by_name;
  for (size_t i = 0; i < n_nodes; ++i) node_by_name.emplace(g.nodes[i].name, static_cast<int>(i));
  // Nodes of control-flow bodies run as kernels of their own: they count to the node that holds them.
  for (size_t i = 0; i < n_nodes; ++i) {
    std::vector<const Graph*> stack;
    for (const auto& sg : g.nodes[i].subgraphs) stack.push_back(sg.get());
    while (!stack.empty()) {
      const Graph* sg = stack.back();
      stack.pop_back();
      for (const auto& n : sg->nodes) {
        node_by_name.emplace(n.name, static_cast<int>(i));
        for (const auto& s : n.subgraphs) stack.push_back(s.get());
      }
    }
  }
  auto producer_of_value = [&](const std::string& name) -> int {
    int v = g.find(name);
    return v >= 0 ? g.values[v].producer : -1;
  };

  // 1-3: by name.
  std::vector<int> seed(n_kernels, -1);
  for (size_t k = 0; k < n_kernels; ++k) {
    const std::string& key = p.kernels[k].key;
    auto& ka = at.kernels[k];
    if (auto it = node_by_name.find(key); it != node_by_name.end()) {
      seed[k] = it->second, ka.method = MapMethod::name;
      continue;
    }
    if (int prod = producer_of_value(key); prod >= 0) {
      seed[k] = prod, ka.method = MapMethod::output;
      continue;
    }
    // "<value>_nchwc", "<value>_bn_nchwc": up to three suffixes ORT appended.
    std::string stem_v = key;
    for (int strip = 0; strip < 3 && seed[k] < 0; ++strip) {
      size_t us = stem_v.rfind('_');
      if (us == std::string::npos || us == 0) break;
      stem_v.resize(us);
      if (int prod = producer_of_value(stem_v); prod >= 0) seed[k] = prod, ka.method = MapMethod::output;
    }
    if (seed[k] >= 0) continue;
    // "fused <node>": GemmActivationFusion names its FusedGemm so (a Gemm and the Relu after it).
    if (key.rfind("fused ", 0) == 0)
      if (auto it = node_by_name.find(key.substr(6)); it != node_by_name.end()) {
        seed[k] = it->second, ka.method = MapMethod::fusion;
        continue;
      }
    // "<node>/XFusion/", nested when fusions apply in turn: "<node>/AFusion//BFusion//AFusion/".
    std::string stem = key;
    for (int depth = 0; depth < 16 && seed[k] < 0; ++depth) {
      while (!stem.empty() && stem.back() == '/') stem.pop_back();
      size_t slash = stem.rfind('/');
      if (slash == std::string::npos || slash == 0 || stem.find("usion", slash) == std::string::npos) break;
      stem.resize(slash);
      if (auto it = node_by_name.find(stem); it != node_by_name.end())
        seed[k] = it->second, ka.method = MapMethod::fusion;
    }
    if (seed[k] >= 0) continue;
  }

  double total_us = 0, named_unresolved_us = 0;
  size_t resolved = 0;
  std::string first_unresolved;
  for (size_t k = 0; k < n_kernels; ++k) {
    double us = 0;
    for (double x : p.kernels[k].us) us += x;
    total_us += us;
    if (seed[k] >= 0) {
      ++resolved;
    } else if (p.kernels[k].key.find('/') != std::string::npos) {  // looks like an exporter's node name
      named_unresolved_us += us;
      if (first_unresolved.empty()) first_unresolved = p.kernels[k].key;
    }
  }
  if (resolved == 0)
    throw InputError(p.path + ": none of its " + std::to_string(n_kernels) +
                     " kernels is named after a node of " + model.path + ": a profile of another model?");
  if (named_unresolved_us > 0.05 * total_us)
    throw InputError(p.path + ": kernels with " +
                     std::to_string(static_cast<int>(100 * named_unresolved_us / total_us)) +
                     " % of its time are named after nodes " + model.path + " lacks (first: '" +
                     first_unresolved + "'): a profile of another model?");
  // Shapes: a kernel that kept a node's name produces that node's output shape.
  size_t compared = 0, differ = 0;
  std::string first_diff;
  for (size_t k = 0; k < n_kernels; ++k) {
    if (at.kernels[k].method != MapMethod::name || p.kernels[k].out_shapes.empty()) continue;
    const Node& n = g.nodes[static_cast<size_t>(seed[k])];
    if (n.name != p.kernels[k].key || n.outputs.empty() || n.outputs[0] < 0) continue;
    const Shape& s = g.values[n.outputs[0]].shape;
    if (!s.fully_known()) continue;
    ++compared;
    // The same dims, in any order: ORT's transpose optimiser moves layout changes across elementwise
    // nodes, which keep their names but then run on a permuted tensor (ConvNeXt's layer scale in NHWC).
    std::vector<int64_t> ps = p.kernels[k].out_shapes[0], ours;
    for (const auto& d : s.dims) ours.push_back(d.value());
    std::sort(ps.begin(), ps.end());
    std::sort(ours.begin(), ours.end());
    bool same = ps == ours;
    if (!same && ++differ == 1)
      first_diff = "'" + n.name + "' " + shape_text(p.kernels[k].out_shapes[0]) + " in the profile, " +
                   s.str() + " here";
  }
  if (differ > 0 && differ * 10 > compared)
    throw InputError(
        p.path + ": " + std::to_string(differ) + " of " + std::to_string(compared) +
        " kernels produce other shapes than the nodes they are named after (first: " + first_diff +
        "): profiled with other input shapes (pin them with --input) or a profile of another model");

  // Which nodes run at all: those that depend on a graph input (ORT folds the rest into initializers).
  std::vector<char> runtime(n_nodes, 0), is_input(g.values.size(), 0);
  for (int i : g.inputs) is_input[static_cast<size_t>(i)] = 1;
  std::vector<std::vector<int>> consumers(g.values.size());
  for (size_t i = 0; i < n_nodes; ++i) {
    for (int v : g.nodes[i].inputs) {
      if (v < 0) continue;
      consumers[static_cast<size_t>(v)].push_back(static_cast<int>(i));
      int prod = g.values[v].producer;
      if (is_input[static_cast<size_t>(v)] ||
          (prod >= 0 && static_cast<size_t>(prod) < n_nodes && runtime[static_cast<size_t>(prod)]))
        runtime[i] = 1;
    }
  }
  std::vector<int> owner(n_nodes, -1);
  for (size_t k = 0; k < n_kernels; ++k)
    if (seed[k] >= 0 && owner[static_cast<size_t>(seed[k])] < 0)
      owner[static_cast<size_t>(seed[k])] = static_cast<int>(k);
  auto free_node = [&](int i) {
    return i >= 0 && runtime[static_cast<size_t>(i)] && owner[static_cast<size_t>(i)] < 0;
  };
  auto producers = [&](int i, auto&& f) {
    for (int v : g.nodes[static_cast<size_t>(i)].inputs)
      if (v >= 0 && g.values[v].producer >= 0 && static_cast<size_t>(g.values[v].producer) < n_nodes)
        f(g.values[v].producer);
  };
  auto consumers_of = [&](int i, auto&& f) {
    for (int v : g.nodes[static_cast<size_t>(i)].outputs)
      if (v >= 0)
        for (int c : consumers[static_cast<size_t>(v)]) f(c);
  };

  // 4-5: kernels without a name to go by, in run order, between the mapped kernels around them.
  std::vector<std::vector<int>> claimed(n_kernels);
  for (size_t k = 0; k < n_kernels; ++k) {
    if (seed[k] >= 0) continue;
    // The mapped kernels around it on the data path (not a constant's: an Identity of a weight runs as a
    // kernel of its own at level "disabled", between any two others).
    auto neighbour = [&](int step) {
      for (long j = static_cast<long>(k) + step; j >= 0 && j < static_cast<long>(n_kernels); j += step)
        if (int s = seed[static_cast<size_t>(j)]; s >= 0 && runtime[static_cast<size_t>(s)]) return s;
      return -1;
    };
    const int prev = neighbour(-1), next = neighbour(+1);
    // Free nodes reachable forward from `prev`'s node through free nodes, and backward from `next`'s.
    std::set<int> fwd, bwd;
    std::vector<int> stack;
    if (prev >= 0)
      consumers_of(prev, [&](int c) {
        if (free_node(c)) stack.push_back(c);
      });
    while (!stack.empty()) {
      int c = stack.back();
      stack.pop_back();
      if (!fwd.insert(c).second) continue;
      consumers_of(c, [&](int d) {
        if (free_node(d)) stack.push_back(d);
      });
    }
    if (next >= 0)
      producers(next, [&](int c) {
        if (free_node(c)) stack.push_back(c);
      });
    while (!stack.empty()) {
      int c = stack.back();
      stack.pop_back();
      if (!bwd.insert(c).second) continue;
      producers(c, [&](int d) {
        if (free_node(d)) stack.push_back(d);
      });
    }
    std::vector<int> claim;
    for (int c : fwd)
      if (bwd.count(c)) claim.push_back(c);
    if (claim.empty())  // nothing reaches the next kernel's node: what follows the previous one, before it
      for (int c : fwd)
        if (next < 0 || c < next) claim.push_back(c);
    if (claim.empty() && prev < 0) claim.assign(bwd.begin(), bwd.end());
    auto& ka = at.kernels[k];
    if (!claim.empty()) {
      ka.method = MapMethod::structure;
      for (int c : claim) owner[static_cast<size_t>(c)] = static_cast<int>(k);
      claimed[k] = claim;
      seed[k] = claim.front();
    } else if (k > 0 && at.kernels[k - 1].method == MapMethod::structure) {
      // The next kernel of the same expansion: ORT runs an op it has no kernel for as its function body
      // (HardSwish as HardSigmoid_159 and Mul_160), each part a kernel of its own.
      ka.method = MapMethod::structure;
      for (int c : claimed[k - 1]) claimed[k].push_back(c);
    } else if (prev >= 0 || next >= 0) {
      ka.method = MapMethod::inserted;
      ka.nodes.push_back({prev >= 0 ? prev : next, 1.0});
    }
  }

  // Fused-away nodes: elementwise ones into the kernel run before them, the rest into their consumer's.
  for (size_t i = 0; i < n_nodes; ++i) {
    if (!free_node(static_cast<int>(i))) continue;
    WorkKind wk = node_work_kind(g, g.nodes[i]);
    if (wk != WorkKind::elementwise && wk != WorkKind::transcendental && wk != WorkKind::bias) continue;
    int best = -1;
    producers(static_cast<int>(i), [&](int c) {
      if (owner[static_cast<size_t>(c)] >= 0) best = std::max(best, c);
    });
    if (best >= 0) owner[i] = owner[static_cast<size_t>(best)];
  }
  for (size_t i = n_nodes; i-- > 0;) {
    if (!free_node(static_cast<int>(i))) continue;
    int best = -1;
    consumers_of(static_cast<int>(i), [&](int c) {
      if (owner[static_cast<size_t>(c)] >= 0 && (best < 0 || c < best)) best = c;
    });
    if (best >= 0) owner[i] = owner[static_cast<size_t>(best)];
  }
  for (size_t i = 0; i < n_nodes; ++i) {
    if (!free_node(static_cast<int>(i))) continue;
    int best = -1;
    producers(static_cast<int>(i), [&](int c) {
      if (owner[static_cast<size_t>(c)] >= 0) best = std::max(best, c);
    });
    if (best >= 0) owner[i] = owner[static_cast<size_t>(best)];
  }

  // Each kernel's nodes and their shares of its time.
  std::vector<std::vector<int>> covered(n_kernels);
  for (size_t i = 0; i < n_nodes; ++i)
    if (owner[i] >= 0) covered[static_cast<size_t>(owner[i])].push_back(static_cast<int>(i));
  for (size_t k = 0; k < n_kernels; ++k)  // later parts of an expansion: the nodes the first part claimed
    if (at.kernels[k].method == MapMethod::structure && !claimed[k].empty() &&
        owner[static_cast<size_t>(claimed[k].front())] != static_cast<int>(k))
      covered[k] = claimed[k];
  for (size_t k = 0; k < n_kernels; ++k) {  // a second kernel named after an already-owned node
    if (seed[k] >= 0 && at.kernels[k].method != MapMethod::structure &&
        owner[static_cast<size_t>(seed[k])] != static_cast<int>(k))
      covered[k].push_back(seed[k]);
  }
  for (size_t k = 0; k < n_kernels; ++k) {
    auto& ka = at.kernels[k];
    if (covered[k].empty()) continue;
    Weights w;
    std::vector<Weights> per;
    for (int i : covered[k]) {
      const Totals& c = report.nodes[static_cast<size_t>(i)].cost;
      Weights x;
      x.flops_known = c.flops.known, x.bytes_known = c.memory_bytes.known;
      x.flops = c.flops.known ? static_cast<double>(c.flops.v) : 0;
      x.bytes = c.memory_bytes.known ? static_cast<double>(c.memory_bytes.v) : 0;
      w.flops += x.flops, w.bytes += x.bytes;
      w.flops_known = w.flops_known && x.flops_known, w.bytes_known = w.bytes_known && x.bytes_known;
      per.push_back(x);
    }
    // A kernel of no FLOPs that kept a node's name (a Reshape that absorbed the Shape/Gather/Concat chain
    // computing its shape) is that node's time: the absorbed nodes' bytes say nothing about it.
    const bool to_seed = w.flops_known && w.flops == 0 && ka.method != MapMethod::structure;
    for (size_t j = 0; j < covered[k].size(); ++j) {
      double share = to_seed                        ? (covered[k][j] == seed[k] ? 1.0 : 0.0)
                     : w.flops_known && w.flops > 0 ? per[j].flops / w.flops
                     : w.bytes_known && w.bytes > 0 ? per[j].bytes / w.bytes
                                                    : 1.0 / static_cast<double>(covered[k].size());
      ka.nodes.push_back({covered[k][j], share});
    }
    if (std::count_if(ka.nodes.begin(), ka.nodes.end(), [](const auto& x) { return x.second > 0; }) > 1)
      ++at.split_kernels;
  }

  // Roll up, per run.
  at.scope_us.assign(n_runs, {});
  at.scope_self_us.assign(n_runs, {});
  at.op_type_us.assign(n_runs, {});
  std::map<std::string, std::set<std::string>> providers;
  for (size_t k = 0; k < n_kernels; ++k) {
    const OrtKernel& kern = p.kernels[k];
    const auto& ka = at.kernels[k];
    std::set<std::string> touched{""};
    for (size_t r = 0; r < n_runs; ++r) {
      double us = kern.us[r];
      at.method_us[ka.method] += us;
      at.total_us += us;
      at.scope_us[r][""] += us;
      if (ka.nodes.empty()) {
        at.scope_self_us[r][""] += us;
        at.op_type_us[r]["(unattributed)"] += us;
        continue;
      }
      for (const auto& [i, share] : ka.nodes) {
        const Node& n = g.nodes[static_cast<size_t>(i)];
        double t = us * share;
        for (const auto& s : n.scope) at.scope_us[r][s] += t;
        at.scope_self_us[r][n.scope_name()] += t;
        at.op_type_us[r][op_key(n)] += t;
      }
    }
    for (const auto& [i, share] : ka.nodes)
      for (const auto& s : g.nodes[static_cast<size_t>(i)].scope) touched.insert(s);
    for (const auto& s : touched) {
      providers[s].insert(kern.provider);
      ++at.scope_kernels[s];
    }
  }
  for (auto& [s, set] : providers) at.scope_providers[s].assign(set.begin(), set.end());
  return at;
}

}  // namespace flopwise
