// src/pt2/json_reader.h — the program JSON's reader, shared by program_json.cc (graphs, nodes, arguments)
// and signature_json.cc (graph signature, range constraints, module call graph, payload configs).
// Owns: JsonReader, the simdjson On-Demand walk with the context (node, key) its errors name.
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>

#include "pt2/program.h"

namespace flopwise::pt2 {

namespace od = simdjson::ondemand;

// Nesting bounds of the reader (a hostile program cannot make it recurse without limit).
constexpr int kMaxGraphDepth = 32;     // subgraphs of higher-order ops inside subgraphs
constexpr int kMaxArgumentDepth = 64;  // as_string_to_argument inside itself

class JsonReader {
 public:
  JsonReader(Program& p, std::string label) : p_(p), label_(std::move(label)) {}

  void read_program(od::value root);
  void read_payload_config(od::value root);  // data/weights/<model>_weights_config.json and constants'

  // Shared helpers (public for signature_json.cc's functions).
  [[noreturn]] void fail(const std::string& why) const;
  std::string_view str(od::value v);  // a string value, interned in the program's arena
  std::string_view add(od::value v);  // a string value copied (long, unique text)
  static int64_t int64(od::value v);
  static double number(od::value v);  // also NaN, Infinity, -Infinity (Python's json writes them)
  static bool boolean(od::value v) { return v.get_bool(); }
  static bool is_null(od::value v) { return v.is_null(); }
  Argument argument(od::value v);
  Argument tensor_argument(od::value v);  // {"name": ...}
  SymInt sym_int(od::value v);
  SymBool sym_bool(od::value v);
  SymFloat sym_float(od::value v);
  TensorMeta tensor_meta(od::value v);

  const char* key = "";           // the key being read, for messages
  bool legacy_signature = false;  // torch 2.1's maps were read: specs to be put in graph order
  Program& p_;

 private:
  friend struct ProgramFields;
  void read_graph_module(od::value v);
  void read_graph(od::value v, Graph& g, int depth);
  void read_node(od::value v, Node& n, int depth);
  NamedArgument named_argument(od::value v, int depth);
  void read_metadata(od::value v, Node& n);
  void read_tensor_values(od::value v, Graph& g);
  void read_schema_version(od::value v);
  Argument union_argument(std::string_view member, od::value v, int depth);
  Argument list_argument(ArgKind list, od::value v, int depth);
  Argument sym_argument(ArgKind kind, od::value v);
  Argument graph_argument(od::value v, int depth);
  Argument argument_at(od::value v, int depth);

  std::string label_;
  const Node* node_ = nullptr;  // the node being read, for messages
  size_t node_index_ = 0;
  int graph_depth_ = 0;
};

// signature_json.cc
void read_signature(JsonReader& r, od::value v);
void read_range_constraints(JsonReader& r, od::value v);
void read_module_call_graph(JsonReader& r, od::value v);

// The nn_module_stack text, "key,path,type;key,path,type" (commas inside brackets or parentheses belong
// to the path), as frames; a frame that does not split in three is kept whole as its key.
std::vector<ModuleFrame> parse_module_stack(std::string_view text);

}  // namespace flopwise::pt2
