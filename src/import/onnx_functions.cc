// src/import/onnx_functions.cc — calls of model-local functions (FunctionProto) inlined at import
// (GraphImporter, onnx_graph_importer.h): formal names renamed to the call's, ref attributes bound, the
// inlined size bounded before any of it is done, and the function's name learnt as the calling scope's module
// class.
#include <algorithm>

#include "flopwise/errors.h"
#include "flopwise/limits.h"
#include "flopwise/onnx_import.h"
#include "onnx_graph_importer.h"

namespace flopwise::onnx_detail {

void GraphImporter::add_function(onnx::FunctionProto f) {
  std::string key = f.domain() + "::" + f.name();
  functions_[key] = std::move(f);
}

// The nodes that inlining a call of function `key` adds, as inlined_nodes_ counts them (its body's, and
// those of the calls in it), saturated far past any bound; -1 when unknown: the calls recurse or nest past
// 32, which inlining reports itself. Each function is counted once (memoised): linear in the bodies.
int64_t GraphImporter::inlined_size(const std::string& key, int depth) {
  if (depth > 32) return -1;
  auto [memo, fresh] = inlined_size_.try_emplace(key, -2);  // -2: being counted
  if (!fresh) return memo->second == -2 ? -1 : memo->second;
  const onnx::FunctionProto& f = functions_.at(key);
  int64_t n = f.node_size();
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
  inlined_nodes_ += f.node_size();
  if (inlined_nodes_ > limits().max_inlined_nodes ||
      (whole >= 0 && inlined_nodes_ - f.node_size() + whole > limits().max_inlined_nodes))
    throw InputError(path_ + ": inlining function '" + np.op_type() + "' gives more than " +
                     std::to_string(limits().max_inlined_nodes) +
                     " nodes (calls nest too deep; the bound is FLOPWISE_MAX_INLINED_NODES)");
  // Rename: formal inputs/outputs to the call's actual names, internal values to unique names.
  std::map<std::string, std::string> rename;
  for (int i = 0; i < f.input_size(); ++i) rename[f.input(i)] = i < np.input_size() ? np.input(i) : "";
  for (int i = 0; i < f.output_size(); ++i) rename[f.output(i)] = i < np.output_size() ? np.output(i) : "";
  std::string prefix = (np.output_size() ? np.output(0) : np.name()) + "::" + f.name() + "::";
  auto mapped = [&](const std::string& n) {
    if (n.empty()) return n;
    auto r = rename.find(n);
    return r != rename.end() ? r->second : prefix + n;
  };
  std::string caller_dir =
      np.name().substr(0, np.name().rfind('/') == std::string::npos ? 0 : np.name().rfind('/'));
  // Each inlined node's name starts with its caller's directory: a long caller name multiplies through
  // nested calls (a 16 KB name over 2^19 calls: 8 GB). Names are bounded with the nodes, 64 bytes a node.
  inlined_name_bytes_ += static_cast<int64_t>(f.node_size()) * static_cast<int64_t>(caller_dir.size() + 1);
  if (inlined_name_bytes_ > 64 * limits().max_inlined_nodes)
    throw InputError(
        path_ + ": inlining function '" + np.op_type() + "' gives more than " +
        std::to_string(64 * limits().max_inlined_nodes / (1 << 20)) +
        " MB of node names (long names through nested calls; the bound is FLOPWISE_MAX_INLINED_NODES, "
        "64 bytes of name a node)");
  std::vector<std::string> caller_scope = scope_from_node_name(np.name());
  // torch names a module's function after its class, with ".N" for variants: "BasicBlock.1".
  std::string cls = f.name();
  while (!cls.empty() && cls.find('.') != std::string::npos &&
         cls.find_first_not_of("0123456789", cls.rfind('.') + 1) == std::string::npos)
    cls.erase(cls.rfind('.'));
  cls = cls.substr(cls.find_last_of('.') + 1);
  if (!caller_scope.empty()) scopes_.hint_class(caller_scope.back(), cls);
  std::map<std::string, const onnx::AttributeProto*> caller_attrs;
  for (const auto& a : np.attribute()) caller_attrs[a.name()] = &a;
  for (const auto& inner : f.node()) {
    onnx::NodeProto n = inner;
    for (auto& in : *n.mutable_input()) in = mapped(in);
    for (auto& out : *n.mutable_output()) out = mapped(out);
    std::string nm = inner.name().empty() ? inner.op_type() : inner.name();
    n.set_name(caller_dir + "/" + (nm[0] == '/' ? nm.substr(1) : nm));
    // Attributes referring to the caller's (ref_attr_name) take its value, or the default when absent.
    auto* attrs = n.mutable_attribute();
    for (int k = attrs->size() - 1; k >= 0; --k) {
      auto* a = attrs->Mutable(k);
      if (a->ref_attr_name().empty()) continue;
      auto ca = caller_attrs.find(a->ref_attr_name());
      if (ca == caller_attrs.end()) {
        attrs->DeleteSubrange(k, 1);
      } else {
        std::string name = a->name();
        *a = *ca->second;
        a->set_name(name);
      }
    }
    import_message(n, g, depth + 1);
  }
}

}  // namespace flopwise::onnx_detail
