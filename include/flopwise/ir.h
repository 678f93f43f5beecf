// include/flopwise/ir.h — the common IR every importer produces and every pass reads.
// Owns: Graph, Node, Value, Shape, attributes, dtypes. Nothing ONNX- or torch-specific lives here:
// importers translate their formats into this vocabulary (op names follow ONNX's, plus named
// extensions in the "flopwise" domain where ONNX has none).
#pragma once

#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "flopwise/dim.h"
#include "flopwise/limits.h"

namespace flopwise {

// Element types. Numbering follows ONNX's TensorProto.DataType so importers map 1:1, but nothing
// here depends on ONNX.
enum class DType : int {
  Undefined = 0,
  Float32 = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Float64 = 11,
  UInt32 = 12,
  UInt64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
  // ONNX's numbers for the float8 kinds (torch's float8_e4m3fn, ...): 1 byte an element.
  Float8E4M3FN = 17,
  Float8E4M3FNUZ = 18,
  Float8E5M2 = 19,
  Float8E5M2FNUZ = 20,
};
int64_t dtype_size(DType t);                             // bytes per element; 0 for Undefined/String
const char* dtype_name(DType t);                         // "float32", "int64", ...
std::optional<DType> parse_dtype(const std::string& s);  // accepts "float32", "float", "f32", "int64", ...
bool is_float(DType t);
bool is_integer(DType t);  // integer or bool

// Appends v in decimal (std::to_string without its temporary string: writers append millions).
inline void append_int(std::string& out, int64_t v) {
  char buf[24];
  out.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
}

// A shape whose rank may be unknown; each dim known, symbolic or unknown.
struct Shape {
  bool rank_known = false;
  std::vector<Dim> dims;

  Shape() = default;
  explicit Shape(std::vector<Dim> d) : rank_known(true), dims(std::move(d)) {}
  static Shape unknown_rank() { return Shape(); }
  static Shape scalar() { return Shape(std::vector<Dim>{}); }
  // Unknown dims of rank r; unknown rank past limits().max_rank (a rank read from a model's contents).
  static Shape unknown_of_rank(size_t r) {
    return r > static_cast<size_t>(limits().max_rank) ? Shape() : Shape(std::vector<Dim>(r));
  }

  size_t rank() const { return dims.size(); }
  bool fully_known() const;   // rank known and every dim a known int
  Dim numel() const;          // product of dims (Unknown if rank unknown)
  Count numel_count() const;  // element count; unknown when a dim is, flagged `overflowed` past int64
  std::string str() const;    // "1x3x224x224", "batchx128", "?x5", "*" (unknown rank), "scalar"
  // Appends str()'s text, a symbolic dim's as dim_text(dim) gives it (a writer's memo formats each
  // polynomial once); a sum is parenthesised: "(seq + 1)x64".
  template <class DimText>  // std::string or const std::string& (const Dim&)
  void append_str(std::string& out, DimText dim_text) const {
    if (!rank_known) {
      out += '*';
      return;
    }
    if (dims.empty()) {
      out += "scalar";
      return;
    }
    for (size_t i = 0; i < dims.size(); ++i) {
      if (i) out += 'x';
      const Dim& d = dims[i];
      if (d.is_known()) {
        append_int(out, d.value());
      } else if (!d.is_symbolic()) {
        out += '?';
      } else {
        const bool sum = d.terms().size() > 1;
        if (sum) out += '(';
        out += dim_text(d);
        if (sum) out += ')';
      }
    }
  }
  bool operator==(const Shape& o) const { return rank_known == o.rank_known && dims == o.dims; }
};

// Parses "1x3x224x224", "batchx128", "?x5", "*" or "scalar" (as written by Shape::str).
std::optional<Shape> parse_shape(const std::string& s);

// Known contents of a small tensor, for shape arithmetic. Integer/bool tensors keep Dims so a
// Shape of a symbolic tensor flows through Gather/Concat/Reshape; float tensors keep doubles.
struct ConstData {
  std::vector<Dim> ints;
  std::vector<double> floats;
  bool is_float = false;
  size_t size() const { return is_float ? floats.size() : ints.size(); }
};
// Larger tensors than limits().max_const_elements (flopwise/limits.h) keep no contents.

// An optional kept on the heap: a Value's rarely present parts (small contents, the declared type) cost
// one pointer when absent rather than their full size (a 1 M-node graph has over a million values).
// Reads and writes like std::optional for what the code base uses; copies are deep.
template <class T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(std::nullopt_t) {}                                                         // NOLINT
  Boxed(const T& v) : p_(std::make_unique<T>(v)) {}                                // NOLINT
  Boxed(T&& v) : p_(std::make_unique<T>(std::move(v))) {}                          // NOLINT
  Boxed(const std::optional<T>& o) : p_(o ? std::make_unique<T>(*o) : nullptr) {}  // NOLINT
  Boxed(const Boxed& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  Boxed& operator=(std::nullopt_t) {
    p_.reset();
    return *this;
  }
  Boxed& operator=(const T& v) { return *this = Boxed(v); }
  Boxed& operator=(T&& v) { return *this = Boxed(std::move(v)); }
  Boxed& operator=(const std::optional<T>& o) { return *this = Boxed(o); }

  explicit operator bool() const { return p_ != nullptr; }
  T& operator*() { return *p_; }
  const T& operator*() const { return *p_; }
  T* operator->() { return p_.get(); }
  const T* operator->() const { return p_.get(); }
  void reset() { p_.reset(); }

 private:
  std::unique_ptr<T> p_;
};

struct Value {
  std::string name;
  DType dtype = DType::Undefined;
  Shape shape;
  Boxed<ConstData> data;
  bool is_initializer = false;  // a weight or constant stored in the model
  bool is_buffer = false;       // an initializer the format marks as state, not a weight (a module buffer)
  bool is_parameter = false;    // an initializer the format names a parameter (a .pt2's graph signature, a
                                // TorchScript module's parameters): a param whatever its rank or use (CLIP's
                                // 0-d logit_scale)
  bool is_input = false;        // a graph input (not an initializer)
  bool is_outer = false;        // a subgraph's reference to a value of an enclosing graph
  bool synthetic = false;       // made by an importer (an attribute turned into an input): no bytes
  bool external = false;        // an initializer whose contents live in an external-data file (never read)
  int producer = -1;            // index of the producing node, -1 for inputs/initializers
  // Type the model itself declares (ONNX value_info / graph outputs). Never copied over an inferred
  // shape: it only fills dims that inference left unknown, e.g. after an unsupported op.
  Boxed<std::pair<DType, Shape>> declared;
};

class Graph;

// The attribute the TorchScript importer sets on the node an in-place aten op (relu_, add_) became: its
// output is its first input's storage, modified.
inline constexpr const char* kInplaceAttr = "flopwise.inplace";

struct TensorAttr {  // an attribute holding a tensor (Constant's value, ConstantOfShape's value)
  DType dtype = DType::Undefined;
  std::vector<int64_t> dims;
  Boxed<ConstData> data;  // present when small enough (boxed: one pointer in every Constant's attribute)
};

struct Attribute {
  enum class Kind { Int, Float, String, Ints, Floats, Strings, Tensor, Graph, Graphs, Other };
  Kind kind = Kind::Other;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  TensorAttr tensor;
  std::vector<int> graphs;  // indices into Node::subgraphs

  static Attribute of_int(int64_t v) {
    Attribute a;
    a.kind = Kind::Int;
    a.i = v;
    return a;
  }
  static Attribute of_float(double v) {
    Attribute a;
    a.kind = Kind::Float;
    a.f = v;
    return a;
  }
  static Attribute of_string(std::string v) {
    Attribute a;
    a.kind = Kind::String;
    a.s = std::move(v);
    return a;
  }
  static Attribute of_ints(std::vector<int64_t> v) {
    Attribute a;
    a.kind = Kind::Ints;
    a.ints = std::move(v);
    return a;
  }
  static Attribute of_floats(std::vector<double> v) {
    Attribute a;
    a.kind = Kind::Floats;
    a.floats = std::move(v);
    return a;
  }
};

// An immutable list of strings shared between its copies (copying is a reference-count increment): a
// node's scope levels and their classes. Importers hand the nodes of one module the same list, so a
// model's scope paths are stored once per module, not once per node.
class StringList {
 public:
  StringList() = default;
  StringList(std::vector<std::string> v)  // NOLINT: implicit, `n.scope = levels` is the natural spelling
      : p_(v.empty() ? nullptr : std::make_shared<const std::vector<std::string>>(std::move(v))) {}
  StringList(std::initializer_list<std::string> v) : StringList(std::vector<std::string>(v)) {}

  const std::vector<std::string>& vec() const { return p_ ? *p_ : empty_list(); }
  operator const std::vector<std::string>&() const { return vec(); }  // NOLINT
  size_t size() const { return vec().size(); }
  bool empty() const { return !p_; }
  const std::string& back() const { return p_->back(); }
  const std::string& operator[](size_t i) const { return (*p_)[i]; }
  std::vector<std::string>::const_iterator begin() const { return vec().begin(); }
  std::vector<std::string>::const_iterator end() const { return vec().end(); }
  // Identity of the shared list (nullptr when empty): equal ids mean equal lists.
  const void* id() const { return p_.get(); }
  bool operator==(const StringList& o) const { return p_ == o.p_ || vec() == o.vec(); }
  bool operator==(const std::vector<std::string>& o) const { return vec() == o; }
  bool operator!=(const StringList& o) const { return !(*this == o); }

 private:
  static const std::vector<std::string>& empty_list();
  std::shared_ptr<const std::vector<std::string>> p_;
};

// A field added here is copied by Graph::copy_to (ir.cc) too.
struct Node {
  std::string name;
  std::string op;            // canonical op type ("Conv", "MatMul", ...)
  std::string domain;        // "" for the default domain, "com.microsoft", "flopwise", or the model's own
  int opset = 0;             // opset version of `domain` in effect (after import normalisation)
  std::vector<int> inputs;   // value indices; -1 for an omitted optional input
  std::vector<int> outputs;  // value indices; -1 for an omitted optional output
  std::map<std::string, Attribute> attrs;
  std::vector<std::unique_ptr<Graph>> subgraphs;
  StringList scope;          // module path, outermost first: {"layer1", "layer1.0", "layer1.0.conv1"}
  StringList scope_classes;  // class per scope level where known ("" where not)
  // A joint training program's backward node (torch.export's _export_forward_backward): it computes
  // gradients, not the forward's outputs; the report counts it as the step's backward.
  bool backward = false;

  bool has_attr(const std::string& k) const { return attrs.count(k) != 0; }
  int64_t attr_i(const std::string& k, int64_t dflt) const;
  double attr_f(const std::string& k, double dflt) const;
  std::string attr_s(const std::string& k, const std::string& dflt) const;
  std::vector<int64_t> attr_ints(const std::string& k) const;  // empty when absent
  std::vector<double> attr_floats(const std::string& k) const;
  std::string scope_name() const { return scope.empty() ? std::string() : scope.back(); }
};

// A field added here is copied by Graph::copy_to (ir.cc) too.
class Graph {
 public:
  std::string name;
  std::vector<Value> values;
  std::vector<Node> nodes;   // topological order
  std::vector<int> inputs;   // graph inputs, in order (initializers excluded)
  std::vector<int> outputs;  // graph outputs, in order
  const Graph* parent = nullptr;
  // Class of the module whose forward this graph is (a TorchScript archive's root module: "ResNet",
  // "MultiheadAttention"); "" where the format does not record it (ONNX) and in subgraphs.
  std::string module_class;

  int find(std::string_view value_name) const;  // -1 when absent
  int add_value(std::string_view value_name);   // returns the existing index when present
  void reserve_values(size_t n);                // room for n values (an importer that knows the count)
  // Makes `out` a deep copy of this graph: its values, its nodes with their subgraphs (each copied
  // subgraph's parent the copy that holds it) and the name index; `out.parent` is left as it is.
  void copy_to(Graph& out) const;

 private:
  // Value names -> indices, without copies of the names (open addressing; ir.cc).
  std::vector<uint64_t> slots_;
  int probe(std::string_view name, size_t hash) const;  // index, or -(free slot) - 1
  void rehash(size_t min_slots);
};

// One op of the source model in the order it runs, with the IR values its tensor arguments and results
// became: what `flopwise run --verify` compares an execution of the same file against. Only importers of
// executable formats fill it (TorchScript: every aten:: node lowered, branches and loops as resolved).
struct SourceOp {
  std::string kind;   // "aten::conv2d"
  std::string scope;  // dotted module path of the op ("" for the root)
  // Per schema argument / result: the IR values of its tensor(s); empty when not a tensor (or unknown),
  // several for a tensor list.
  std::vector<std::vector<int>> inputs, outputs;
};

// A module of the source model as the model declares it (TorchScript: the module tree; ONNX records none).
struct ModuleDecl {
  std::string path;  // dotted path from the root ("bert.encoder.layer.0"); "" for the root
  std::string cls;   // class ("BertLayer")
  // The parameters the module registers itself (its children's are theirs): per tensor, an id shared by every
  // module holding the same tensor (a tied decoder and word embedding), and its element count.
  std::vector<std::pair<int64_t, int64_t>> params;
};

// What a model is read from: a file's format as detect_format (flopwise/analyse.h) finds it, and a Model's
// own (ExportArchive: a torch.export .pt2; PytorchTrace: the ops of a profiler trace). A report prints its
// name from the table below, never spelt elsewhere.
enum class ModelFormat { Onnx, TorchScript, ExportArchive, PytorchTrace, ReportJson, Gzip, Unknown };
struct ModelFormatName {
  ModelFormat format;
  const char* report;  // in reports (JSON model.format, the text's model line): "pt2", "pytorch trace"
  const char* python;  // flopwise.detect_format's answer in Python: "export_archive"
};
const std::vector<ModelFormatName>& model_formats();
const char* model_format_name(ModelFormat f);  // its name in reports
// The format a report's name stands for (a saved report's model.format); Unknown for any other name.
ModelFormat model_format_of(std::string_view report_name);

// A field added here is copied by copy_model (ir.cc) too.
struct Model {
  std::string path;
  ModelFormat format = ModelFormat::Unknown;
  std::string producer;                   // e.g. "pytorch 1.13.1"
  std::map<std::string, int64_t> opsets;  // domain -> version
  Graph graph;
  std::vector<std::string> warnings;  // import-time warnings (ignored fields, unknown domains, ...)
  std::vector<SourceOp> source_ops;   // in graph (main graph) value indices; empty for ONNX
  // Every module in declaration order: pre-order, each module's children in the order it registered them
  // (torch.nn.Module.named_modules()). Empty where the format keeps no module tree (ONNX).
  std::vector<ModuleDecl> modules;
  // Other names of input dims, and their bounds, where the format records them (torch.export: torch's symbol
  // "s70" for "input_ids.1", range_constraints [2, 64]; nullopt: unbounded). --dim takes either name.
  std::map<std::string, std::string> dim_aliases;  // other name -> input dim
  std::map<std::string, std::pair<std::optional<int64_t>, std::optional<int64_t>>> dim_bounds;
};

// A deep copy of `m` (its graph by Graph::copy_to): what an analysis binds pins on and infers shapes in,
// leaving a loaded model as it was read.
std::shared_ptr<Model> copy_model(const Model& m);

}  // namespace flopwise
