// src/pt2/pt2_lower.h — a torch.export Program (program.h) lowered into the IR: placeholders as graph inputs
// and initializers (a tied parameter once), every aten call through the neutral aten table with its
// arguments in schema position (defaults from torch 2.14's schemas), symbolic sizes as Dims, module scopes
// from nn_module_stack, higher-order ops inlined where their branch is known, the rest listed as not counted.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "flopwise/aten_lower.h"
#include "flopwise/aten_schema.h"
#include "pt2/program.h"
#include "pt2/sym_expr.h"

namespace flopwise::pt2 {

class Pt2Lowerer : public AtenLowerer {
 public:
  Pt2Lowerer(const Program& p, Model& m);
  void run();

 private:
  // The values of one graph instance (the program's, or a subgraph inlined once): names are per graph.
  struct Frame {
    const Graph* graph;
    std::unordered_map<std::string_view, const AtenValue*> values;
  };

  const Program& p_;
  SymDims dims_;
  std::vector<Frame> frames_;
  std::deque<AtenValue> owned_;                                    // every AtenValue, at stable addresses
  std::unordered_map<const AtenArg*, const AtenValue*> defaults_;  // default_literal's, by schema argument
  std::unordered_map<std::string_view, const AtenSchema*> aten_schema_of_;  // by target (the program's text)
  int anon_ = 0;
  int depth_ = 0;  // of inlined subgraphs
  // The module stack the scope was last set from (set_node_scope): its frames view text parsed once per
  // distinct nn_module_stack, so a node with the same views has the same scope.
  ModuleStack scope_frames_;
  bool scope_set_ = false;

  const AtenValue* make(std::string name, AtenType t);
  const AtenValue* named(std::string_view name, AtenType t);  // the current graph's value of that name
  const AtenValue* literal(Known k, const AtenType& t);
  const AtenValue* default_literal(const AtenArg& a);
  const AtenValue* value_of(const Argument& a, const AtenType& t);
  const AtenValue* list_value(const Argument& a, const AtenType& t);
  JV sym_value(std::string_view name);
  Shape shape_of(const TensorMeta& m);
  void declare(const AtenValue* v, std::string_view name);  // the recorded dtype and sizes on its IR value

  void inputs();
  void outputs();
  void mark_backward(const std::vector<int>& forward_roots);
  void lower_graph_nodes(const Graph& g);
  void lower_node(const Node& n);
  bool lower_aten_call(const Node& n, std::string_view name, std::string_view overload);
  // A call of the op `name` ("aten::mm", "transformers::grouped_mm_fallback") by its schema in
  // aten_schemas().
  bool lower_schema_call(const Node& n, const std::string& name, std::string_view overload);
  bool lower_schema_call(const Node& n, const AtenSchema* s);  // false for nullptr
  bool lower_hop(const Node& n, std::string_view hop);
  bool inline_graph(const Graph& g, const std::vector<JV>& args, const std::vector<Argument>& outs);
  // Lowers `g` once with `args` for its inputs: its outputs' values; nullopt when the arguments do not fit.
  std::optional<std::vector<JV>> run_graph(const Graph& g, const std::vector<JV>& args);
  void bind_results(const std::vector<Argument>& outs, const std::vector<JV>& results);
  // Loops unrolled where the trip count is known at import (pt2_loops.cc): map, scan, while_loop.
  bool lower_loop_hop(const Node& n, std::string_view hop, std::string* why);
  bool lower_while(const Node& n, const Graph& cond, const Graph& body, std::vector<JV> carried,
                   const std::vector<JV>& extra, std::string* why);
  // A cond whose predicate depends on data: an IR If holding both branches (the costlier one counts, as
  // FlopCounterMode counts the larger branch), each branch lowered into a subgraph of its own.
  bool lower_cond_on_data(const Node& n, const Graph* then_g, const Graph* else_g,
                          const std::vector<JV>& args, int pred);
  std::unique_ptr<flopwise::Graph> branch(const Graph& g, const std::vector<JV>& args);
  std::vector<JV> slices(const std::vector<JV>& xs, int64_t i);  // x[i] of each
  JV stack(const std::vector<JV>& items);                        // torch.stack(items)
  void bind_outputs(const std::vector<Argument>& outs, const std::vector<const AtenValue*>& vals);
  void keep_unsupported(const Node& n, std::string_view domain, std::string_view op, const std::string& why);
  void set_node_scope(const Node& n);
  void module_tree();
  void dim_names();
};

}  // namespace flopwise::pt2
