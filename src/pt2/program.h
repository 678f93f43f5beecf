// src/pt2/program.h — a torch.export program as the archive records it, in neutral C++ types.
// Owns: Program and its parts (graph, nodes, arguments, tensor values, signature, range constraints), the
// torch ScalarType table, and the entry points that read a .pt2 archive (archive.cc) or a program's JSON
// (program_json.cc) into it. No LibTorch, no protobuf, no IR lowering: the aten lowering reads this.
// Strings are views into Program::strings (they live as long as the Program, moves included).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "flopwise/ir.h"
#include "flopwise/string_arena.h"

namespace flopwise::pt2 {

// torch.export's ScalarType codes (torch/_export/serde/schema.py; they are not c10's). One row each:
// code, name, bits per element, the IR's DType where it has one (Undefined: complex32, float8_e8m0fnu).
#define FLOPWISE_PT2_SCALAR_TYPES(X)                          \
  X(Unknown, 0, "unknown", 0, Undefined)                      \
  X(Byte, 1, "uint8", 8, UInt8)                               \
  X(Char, 2, "int8", 8, Int8)                                 \
  X(Short, 3, "int16", 16, Int16)                             \
  X(Int, 4, "int32", 32, Int32)                               \
  X(Long, 5, "int64", 64, Int64)                              \
  X(Half, 6, "float16", 16, Float16)                          \
  X(Float, 7, "float32", 32, Float32)                         \
  X(Double, 8, "float64", 64, Float64)                        \
  X(ComplexHalf, 9, "complex32", 32, Undefined)               \
  X(ComplexFloat, 10, "complex64", 64, Complex64)             \
  X(ComplexDouble, 11, "complex128", 128, Complex128)         \
  X(Bool, 12, "bool", 8, Bool)                                \
  X(BFloat16, 13, "bfloat16", 16, BFloat16)                   \
  X(UInt16, 28, "uint16", 16, UInt16)                         \
  X(Float8E4M3FN, 29, "float8_e4m3fn", 8, Float8E4M3FN)       \
  X(Float8E5M2, 30, "float8_e5m2", 8, Float8E5M2)             \
  X(Float8E4M3FNUZ, 31, "float8_e4m3fnuz", 8, Float8E4M3FNUZ) \
  X(Float8E5M2FNUZ, 32, "float8_e5m2fnuz", 8, Float8E5M2FNUZ) \
  X(Float8E8M0FNU, 33, "float8_e8m0fnu", 8, Undefined)        \
  X(UInt32, 34, "uint32", 32, UInt32)                         \
  X(UInt64, 35, "uint64", 64, UInt64)

enum class ScalarType : int32_t {
#define FLOPWISE_PT2_X(id, code, name, bits, ir) id = code,
  FLOPWISE_PT2_SCALAR_TYPES(FLOPWISE_PT2_X)
#undef FLOPWISE_PT2_X
};
struct ScalarTypeInfo {
  ScalarType type;
  const char* name;  // torch's dtype name without "torch."
  int bits;          // per element; 0 for Unknown
  DType ir;          // Undefined where the IR has no such type
};
// The row of a code; nullptr for a code the table does not know (a newer torch's): the caller keeps the code.
const ScalarTypeInfo* scalar_type_info(int64_t code);

// A SymInt of the schema: a literal, or a sympy expression (srepr text in torch >= 2.6, str before).
struct SymInt {
  bool is_expr = false;
  int64_t value = 0;            // the literal, when !is_expr
  std::string_view expr;        // "Symbol('s0', integer=True, positive=True)", "2*s0", ...
  std::optional<int64_t> hint;  // the example value torch recorded, when it did
};
struct SymBool {
  bool is_expr = false, value = false;
  std::string_view expr;
};
struct SymFloat {
  bool is_expr = false;
  double value = 0;  // the literal, or an expression's hint (its value at the export's sizes)
  std::string_view expr;
};

struct TensorMeta {
  int32_t dtype_code = 0;  // ScalarType code as written (scalar_type_info() for its row)
  std::vector<SymInt> sizes;
  bool requires_grad = false;
  std::string_view device;  // "cpu", "cuda", "meta"; strides and layout are not kept
  int64_t device_index = -1;
  int64_t storage_offset = 0;  // when a literal
};

struct Graph;

// The union member an Argument holds (schema.py's Argument, plus list elements' own kinds).
enum class ArgKind : uint8_t {
  None,
  Tensor,
  Tensors,
  Int,
  Ints,
  Float,
  Floats,
  String,
  Strings,
  SymInt,
  SymInts,
  SymFloat,
  SymFloats,
  SymBool,
  SymBools,
  ScalarType,
  MemoryFormat,
  Layout,
  Device,
  Bool,
  Bools,
  Graph,
  OptionalTensor,
  OptionalTensors,
  CustomObj,
  Operator,
  Complex,
  NestedTensors,
  IntLists,
  StringToArgument,
  Token,
  Unknown
};
const char* arg_kind_name(ArgKind k);  // the schema's member name: "as_tensor", ...; "unknown"

// One argument. Scalars: Int/ScalarType/MemoryFormat/Layout in `i`, Float in `f` (Complex: f + imag i),
// Bool in `b`, String/Operator in `s`. Names: Tensor, Token, CustomObj (class in `s2`), Graph (the
// subgraph's attribute name; the graph in `graph`), Device (type; index in `i`, -1 when none).
// SymInt/SymFloat/SymBool: a named value in `s`, or (s empty) a literal in i / f / b.
// Lists hold their elements in `items`, each with its own kind: Tensors -> Tensor; Ints -> Int; Floats ->
// Float; Bools -> Bool; Strings -> String; SymInts -> SymInt; OptionalTensors -> Tensor or None;
// NestedTensors -> Tensors; IntLists -> Ints; StringToArgument -> any, with its key in `keys`.
// Unknown: a union member this reader does not know, its key in `s` (kept, never fatal).
struct Argument {
  ArgKind kind = ArgKind::None;
  bool b = false;
  int64_t i = 0;
  double f = 0, imag = 0;
  std::string_view s, s2;
  std::vector<Argument> items;
  std::vector<std::string_view> keys;
  std::shared_ptr<const Graph> graph;

  bool is_tensor() const { return kind == ArgKind::Tensor; }
};

enum class ArgumentKind : uint8_t { Unrecorded, Positional, Keyword };  // schema >= 8.? records it
struct NamedArgument {
  std::string_view name;  // the schema's argument name ("" for a higher-order op's positional inputs)
  Argument arg;
  ArgumentKind kind = ArgumentKind::Unrecorded;
};

// One frame of a node's nn_module_stack: torch's key, the module's path and its class, outermost first.
struct ModuleFrame {
  std::string_view key;   // "L__self___layers_0" or "layers.0"
  std::string_view path;  // "L['self'].layers[0]" or "layers.0"
  std::string_view type;  // "torch.nn.modules.linear.Linear"
};

// A node's frames: a view of those the Program keeps once per distinct nn_module_stack text (Program::
// module_stacks), so that the nodes of one module share them; equal views mean one parse of one text.
class ModuleStack {
 public:
  ModuleStack() = default;
  explicit ModuleStack(const std::vector<ModuleFrame>& frames) : data_(frames.data()), size_(frames.size()) {}
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const ModuleFrame& operator[](size_t i) const { return data_[i]; }
  const ModuleFrame* begin() const { return data_; }
  const ModuleFrame* end() const { return data_ + size_; }
  bool same(const ModuleStack& o) const { return data_ == o.data_ && size_ == o.size_; }

 private:
  const ModuleFrame* data_ = nullptr;
  size_t size_ = 0;
};

struct Node {
  std::string_view
      target;  // "torch.ops.aten.conv2d.default", "torch.ops.higher_order.cond", "_operator.getitem"
  std::string_view name;  // recorded since schema 8.x; "" before
  std::vector<NamedArgument> inputs;
  std::vector<Argument> outputs;
  ModuleStack module_stack;
  std::string_view torch_fn;  // "linear_1;builtin_function_or_method.linear" where recorded
  // every other metadata entry but stack_trace (the user code's trace: a third of the text, read by nothing)
  std::vector<std::pair<std::string_view, std::string_view>> metadata;
  bool hop_single_tensor_return = false;
};

struct Graph {
  std::vector<Argument> inputs, outputs;
  std::vector<Node> nodes;
  std::unordered_map<std::string_view, TensorMeta> tensor_values;
  std::unordered_map<std::string_view, SymInt> sym_int_values;
  std::unordered_map<std::string_view, SymBool> sym_bool_values;
  std::unordered_map<std::string_view, SymFloat> sym_float_values;
  std::unordered_map<std::string_view, std::string_view> custom_obj_values;  // name -> class
  bool is_single_tensor_return = false;
};

enum class InputKind : uint8_t {
  UserInput,
  Parameter,
  Buffer,
  TensorConstant,
  CustomObj,
  Token,
  ConstantInput
};
struct InputSpec {
  InputKind kind = InputKind::UserInput;
  Argument arg;             // the placeholder (a Tensor, SymInt, CustomObj or Token; a constant's value)
  std::string_view target;  // parameter / buffer / constant / custom object name; a constant input's name
  bool persistent = true;   // buffers
};
enum class OutputKind : uint8_t {
  UserOutput,
  LossOutput,
  BufferMutation,
  GradientToParameter,
  GradientToUserInput,
  UserInputMutation,
  Token,
  ParameterMutation
};
struct OutputSpec {
  OutputKind kind = OutputKind::UserOutput;
  Argument arg;
  std::string_view target;  // the buffer, parameter or user input it refers to, where it does
};

struct RangeConstraint {
  std::optional<int64_t> min, max;  // nullopt: unbounded (-int_oo / int_oo)
};

struct ModuleCallEntry {
  std::string_view fqn;  // "" is the root; in the program's call order
  std::vector<std::string_view> forward_arg_names;
};

// A payload (weight or constant) the archive lists in data/weights/<model>_weights_config.json: tensors
// stored at one path with the same sizes, strides and offset are one tensor under several names (tied).
struct Payload {
  std::string_view name, path;
  bool is_param = false;
  TensorMeta meta;
};

struct Program {
  StringArena strings;
  std::deque<std::vector<ModuleFrame>>
      module_stacks;                       // each distinct nn_module_stack's frames (Node's views)
  std::string name;                        // the model's name in the archive ("model"), "" for a bare JSON
  int schema_major = 0, schema_minor = 0;  // the bare integer of torch 2.1 is major 0, minor that integer
  std::string torch_version;               // "<=2.4" when the JSON does not say
  Graph graph;
  std::vector<InputSpec> inputs;
  std::vector<OutputSpec> outputs;
  std::vector<std::pair<std::string_view, RangeConstraint>> range_constraints;  // as written
  std::vector<ModuleCallEntry> module_call_graph;
  std::vector<std::pair<std::string_view, int64_t>> opset_version;
  std::vector<Payload> payloads;  // empty for legacy archives and bare JSON
  std::vector<std::string> warnings;

  // The parameter, buffer or constant whose name is `target` shares its payload with an earlier name
  // (tied weights): that earlier name; `target` itself otherwise. Meta tensors (a model built on the meta
  // device) have no storage, and torch writes them all at one path: never tied. One hashed pass over the
  // payloads on the first call, a lookup after.
  std::string_view canonical_payload(std::string_view target) const;

 private:
  mutable std::unordered_map<std::string_view, std::string_view> tied_;  // payload name -> first of its place
  mutable bool tied_known_ = false;
};

// The programs a .pt2 holds and the archive's layout.
struct ArchiveInfo {
  enum class Layout { Current, Legacy } layout = Layout::Current;
  std::string folder;                 // the current layout's root folder ("model" for model.pt2); "" legacy
  std::vector<std::string> programs;  // model names (current) or {""} (legacy)
  std::vector<std::string> entries;   // every entry name, for messages and tests
};

// Reads the program named `program` ("" = the only one) from a .pt2 file or from its bytes. Throws
// InputError (one line) for a file that is no export archive, an AOTInductor package, several programs
// and none named, an unknown schema major version, and JSON that breaks the schema (see validate.cc).
Program read_pt2_file(const std::string& path, const std::string& program = "");
Program read_pt2_bytes(std::string_view bytes, const std::string& label, const std::string& program = "");
ArchiveInfo inspect_pt2_file(const std::string& path);
// A program's JSON alone (models/<name>.json, serialized_exported_program.json); `json` needs no padding.
Program read_program_json(std::string_view json, const std::string& label);

}  // namespace flopwise::pt2
