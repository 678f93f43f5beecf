// tests/test_onnx_import.cc — ONNX importer: opset normalisation (old attribute forms), model-local
// functions, metadata scopes. Models are built with ONNX's protobuf classes; expected shapes and costs are
// hand-derived.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <cstring>

#include "flopwise/cost.h"
#include "flopwise/errors.h"
#include "flopwise/infer.h"
#include "flopwise/onnx_import.h"

namespace {

struct ModelBuilder {
  onnx::ModelProto m;
  explicit ModelBuilder(int opset) {
    m.set_ir_version(7);
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    m.mutable_graph()->set_name("g");
  }
  void input(const std::string& name, std::vector<int64_t> dims, int elem = onnx::TensorProto::FLOAT) {
    auto* in = m.mutable_graph()->add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    for (auto d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  void weight(const std::string& name, std::vector<int64_t> dims) {
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : dims) t->add_dims(d);
  }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs,
                        onnx::GraphProto* g = nullptr) {
    auto* n = (g ? g : m.mutable_graph())->add_node();
    n->set_op_type(op);
    n->set_name("/" + op + "_" + outs[0]);
    for (auto& i : ins) n->add_input(i);
    for (auto& o : outs) n->add_output(o);
    return n;
  }
  void output(const std::string& name) { m.mutable_graph()->add_output()->set_name(name); }
  flopwise::Model load() { return flopwise::import_onnx_bytes(m.SerializeAsString(), "test.onnx"); }
};

void ints(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}
void floats(onnx::NodeProto* n, const std::string& name, std::vector<float> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOATS);
  for (auto x : v) a->add_floats(x);
}
void flt(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

std::string shape_of(flopwise::Model& m, const std::string& value) {
  return m.graph.values[m.graph.find(value)].shape.str();
}

}  // namespace

TEST_CASE("old opsets: attribute forms become inputs and infer like the newest version") {
  ModelBuilder b(9);
  b.input("x", {2, 3, 4});
  ints(b.node("Unsqueeze", {"x"}, {"u"}), "axes", {0, 4});  // 2x3x4 -> 1x2x3x4x1
  ints(b.node("Squeeze", {"u"}, {"s"}), "axes", {0});       // -> 2x3x4x1
  auto* sl = b.node("Slice", {"x"}, {"sl"});                // Slice-1: axis 2, [1, 3) -> 2x3x2
  ints(sl, "starts", {1});
  ints(sl, "ends", {3});
  ints(sl, "axes", {2});
  ints(b.node("ReduceSum", {"x"}, {"r"}), "axes", {1});  // keepdims default 1 -> 2x1x4
  auto* pad = b.node("Pad", {"x"}, {"p"});               // Pad-2: pads begin (0,1,2) end (0,1,2) -> 2x5x8
  ints(pad, "pads", {0, 1, 2, 0, 1, 2});
  auto* clip = b.node("Clip", {"x"}, {"c"});  // Clip-6 min/max attributes
  flt(clip, "min", 0);
  flt(clip, "max", 6);
  floats(b.node("Upsample", {"x"}, {"up"}), "scales", {1, 2, 2});  // Upsample-7: 2x6x8
  ints(b.node("Reshape", {"x"}, {"rs"}), "shape", {0, -1});        // Reshape-1: 2x12
  b.output("s");
  flopwise::Model m = b.load();
  flopwise::InferResult r = flopwise::infer_shapes(m, {});
  CHECK(r.unsupported.empty());
  CHECK(shape_of(m, "u") == "1x2x3x4x1");
  CHECK(shape_of(m, "s") == "2x3x4x1");
  CHECK(shape_of(m, "sl") == "2x3x2");
  CHECK(shape_of(m, "r") == "2x1x4");
  CHECK(shape_of(m, "p") == "2x5x8");
  CHECK(shape_of(m, "c") == "2x3x4");
  CHECK(shape_of(m, "up") == "2x6x8");
  CHECK(shape_of(m, "rs") == "2x12");
  // Clip with both bounds: 2 FLOPs per element, 2*3*4*2 = 48.
  flopwise::Report rep = flopwise::build_report(m, r);
  for (const auto& n : rep.nodes)
    if (n.op == "Clip") CHECK(n.cost.flops.v == 48);
}

TEST_CASE("model-local functions are inlined; their name becomes the scope's class") {
  ModelBuilder b(17);
  auto* dom = b.m.add_opset_import();
  dom->set_domain("my.blocks");
  dom->set_version(1);
  onnx::FunctionProto* f = b.m.add_functions();
  f->set_name("Block.1");
  f->set_domain("my.blocks");
  f->add_input("X");
  f->add_input("W");
  f->add_output("Y");
  auto* op = f->add_opset_import();
  op->set_domain("");
  op->set_version(17);
  auto* mm = f->add_node();
  mm->set_op_type("MatMul");
  mm->add_input("X");
  mm->add_input("W");
  mm->add_output("H");
  auto* relu = f->add_node();
  relu->set_op_type("Relu");
  relu->add_input("H");
  relu->add_output("Y");

  b.input("x", {4, 8});
  b.weight("w1", {8, 16});
  b.weight("w2", {16, 2});
  auto* c1 = b.node("Block.1", {"x", "w1"}, {"h1"});
  c1->set_domain("my.blocks");
  c1->set_name("/blocks.0/Block.1");
  auto* c2 = b.node("Block.1", {"h1", "w2"}, {"h2"});
  c2->set_domain("my.blocks");
  c2->set_name("/blocks.1/Block.1");
  b.output("h2");
  flopwise::Model m = b.load();
  flopwise::InferResult r = flopwise::infer_shapes(m, {});
  CHECK(r.unsupported.empty());
  CHECK(shape_of(m, "h2") == "4x2");
  flopwise::Report rep = flopwise::build_report(m, r);
  // MACs: 4*8*16 + 4*16*2 = 512 + 128 = 640; params 8*16 + 16*2 = 160.
  CHECK(rep.totals.macs.v == 640);
  CHECK(rep.totals.params.v == 160);
  REQUIRE(rep.scopes->children.size() == 2);
  CHECK(rep.scopes->children[0]->name == "blocks.0");
  CHECK(rep.scopes->children[0]->cls == "Block");
  CHECK(rep.scopes->children[0]->cost.macs.v == 512);
}

TEST_CASE("scopes and classes from node metadata (newer torch exporters)") {
  ModelBuilder b(17);
  b.input("x", {2, 3});
  auto* n = b.node("Relu", {"x"}, {"y"});
  n->set_name("node_relu");
  // NodeProto.metadata_props is field 9 (after ONNX 1.12): write it as an unknown field.
  onnx::StringStringEntryProto scopes, classes;
  scopes.set_key("pkg.torch.onnx.name_scopes");
  scopes.set_value("['', 'encoder', 'layer.0', 'act']");
  classes.set_key("pkg.torch.onnx.class_hierarchy");
  classes.set_value("['model.Net', 'model.Encoder', 'model.Layer', 'torch.nn.modules.activation.ReLU']");
  auto* uf = n->GetReflection()->MutableUnknownFields(n);
  uf->AddLengthDelimited(9, scopes.SerializeAsString());
  uf->AddLengthDelimited(9, classes.SerializeAsString());
  b.output("y");
  flopwise::Model m = b.load();
  const auto& node = m.graph.nodes[0];
  CHECK(node.scope == std::vector<std::string>{"encoder", "encoder.layer.0", "encoder.layer.0.act"});
  CHECK(node.scope_classes == std::vector<std::string>{"Encoder", "Layer", "ReLU"});
}

TEST_CASE("--dim binds symbols in declared types too (they fill in after an unsupported op)") {
  ModelBuilder b(17);
  auto* dom = b.m.add_opset_import();
  dom->set_domain("com.example");
  dom->set_version(1);
  auto* in = b.m.mutable_graph()->add_input();
  in->set_name("x");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("batch");
  tt->mutable_shape()->add_dim()->set_dim_value(4);
  b.node("Mystery", {"x"}, {"y"})->set_domain("com.example");
  b.node("Relu", {"y"}, {"z"});
  b.output("z");
  auto* vi = b.m.mutable_graph()->add_value_info();  // the exporter's declared type of y
  vi->set_name("y");
  *vi->mutable_type() = in->type();
  flopwise::Model m = b.load();
  flopwise::InferOptions opts;
  opts.dims = {{"batch", 3}};
  flopwise::InferResult r = flopwise::infer_shapes(m, opts);
  CHECK(r.unsupported.count("com.example::Mystery") == 1);
  CHECK(shape_of(m, "y") == "3x4");
  CHECK(shape_of(m, "z") == "3x4");
}

TEST_CASE(
    "a main-graph input dim with neither value nor param (skl2onnx's batch) is a symbol <input>.<axis>") {
  ModelBuilder b(17);
  auto* in = b.m.mutable_graph()->add_input();
  in->set_name("x:0");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim();                          // dim {}
  tt->mutable_shape()->add_dim()->set_dim_param("x_0.2");  // taken: the anonymous axis 2 below gets x_0.2_
  tt->mutable_shape()->add_dim();
  b.node("Relu", {"x:0"}, {"y"});
  b.output("y");
  flopwise::Model m = b.load();
  flopwise::InferOptions opts;
  opts.dims = {{"x_0.0", 5}};
  flopwise::infer_shapes(m, opts);
  CHECK(shape_of(m, "y") == "5xx_0.2xx_0.2_");
}

TEST_CASE("initializers: integer and small float contents are read; other weights only their type and dims") {
  ModelBuilder b(17);
  auto* g = b.m.mutable_graph();
  auto add = [&](const std::string& name, int type, int64_t n) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    t->add_dims(n);
    const size_t elem = type == onnx::TensorProto::INT64 ? 8 : 4;
    std::string raw(static_cast<size_t>(n) * elem, '\0');
    raw[0] = 3;  // first element: 3 (int64) or a tiny float
    t->set_raw_data(raw);
  };
  add("shape_ints", onnx::TensorProto::INT64, 4096);  // limits().max_const_elements: kept (shape arithmetic)
  add("too_many_ints", onnx::TensorProto::INT64, 4097);
  add("scales", onnx::TensorProto::FLOAT, 64);  // small floats (Resize scales, epsilons): kept
  add("weight", onnx::TensorProto::FLOAT, 65);  // a weight: its bytes are never read
  flopwise::Model m = b.load();
  auto value = [&](const std::string& n) -> const flopwise::Value& {
    return m.graph.values[m.graph.find(n)];
  };
  REQUIRE(value("shape_ints").data);
  CHECK(value("shape_ints").data->ints.size() == 4096);
  CHECK(value("shape_ints").data->ints[0] == flopwise::Dim(3));
  CHECK_FALSE(value("too_many_ints").data);
  REQUIRE(value("scales").data);
  CHECK(value("scales").data->floats.size() == 64);
  CHECK_FALSE(value("weight").data);
  // Every initializer keeps its type and shape.
  CHECK(value("weight").shape.str() == "65");
  CHECK(value("weight").dtype == flopwise::DType::Float32);
  CHECK(value("too_many_ints").shape.str() == "4097");
}

TEST_CASE("scopes: the nodes of one module share one scope list") {
  ModelBuilder b(17);
  b.input("x", {2, 3});
  b.node("Relu", {"x"}, {"a"})->set_name("/enc/layer.0/act/Relu");
  b.node("Relu", {"a"}, {"b"})->set_name("/enc/layer.0/act/Relu_1");
  b.node("Relu", {"b"}, {"c"})->set_name("/enc/layer.1/act/Relu");
  b.output("c");
  flopwise::Model m = b.load();
  const auto& n = m.graph.nodes;
  REQUIRE(n.size() == 3);
  CHECK(n[0].scope == std::vector<std::string>{"enc", "enc.layer.0", "enc.layer.0.act"});
  CHECK(n[0].scope.id() == n[1].scope.id());  // one list, shared
  CHECK(n[2].scope == std::vector<std::string>{"enc", "enc.layer.1", "enc.layer.1.act"});
  CHECK(n[2].scope.id() != n[0].scope.id());
}

TEST_CASE("value index: a graph finds each of many values by name, and none that is absent") {
  flopwise::Graph g;
  g.reserve_values(10);  // grows past the reservation
  bool added = true;
  for (int i = 0; i < 50000; ++i)
    added = added && g.add_value("/model/layers." + std::to_string(i) + "/out") == i;
  CHECK(added);
  bool all = true;
  for (int i = 0; i < 50000; ++i) all = all && g.find("/model/layers." + std::to_string(i) + "/out") == i;
  CHECK(all);
  CHECK(g.add_value("/model/layers.7/out") == 7);  // an existing name: its index, no new value
  CHECK(g.values.size() == 50000);
  CHECK(g.find("/model/layers.50000/out") == -1);
  CHECK(g.find("") == -1);
}

namespace {
// Protobuf wire bytes written by hand, for forms ONNX's own writer never produces (packed lists, a field
// repeated, an enum value it does not know).
std::string varint(uint64_t v) {
  std::string s;
  do {
    s += static_cast<char>((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
    v >>= 7;
  } while (v);
  return s;
}
std::string tag(int field, int wire) {
  return varint(static_cast<uint64_t>(field) << 3 | static_cast<uint64_t>(wire));
}
std::string num(int field, int64_t v) { return tag(field, 0) + varint(static_cast<uint64_t>(v)); }
std::string bytes(int field, const std::string& b) { return tag(field, 2) + varint(b.size()) + b; }
std::string fixed32(int field, float f) {
  std::string s(4, '\0');
  std::memcpy(s.data(), &f, 4);
  return tag(field, 5) + s;
}
std::string packed_floats(const std::vector<float>& v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), v.data(), s.size());
  return s;
}
}  // namespace

TEST_CASE("nodes are read from their bytes as ONNX's own parser reads them") {
  // The importer decodes nodes and their common attributes from the wire itself. Each attribute below is
  // hand-written bytes, put on the node as an unknown field 5 (protobuf writes those out verbatim, so the
  // file holds them as attributes). The expected values are what the protobuf library itself parses from
  // the same file (onnx::ModelProto::ParseFromString), plus the hand-written contents of the tensors.
  using A = onnx::AttributeProto;
  ModelBuilder b(17);
  b.input("x", {2, 3});
  auto* n = b.node("Identity", {"x"}, {"y"});
  b.output("y");
  auto* uf = n->mutable_unknown_fields();
  uf->AddLengthDelimited(3, "/renamed/Identity");  // a second name: the last one wins
  uf->AddLengthDelimited(5, bytes(1, "packed_ints") + num(20, A::INTS) +
                                bytes(8, varint(1) + varint(static_cast<uint64_t>(-2)) + varint(300)));
  uf->AddLengthDelimited(
      5, bytes(1, "ignored") + bytes(1, "last_name") + num(20, A::INT) + num(3, 5) + num(3, 7));
  uf->AddLengthDelimited(5, bytes(1, "packed_floats") + num(20, A::FLOATS) +
                                bytes(7, packed_floats({1.5f, -2.25f})) + fixed32(7, 4.0f));
  uf->AddLengthDelimited(5, bytes(1, "unknown_type") + num(20, A::INT) + num(20, 99) + num(3, 3));
  uf->AddLengthDelimited(
      5, bytes(1, "float") + num(20, A::FLOAT) + fixed32(2, 0.5f) + bytes(13, "a doc string"));
  std::string raw(24, '\0');
  for (int64_t i = 0; i < 3; ++i) {
    const int64_t v = 4 + i;
    std::memcpy(raw.data() + 8 * i, &v, 8);
  }
  uf->AddLengthDelimited(5, bytes(1, "tensor_raw") + num(20, A::TENSOR) +
                                bytes(5, num(1, 3) + num(2, onnx::TensorProto::INT64) + bytes(9, raw)));
  uf->AddLengthDelimited(
      5, bytes(1, "tensor_typed") + num(20, A::TENSOR) +
             bytes(5, num(1, 2) + num(2, onnx::TensorProto::INT64) + bytes(7, varint(8) + varint(9))));
  uf->AddLengthDelimited(5, bytes(1, "strings") + num(20, A::STRINGS) + bytes(9, "p") + bytes(9, "q"));
  uf->AddLengthDelimited(5, bytes(1, "ref") + num(20, A::INT) + num(3, 11) + bytes(21, "caller_attr"));
  const std::string file = b.m.SerializeAsString();

  onnx::ModelProto oracle;
  REQUIRE(oracle.ParseFromString(file));
  const onnx::NodeProto& on = oracle.graph().node(0);
  flopwise::Model m = flopwise::import_onnx_bytes(file, "test.onnx");
  REQUIRE(m.graph.nodes.size() == 1);
  const flopwise::Node& fn = m.graph.nodes[0];
  CHECK(fn.name == on.name());
  CHECK(fn.name == "/renamed/Identity");
  REQUIRE(on.attribute_size() == 9);
  for (const auto& a : on.attribute()) {
    CAPTURE(a.name());
    REQUIRE(fn.attrs.count(a.name()) == 1);
    const flopwise::Attribute& at = fn.attrs.at(a.name());
    switch (a.type()) {
      case A::INT:
        CHECK(at.kind == flopwise::Attribute::Kind::Int);
        CHECK(at.i == a.i());
        break;
      case A::FLOAT:
        CHECK(at.kind == flopwise::Attribute::Kind::Float);
        CHECK(at.f == a.f());
        break;
      case A::INTS:
        CHECK(at.kind == flopwise::Attribute::Kind::Ints);
        CHECK(at.ints == std::vector<int64_t>(a.ints().begin(), a.ints().end()));
        break;
      case A::FLOATS:
        CHECK(at.kind == flopwise::Attribute::Kind::Floats);
        CHECK(at.floats == std::vector<double>(a.floats().begin(), a.floats().end()));
        break;
      case A::STRINGS:
        CHECK(at.kind == flopwise::Attribute::Kind::Strings);
        CHECK(at.strings == std::vector<std::string>(a.strings().begin(), a.strings().end()));
        break;
      case A::TENSOR:
        CHECK(at.kind == flopwise::Attribute::Kind::Tensor);
        CHECK(at.tensor.dims == std::vector<int64_t>(a.t().dims().begin(), a.t().dims().end()));
        CHECK(static_cast<int>(at.tensor.dtype) == a.t().data_type());
        break;
      default:
        FAIL("unexpected attribute type " << a.type());
    }
  }
  // The oracle's reading of the hand-written forms, spelled out.
  CHECK(fn.attrs.at("packed_ints").ints == std::vector<int64_t>{1, -2, 300});
  CHECK(fn.attrs.at("last_name").i == 7);
  CHECK(fn.attrs.at("packed_floats").floats == std::vector<double>{1.5, -2.25, 4.0});
  CHECK(fn.attrs.at("unknown_type").kind == flopwise::Attribute::Kind::Int);
  CHECK(fn.attrs.at("unknown_type").i == 3);
  const auto ints_of = [&](const char* name) {
    std::vector<int64_t> v;
    const auto& d = fn.attrs.at(name).tensor.data;
    if (d)
      for (const auto& x : d->ints) v.push_back(x.value());
    return v;
  };
  CHECK(ints_of("tensor_raw") == std::vector<int64_t>{4, 5, 6});
  CHECK(ints_of("tensor_typed") == std::vector<int64_t>{8, 9});
}

namespace {
// A model written byte by byte, so that a test can corrupt one field of it and know where that field starts.
// Node: Identity x -> y with an INTS attribute; an int64 initializer too large for its contents to be read
// (its packed int64_data is only checked); graph input x [2, 3] and output y.
struct WireModel {
  std::string attr = bytes(1, "perm") + num(20, onnx::AttributeProto::INTS) + bytes(8, varint(1) + varint(0));
  std::string node_tail;  // bytes appended to the node
  std::string init =
      num(1, 5000) + num(2, onnx::TensorProto::INT64) + bytes(8, "w") + bytes(7, varint(1) + varint(2));
  std::string graph_tail, model_tail;
  std::string node_name = bytes(3, "/Identity");
  std::string init_field;  // the initializer field as a whole (tag, length, tensor); empty: written from init
  std::string node() const {
    return bytes(1, "x") + bytes(2, "y") + node_name + bytes(4, "Identity") + bytes(5, attr) + node_tail;
  }
  std::string graph() const {
    onnx::ValueInfoProto x, y;
    x.set_name("x");
    auto* tt = x.mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(2);
    tt->mutable_shape()->add_dim()->set_dim_value(3);
    y.set_name("y");
    return bytes(1, node()) + bytes(2, "g") + (init_field.empty() ? bytes(5, init) : init_field) +
           bytes(11, x.SerializeAsString()) + bytes(12, y.SerializeAsString()) + graph_tail;
  }
  std::string file() const { return num(1, 8) + bytes(8, num(2, 17)) + bytes(7, graph()) + model_tail; }
};

// The importer's error on `file`, or "" when it imports it without a warning that it is malformed.
std::string import_error(const std::string& file) {
  try {
    flopwise::Model m = flopwise::import_onnx_bytes(file, "wire.onnx");
    for (const auto& w : m.warnings)
      if (w.find("malformed") != std::string::npos) return w;
  } catch (const flopwise::InputError& e) {
    return e.what();
  }
  return "";
}

// A graph input named "deep" whose type is a float tensor inside `levels` sequence types, serialised.
std::string nested_value_info(int levels) {
  onnx::TypeProto t;
  t.mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int i = 0; i < levels; ++i) {
    onnx::TypeProto outer;
    *outer.mutable_sequence_type()->mutable_elem_type() = t;
    t = outer;
  }
  onnx::ValueInfoProto deep;
  deep.set_name("deep");
  *deep.mutable_type() = t;
  return deep.SerializeAsString();
}
}  // namespace

TEST_CASE(
    "wire: bytes protobuf's own parser rejects are refused, naming the byte where they break (issue 31)") {
  // Each case corrupts one field of a valid file; the byte named is that field's first (its tag). Protobuf's
  // own C++ parser (onnx::ModelProto::ParseFromString, the one ONNX's tools use) rejects every one: checked
  // here, beside the importer's refusal.
  struct Case {
    const char* label;
    std::string file;
    size_t at;  // where the broken field starts
  };
  std::vector<Case> cases;
  // The broken field: `field`'s bytes, found once in `file` (plus `skip`), or the file's last bytes.
  const auto add = [&](const char* label, const std::string& file, const std::string& field,
                       size_t skip = 0) {
    const size_t at = file.find(field);
    REQUIRE(at != std::string::npos);
    REQUIRE(file.find(field, at + 1) == std::string::npos);
    cases.push_back({label, file, at + skip});
  };
  const auto add_tail = [&](const char* label, const std::string& file, const std::string& tail) {
    cases.push_back({label, file, file.size() - tail.size()});
  };
  const std::string good = WireModel().file();
  {  // a corrupted length field: the graph's runs 100 bytes past the end of the file
    const std::string graph = WireModel().graph();
    const std::string bad_len = tag(7, 2) + varint(graph.size() + 100);
    add("a graph length past the end of the file", num(1, 8) + bytes(8, num(2, 17)) + bad_len + graph,
        bad_len);
  }
  {  // a length past the end of a nested message (inside the file): an attribute's name runs past the
     // attribute
    WireModel w;
    w.attr = tag(1, 2) + varint(40) + "perm" + num(20, onnx::AttributeProto::INTS);
    add("an attribute's name past the attribute's end", w.file(), w.attr);
  }
  {  // a flipped wire type: the initializer's tag says 7 (no such wire type)
    WireModel w;
    w.init_field = tag(5, 7) + varint(w.init.size()) + w.init;
    add("wire type 7", w.file(), w.init_field);
  }
  {  // a flipped wire type: the initializer's tag says start-group (2 -> 3); no group end follows
    WireModel w;
    w.init_field = tag(5, 3) + varint(w.init.size()) + w.init;
    add("a group that never ends", w.file(), w.init_field);
  }
  {  // a group ended by another field's end tag
    WireModel w;
    w.node_tail = tag(15, 3) + num(1, 1) + tag(16, 4);
    add("a group ended by another field's end tag", w.file(), w.node_tail);
  }
  {  // an end-group tag outside any group
    WireModel w;
    w.graph_tail = tag(15, 4);
    add_tail("an end-group tag outside a group", w.file(), w.graph_tail);
  }
  {  // a truncated varint: the file ends in the middle of a tag
    WireModel w;
    w.model_tail = "\x80";
    add_tail("a cut tag at the end of the file", w.file(), w.model_tail);
  }
  {  // a 0 byte ending the file (Python's protobuf module, C++-backed, takes it with a RuntimeWarning and a
     // model; ParseFromString in C++, which the importer follows, rejects it)
    WireModel w;
    w.model_tail = std::string(1, '\0');
    add_tail("a 0 tag at the end of the file", w.file(), w.model_tail);
  }
  {  // a truncated varint inside a packed list the importer does not read (the initializer's int64_data)
    WireModel w;
    w.init = num(1, 5000) + num(2, onnx::TensorProto::INT64) + bytes(8, "w") + bytes(7, varint(1) + "\x82");
    add("a cut varint in a packed int64_data", w.file(), bytes(7, varint(1) + "\x82"));
  }
  {  // a 0 byte as the node's last field (a tag of field 0)
    WireModel w;
    w.node_tail = std::string(1, '\0');
    add("a 0 tag at the end of a node", w.file(), bytes(5, w.attr) + w.node_tail, bytes(5, w.attr).size());
  }
  {  // field number 0 with another wire type
    WireModel w;
    w.graph_tail = std::string("\x05", 1) + "abcd";
    add_tail("field number 0", w.file(), w.graph_tail);
  }
  {  // a length written in 6 bytes (protobuf reads at most 5)
    WireModel w;
    w.node_name = tag(3, 2) + std::string("\x89\x80\x80\x80\x80\x00", 6) + "/Identity";
    add("a 6-byte length", w.file(), w.node_name);
  }
  {  // a 5-byte length whose last byte carries bits past 2^31
    WireModel w;
    w.node_name = tag(3, 2) + std::string("\x89\x80\x80\x80\x10", 5) + "/Identity";
    add("a 5-byte length over 2 GiB", w.file(), w.node_name);
  }
  {  // a packed float_data of 6 bytes
    WireModel w;
    w.init = num(1, 5000) + num(2, onnx::TensorProto::FLOAT) + bytes(8, "w") + bytes(4, "abcdef");
    add("a packed float_data of 6 bytes", w.file(), bytes(4, "abcdef"));
  }
  {  // an initializer's external_data entry that does not parse
    WireModel w;
    w.init += bytes(13, tag(1, 2) + varint(9) + "ab");
    add("a broken external_data entry", w.file(), bytes(13, tag(1, 2) + varint(9) + "ab"));
  }
  {  // the model's metadata_props entry that does not parse (a field the importer never reads)
    WireModel w;
    w.model_tail = bytes(14, tag(2, 2) + varint(7) + "v");
    add_tail("a broken metadata_props entry", w.file(), w.model_tail);
  }
  {  // a graph input's type nested deeper than protobuf's recursion limit (100): the innermost TypeProto is
     // the 2 + 2 x 60 + 1 = 123rd message below the model
    WireModel w;
    w.graph_tail = bytes(11, nested_value_info(60));
    add_tail("a type nested 124 deep", w.file(), w.graph_tail);
  }

  onnx::ModelProto oracle;
  REQUIRE(oracle.ParseFromString(good));
  CHECK(import_error(good).empty());
  for (const Case& c : cases) {
    CAPTURE(c.label);
    CHECK_FALSE(onnx::ModelProto().ParseFromString(c.file));
    const std::string err = import_error(c.file);
    CAPTURE(err);
    CHECK(err.find("not a valid ONNX model") != std::string::npos);
    CHECK(err.find("at byte " + std::to_string(c.at) + ";") != std::string::npos);
  }
}

TEST_CASE(
    "wire: forms protobuf's own parser accepts stay accepted (groups, long tags and lengths, odd wire "
    "types)") {
  std::vector<std::pair<const char*, WireModel>> cases;
  {
    WireModel w;
    w.node_tail = tag(15, 3) + num(1, 1) + tag(16, 3) + tag(16, 4) + tag(15, 4);  // an unknown group, nested
    cases.push_back({"an unknown group", w});
  }
  {
    WireModel w;
    w.node_name = tag(3, 2) + std::string("\x89\x80\x80\x80\x00", 5) + "/Identity";  // 9 in 5 bytes
    cases.push_back({"a 5-byte length", w});
  }
  {
    WireModel w;
    w.node_name = std::string("\x9a\x80\x80\x80\x00", 5) + varint(9) + "/Identity";  // tag (3, 2) in 5 bytes
    cases.push_back({"a 5-byte tag", w});
  }
  {
    WireModel w;
    w.node_tail = num(3, 12);  // the name field as a varint: an unknown field
    cases.push_back({"a known field with another wire type", w});
  }
  {
    WireModel w;
    w.init += bytes(13, bytes(1, "location") + bytes(2, "w.bin")) + bytes(10, std::string(16, '\0')) +
              bytes(4, std::string(8, '\0')) + bytes(3, num(1, 0) + num(2, 5));
    w.model_tail = bytes(14, bytes(1, "k") + bytes(2, "v")) + bytes(20, "") + bytes(4, "dom");
    w.graph_tail = bytes(14, bytes(1, "w") + bytes(2, bytes(1, "k") + bytes(2, "v")));
    cases.push_back({"fields read only to be checked", w});
  }
  {
    // 40 levels: the innermost TypeProto is the 2 + 2 x 40 + 1 = 83rd message, under 100
    WireModel w;
    w.graph_tail = bytes(11, nested_value_info(40));
    cases.push_back({"a type nested 84 deep", w});
  }
  for (const auto& [label, w] : cases) {
    const auto& label_ = label;  // clang 14 cannot capture a structured binding
    CAPTURE(label_);
    onnx::ModelProto oracle;
    CHECK(oracle.ParseFromString(w.file()));
    CHECK(import_error(w.file()).empty());
    CHECK(flopwise::import_onnx_bytes(w.file(), "wire.onnx").graph.nodes[0].name == "/Identity");
  }
}

TEST_CASE("wire: every bit flip and truncation of a small file that protobuf rejects is refused") {
  // Protobuf's own parser is the oracle: a mutant it rejects must not import cleanly. (A mutant it takes may
  // still be refused: a graph that is not one, say.)
  WireModel w;
  w.node_tail = tag(15, 3) + num(1, 1) + tag(15, 4);
  const std::string good = w.file();
  int rejected = 0, lenient = 0;
  auto check = [&](const std::string& file, const std::string& what) {
    if (onnx::ModelProto().ParseFromString(file)) return;
    ++rejected;
    if (import_error(file).empty()) {
      ++lenient;
      MESSAGE("imported although protobuf rejects it: " << what);
    }
  };
  for (size_t i = 0; i < good.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string f = good;
      f[i] = static_cast<char>(f[i] ^ (1 << bit));
      check(f, "bit " + std::to_string(bit) + " of byte " + std::to_string(i));
    }
    check(good.substr(0, i), "the first " + std::to_string(i) + " bytes");
  }
  CHECK(rejected > 100);
  CHECK(lenient == 0);
}
