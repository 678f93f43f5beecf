// src/import/onnx_functions.cc — calls of model-local functions (FunctionProto) inlined at import
// (GraphImporter, onnx_graph_importer.h): formal names renamed to the call's and ref attributes bound at any
// depth of the body's subgraphs, the inlined size bounded before any of it is done, and the call's module
// scope and class learnt from the function (its name, by the kind its domain says).
#include <algorithm>

#include "flopwise/errors.h"
#include "flopwise/limits.h"
#include "flopwise/onnx_import.h"
#include "onnx_graph_importer.h"

namespace flopwise::onnx_detail {

namespace {

// What a function stands for, by its domain's prefix (the first row that matches; none: kClassName).
// torch's dynamo exporter writes a module's function in "pkg.<package>.<version>" ("pkg.torchvision.0.16.0").
enum class FunctionKind {
  kClassName,    // torch.onnx (TorchScript) export_modules_as_functions: the name is the module's class
  kTorchModule,  // torch.onnx dynamo (torch 2.2-2.5): one function per module call, named by path and class
  kLibrary,      // onnxscript's torch_lib: an aten op's lowering, no module of its own
};
struct FunctionDomain {
  const char* prefix;
  FunctionKind kind;
};
constexpr FunctionDomain kFunctionDomains[] = {
    {"pkg.onnxscript.", FunctionKind::kLibrary},  // "pkg.onnxscript.torch_lib", "...torch_lib.common"
    {"pkg.", FunctionKind::kTorchModule},         // "pkg.<package>.<version>": the module's package
};

FunctionKind kind_of(const std::string& domain) {
  for (const auto& d : kFunctionDomains)
    if (domain.rfind(d.prefix, 0) == 0) return d.kind;
  return FunctionKind::kClassName;
}

// FunctionProto.attribute_proto (field 11, ONNX 1.15+; unknown to the generated class): the defaults of
// the attributes a body refers to.
std::vector<onnx::AttributeProto> attribute_defaults(const onnx::FunctionProto& f) {
  std::vector<onnx::AttributeProto> out;
  const std::string& unknown = f.unknown_fields();  // the lite runtime keeps them as their bytes
  pb::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(unknown.data()),
                              static_cast<int>(unknown.size()));
  for (uint32_t tag; (tag = in.ReadTag()) != 0;) {
    if (tag != WFL::MakeTag(11, WFL::WIRETYPE_LENGTH_DELIMITED)) {
      if (!WFL::SkipField(&in, tag)) break;
      continue;
    }
    std::string bytes;
    onnx::AttributeProto a;
    if (!WFL::ReadBytes(&in, &bytes)) break;
    if (a.ParseFromString(bytes) && !a.name().empty()) out.push_back(std::move(a));
  }
  return out;
}

// Nodes of a body at any depth of its subgraphs.
int64_t nodes_within(const pb::RepeatedPtrField<onnx::NodeProto>& nodes) {
  int64_t n = nodes.size();
  for (const auto& node : nodes)
    for (const auto& a : node.attribute()) {
      if (a.has_g()) n += nodes_within(a.g().node());
      for (const auto& g : a.graphs()) n += nodes_within(g.node());
    }
  return n;
}

// One call's rewriting of its function's body, applied to each node and, at any depth, to the nodes and
// values of its subgraphs (torch_lib's If branches read the function's inputs by name).
struct CallRewrite {
  std::map<std::string, std::string> rename;                 // formal inputs and outputs -> the call's names
  std::string prefix;                                        // the body's own values: prefix + name
  std::string dir;                                           // node names: dir + "/" + name
  std::map<std::string, const onnx::AttributeProto*> attrs;  // the call's, then the function's defaults

  std::string value(const std::string& n) const {
    if (n.empty()) return n;
    auto r = rename.find(n);
    return r != rename.end() ? r->second : prefix + n;
  }

  void node(onnx::NodeProto& n) const {
    for (auto& in : *n.mutable_input()) in = value(in);
    for (auto& out : *n.mutable_output()) out = value(out);
    std::string nm = n.name().empty() ? n.op_type() : n.name();
    n.set_name(dir + "/" + (nm[0] == '/' ? nm.substr(1) : nm));
    // Attributes referring to the caller's (ref_attr_name) take its value, else the function's default,
    // else the op's own default (the attribute dropped).
    auto* as = n.mutable_attribute();
    for (int k = as->size() - 1; k >= 0; --k) {
      auto* a = as->Mutable(k);
      if (a->ref_attr_name().empty()) {
        if (a->has_g()) graph(*a->mutable_g());
        for (auto& g : *a->mutable_graphs()) graph(g);
        continue;
      }
      auto ca = attrs.find(a->ref_attr_name());
      if (ca == attrs.end()) {
        as->DeleteSubrange(k, 1);
      } else {
        std::string name = a->name();
        *a = *ca->second;
        a->set_name(name);
      }
    }
  }

  void graph(onnx::GraphProto& g) const {
    for (auto* vs : {g.mutable_input(), g.mutable_output(), g.mutable_value_info()})
      for (auto& vi : *vs) vi.set_name(value(vi.name()));
    for (auto& t : *g.mutable_initializer()) t.set_name(value(t.name()));
    for (auto& s : *g.mutable_sparse_initializer()) s.mutable_values()->set_name(value(s.values().name()));
    for (auto& n : *g.mutable_node()) node(n);
  }
};

// The class a function's name gives: torch names a module's function after its class, with ".N" for
// variants ("BasicBlock.1"), or its qualified name ("model.Block").
std::string class_of_name(std::string cls) {
  while (!cls.empty() && cls.find('.') != std::string::npos &&
         cls.find_first_not_of("0123456789", cls.rfind('.') + 1) == std::string::npos)
    cls.erase(cls.rfind('.'));
  return cls.substr(cls.find_last_of('.') + 1);
}

}  // namespace

void GraphImporter::add_function(onnx::FunctionProto f) {
  std::string key = f.domain() + "::" + f.name();
  defaults_[key] = attribute_defaults(f);
  functions_[key] = std::move(f);
}

// The nodes that inlining a call of function `key` adds, as inlined_nodes_ counts them (its body's at any
// depth, and those of the calls in it), saturated far past any bound; -1 when unknown: the calls recurse or
// nest past 32, which inlining reports itself. Each function is counted once (memoised): linear in the
// bodies.
int64_t GraphImporter::inlined_size(const std::string& key, int depth) {
  if (depth > 32) return -1;
  auto [memo, fresh] = inlined_size_.try_emplace(key, -2);  // -2: being counted
  if (!fresh) return memo->second == -2 ? -1 : memo->second;
  const onnx::FunctionProto& f = functions_.at(key);
  int64_t n = nodes_within(f.node());
  for (const auto& inner : f.node()) {
    auto callee = functions_.find(inner.domain() + "::" + inner.op_type());
    if (callee == functions_.end()) continue;
    const int64_t m = inlined_size(callee->first, depth + 1);
    if (m < 0) {
      n = -1;
      break;
    }
    n = std::min(n + m, int64_t{1} << 62);
  }
  memo->second = n;
  return n;
}

void GraphImporter::import_or_inline(const WireNode& wn, Graph& g, int depth) {
  auto it = functions_.end();
  if (!functions_.empty()) {
    std::string key(wn.domain);
    key += "::";
    key += wn.op_type;
    it = functions_.find(key);
  }
  if (it == functions_.end()) {
    import_node(wn, g);
    return;
  }
  onnx::NodeProto np;  // a call: the function's body is rewritten from the call's message
  parse_sub(src_, wn.bytes, wn.size, &np, "a node", 2);
  if (depth > 32) throw InputError(path_ + ": function '" + np.op_type() + "' calls itself (recursion > 32)");
  const onnx::FunctionProto& f = it->second;
  // A call whose inlining is known to pass the bound is refused before any of it is done (a fan-out of
  // calls calling each other twice, 2^20 nodes, took a second and 200 MB to be refused).
  const int64_t whole = depth == 0 ? inlined_size(it->first, 0) : -1;
  const int64_t body = nodes_within(f.node());
  inlined_nodes_ += body;
  if (inlined_nodes_ > limits().max_inlined_nodes ||
      (whole >= 0 && inlined_nodes_ - body + whole > limits().max_inlined_nodes))
    throw InputError(path_ + ": inlining function '" + np.op_type() + "' gives more than " +
                     std::to_string(limits().max_inlined_nodes) +
                     " nodes (calls nest too deep; the bound is FLOPWISE_MAX_INLINED_NODES)");
  CallRewrite rw;
  // Formal inputs/outputs take the call's actual names, the body's own values unique names.
  for (int i = 0; i < f.input_size(); ++i) rw.rename[f.input(i)] = i < np.input_size() ? np.input(i) : "";
  for (int i = 0; i < f.output_size(); ++i) rw.rename[f.output(i)] = i < np.output_size() ? np.output(i) : "";
  rw.prefix = (np.output_size() ? np.output(0) : np.name()) + "::" + f.name() + "::";
  const size_t slash = np.name().rfind('/');
  rw.dir = np.name().substr(0, slash == std::string::npos ? 0 : slash);
  std::vector<std::string> caller_scope = scope_from_node_name(np.name());
  switch (kind_of(f.domain())) {
    case FunctionKind::kClassName:
      if (!caller_scope.empty()) scopes_.hint_class(caller_scope.back(), class_of_name(f.name()));
      break;
    case FunctionKind::kTorchModule: {
      std::vector<std::string> args(np.input().begin(), np.input().end());
      if (auto m = module_of_function(f.name(), caller_scope.empty() ? "" : caller_scope.back(), args)) {
        rw.dir += "/" + m->scope;  // the body's nodes: one level deeper
        scopes_.hint_class(m->scope, m->cls);
      }
      break;
    }
    case FunctionKind::kLibrary:
      break;
  }
  // Each inlined node's name starts with its directory: a long caller name multiplies through nested
  // calls (a 16 KB name over 2^19 calls: 8 GB). Names are bounded with the nodes, 64 bytes a node.
  inlined_name_bytes_ += body * static_cast<int64_t>(rw.dir.size() + 1);
  if (inlined_name_bytes_ > 64 * limits().max_inlined_nodes)
    throw InputError(
        path_ + ": inlining function '" + np.op_type() + "' gives more than " +
        std::to_string(64 * limits().max_inlined_nodes / (1 << 20)) +
        " MB of node names (long names through nested calls; the bound is FLOPWISE_MAX_INLINED_NODES, "
        "64 bytes of name a node)");
  for (const auto& a : defaults_[it->first]) rw.attrs[a.name()] = &a;
  for (const auto& a : np.attribute()) rw.attrs[a.name()] = &a;
  for (const auto& inner : f.node()) {
    onnx::NodeProto n = inner;
    rw.node(n);
    import_message(n, g, depth + 1);
  }
}

}  // namespace flopwise::onnx_detail
