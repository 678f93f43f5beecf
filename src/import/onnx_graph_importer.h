// src/import/onnx_graph_importer.h — one ONNX graph into the IR: values, nodes (their attributes decoded,
// calls of model-local functions inlined) and subgraphs. The members are defined by job:
// onnx_graph_importer.cc (values and nodes), onnx_attributes.cc (attributes), onnx_functions.cc (function
// inlining).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flopwise/ir.h"
#include "onnx_scopes.h"
#include "onnx_wire.h"

namespace flopwise::onnx_detail {

class GraphImporter {
 public:
  GraphImporter(const std::map<std::string, int64_t>& opsets, const Source& src,
                std::vector<std::string>* warnings)
      : opsets_(opsets), src_(src), path_(src.path), warnings_(warnings) {}

  // Model-local functions (FunctionProto): calls are inlined at import, so their bodies are analysed
  // like any other nodes; the function's name gives the calling scope's class, or (torch's dynamo export)
  // the module scope and class of its body.
  void add_function(onnx::FunctionProto f);

  // The graph's values and nodes into `g`, nodes in dependency order.
  void import(const GraphParts& parts, Graph& g);

  // Classes learnt from inlined functions, applied once all nodes are imported.
  void apply_class_hints(Graph& g) { scopes_.apply_class_hints(g); }

 private:
  // Index of a value used as an input: defined here, or an outer-scope reference.
  int ref(Graph& g, std::string_view name);
  int add_subgraph(const onnx::GraphProto& gp, Node& n, Graph& parent);
  void import_message(const onnx::NodeProto& np, Graph& g, int depth);
  void import_node(const WireNode& np, Graph& g);

  // onnx_attributes.cc: an attribute from its message, or from its bytes.
  void import_attr(const onnx::AttributeProto& a, Node& n, Graph& g);
  void import_attr_bytes(const uint8_t* base, int size, Node& n, Graph& g);

  // onnx_functions.cc: calls of model-local functions, inlined.
  int64_t inlined_size(const std::string& key, int depth);
  void import_or_inline(const WireNode& wn, Graph& g, int depth);

  const std::map<std::string, int64_t>& opsets_;
  ScopeNames scopes_;
  const Source& src_;
  std::string path_;
  std::vector<std::string>* warnings_;
  std::map<std::string, onnx::FunctionProto> functions_;
  std::map<std::string, std::vector<onnx::AttributeProto>> defaults_;  // each function's attribute_proto
  std::map<std::string, int64_t> inlined_size_;                        // inlined_size's memo
  int64_t inlined_nodes_ = 0;       // nodes added by inlining, against limits().max_inlined_nodes
  int64_t inlined_name_bytes_ = 0;  // bytes of their names' caller prefixes, against 64 x that bound
  std::map<const Graph*, std::vector<std::pair<std::string, int>>> undefined_;  // used before defined
};

}  // namespace flopwise::onnx_detail
