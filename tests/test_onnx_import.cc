// ONNX importer: opset normalisation (old attribute forms), model-local functions, metadata scopes.
// Models are built with ONNX's protobuf classes; expected shapes and costs are hand-derived.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include "flopwise/cost.h"
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
  ints(b.node("Squeeze", {"u"}, {"s"}), "axes", {0});        // -> 2x3x4x1
  auto* sl = b.node("Slice", {"x"}, {"sl"});                 // Slice-1: axis 2, [1, 3) -> 2x3x2
  ints(sl, "starts", {1});
  ints(sl, "ends", {3});
  ints(sl, "axes", {2});
  ints(b.node("ReduceSum", {"x"}, {"r"}), "axes", {1});  // keepdims default 1 -> 2x1x4
  auto* pad = b.node("Pad", {"x"}, {"p"});                 // Pad-2: pads begin (0,1,2) end (0,1,2) -> 2x5x8
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
  auto value = [&](const std::string& n) -> const flopwise::Value& { return m.graph.values[m.graph.find(n)]; };
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
  for (int i = 0; i < 50000; ++i) added = added && g.add_value("/model/layers." + std::to_string(i) + "/out") == i;
  CHECK(added);
  bool all = true;
  for (int i = 0; i < 50000; ++i) all = all && g.find("/model/layers." + std::to_string(i) + "/out") == i;
  CHECK(all);
  CHECK(g.add_value("/model/layers.7/out") == 7);  // an existing name: its index, no new value
  CHECK(g.values.size() == 50000);
  CHECK(g.find("/model/layers.50000/out") == -1);
  CHECK(g.find("") == -1);
}
