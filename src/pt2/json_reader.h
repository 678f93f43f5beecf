// src/pt2/json_reader.h — the program JSON's reader, shared by program_json.cc (graphs, nodes, arguments)
// and signature_json.cc (graph signature, range constraints, module call graph, payload configs).
// Owns: JsonReader, the walk over simdjson's DOM (one parse, then element views) with the context (node, key)
// its errors name, and parse_json_text: the parse, Python's NaN / Infinity and integers past 64 bits
// included.
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>
#include <unordered_map>

#include "pt2/program.h"

namespace flopwise::pt2 {

using Value = simdjson::dom::element;  // a view into the parser's tape (16 bytes, passed by value)

// Python's json writes NaN, Infinity, -Infinity and integers of any length; simdjson's parse refuses them. A
// text it refuses is parsed again with each such token outside strings written as a string of kMarker + the
// token ("\0pt2#NaN", "\0pt2#-123456789012345678901"); JsonReader reads a marked string where a number is
// wanted as that number, and refuses it where a string is. `padded`: the text, SIMDJSON_PADDING readable
// bytes after its end. Returns the root; `rewritten` says whether the text was rewritten (JsonReader's
// `marked`). Throws simdjson_error: the first parse's error.
constexpr std::string_view kMarker{"\0pt2#", 5};
Value parse_json_text(simdjson::dom::parser& parser, std::string_view padded, bool& rewritten);

inline simdjson::dom::object object(Value v) { return v.get_object().value(); }  // throws: not an object
inline simdjson::dom::array array(Value v) { return v.get_array().value(); }

// Nesting bounds of the reader (a hostile program cannot make it recurse without limit).
constexpr int kMaxGraphDepth = 32;     // subgraphs of higher-order ops inside subgraphs
constexpr int kMaxArgumentDepth = 64;  // as_string_to_argument inside itself

class JsonReader {
 public:
  JsonReader(Program& p, std::string label) : p_(p), label_(std::move(label)) {}
  void set_marked(bool marked) { marked_ = marked; }  // parse_json_text rewrote the text

  void read_program(Value root);
  void read_payload_config(Value root);  // data/weights/<model>_weights_config.json and constants'

  // Shared helpers (public for signature_json.cc's functions).
  [[noreturn]] void fail(const std::string& why) const;
  [[noreturn]] void fail(const simdjson::simdjson_error& e) const;  // "malformed or unexpected JSON (...)"
  std::string_view str(Value v);  // a string value, interned in the program's arena
  std::string_view add(Value v);  // a string value copied (long, unique text)
  int64_t int64(Value v) const;
  double number(Value v) const;                 // also NaN, Infinity, -Infinity (Python's json writes them)
  std::optional<int64_t> bound(Value v) const;  // a range's bound: unbounded (nullopt) past int64
  static bool boolean(Value v) { return v.get_bool().value(); }
  static bool is_null(Value v) { return v.is_null(); }
  Argument argument(Value v);
  Argument tensor_argument(Value v);  // {"name": ...}
  SymInt sym_int(Value v);
  SymBool sym_bool(Value v);
  SymFloat sym_float(Value v);
  template <class Sym, class Literal>
  Sym sym_scalar(Value v, std::string_view literal_key, Literal literal, const char* what);
  TensorMeta tensor_meta(Value v);

  const char* key = "";           // the key being read, for messages
  bool legacy_signature = false;  // torch 2.1's maps were read: specs to be put in graph order
  Program& p_;

 private:
  std::string_view marked(Value v) const;  // a marked token's text (kMarker stripped); "" for any other
  std::string_view text(Value v) const;    // a string value, refused when marked
  friend struct ProgramFields;
  void read_graph_module(Value v);
  void read_graph(Value v, Graph& g, int depth);
  void read_node(Value v, Node& n, int depth);
  NamedArgument named_argument(Value v, int depth);
  void read_metadata(Value v, Node& n);
  ModuleStack module_stack(Value v);
  void read_tensor_values(Value v, Graph& g);
  void read_schema_version(Value v);
  Argument union_argument(std::string_view member, Value v, int depth);
  Argument list_argument(ArgKind list, Value v, int depth);
  Argument device_argument(Value v);
  Argument sym_argument(ArgKind kind, Value v);
  Argument graph_argument(Value v, int depth);
  Argument argument_at(Value v, int depth);

  bool marked_ = false;  // the text was rewritten: marked strings stand for numbers
  std::string label_;
  // Each nn_module_stack text parsed once (the nodes of one module share it), by its interned text's address.
  std::unordered_map<const char*, ModuleStack> module_stacks_;  // frames in Program::module_stacks
  std::string_view last_stack_;                                 // the previous node's text, interned
  ModuleStack last_frames_;                                     // and its frames
  bool has_last_ = false;
  const Node* node_ = nullptr;  // the node being read, for messages
  size_t node_index_ = 0;
  int graph_depth_ = 0;
};

// signature_json.cc
void read_signature(JsonReader& r, Value v);
void read_range_constraints(JsonReader& r, Value v);
void read_module_call_graph(JsonReader& r, Value v);

// The nn_module_stack text, "key,path,type;key,path,type" (commas inside brackets or parentheses belong
// to the path), as frames; a frame that does not split in three is kept whole as its key.
std::vector<ModuleFrame> parse_module_stack(std::string_view text);

}  // namespace flopwise::pt2
