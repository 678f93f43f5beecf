// tests/test_exported.cc — ONNX as exported since (issue 55): torch's dynamo exporter of torch 2.2-2.5 (each
// module a local function, torch_lib's functions branching with If on the rank), ONNX Runtime GenAI's decoder
// layout with its com.microsoft ops, and ai.onnx.ml graphs in skl2onnx's layouts. Files: models/exported
// (README). Each expectation is a published figure or a hand formula from the file's own tensors and
// attributes, never flopwise's output.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "flopwise/analyse.h"
#include "flopwise/convention.h"
#include "flopwise/cost.h"
#include "flopwise/infer.h"
#include "flopwise/llm.h"
#include "flopwise/onnx_import.h"
#include "onnx_tiny.h"

namespace {

flopwise::Analysis analyse_file(const std::string& name) {
  return flopwise::analyse(fwtest::model_path("exported/" + name), flopwise::Pins{},
                           flopwise::default_convention());
}

// The scope of that dotted path in the report's tree, or null.
const flopwise::ScopeNode* scope_of(const flopwise::ScopeNode& root, const std::string& path) {
  if (root.name == path) return &root;
  for (const auto& c : root.children)
    if (path.rfind(c->name, 0) == 0)
      if (const auto* s = scope_of(*c, path)) return s;
  return nullptr;
}

}  // namespace

TEST_CASE(
    "dynamo export (torch 2.2): ResNet-18's local functions count torchvision's MACs, with its modules") {
  // onnx/ir-py testdata/e2e_models/resnet18: torchvision resnet18, input 1x3x224x224, 87 functions.
  flopwise::Analysis a = analyse_file("resnet18_dynamo.onnx");
  const flopwise::Report& r = a.report;
  CHECK(r.warnings.empty());
  CHECK(r.totals.uncounted == 0);
  // torchvision's published figures for resnet18: 1.814 GMACs ("GFLOPS 1.81"), 11,689,512 params.
  CHECK(r.totals.macs.v == 1814073344);
  CHECK(r.totals.params.v == 11689512);
  // BatchNorm running mean and variance: 2 x (64 + 4*64 + 5*128 + 5*256 + 5*512) = 9600.
  CHECK(r.totals.buffers.v == 9600);
  const flopwise::ScopeNode& root = *r.scopes;
  struct Want {
    const char* path;
    const char* cls;
  };
  for (const Want& w : {Want{"conv1", "Conv2d"},
                        {"bn1", "BatchNorm2d"},
                        {"maxpool", "MaxPool2d"},
                        {"layer1", "Sequential"},
                        {"layer1.0", "BasicBlock"},
                        {"layer1.0.conv1", "Conv2d"},
                        {"layer2.0.downsample", "Sequential"},
                        {"layer2.0.downsample.0", "Conv2d"},
                        {"avgpool", "AdaptiveAvgPool2d"},
                        {"fc", "Linear"}}) {
    CAPTURE(w.path);
    const flopwise::ScopeNode* s = scope_of(root, w.path);
    REQUIRE(s);
    CHECK(s->cls == w.cls);
  }
  // conv1: 64 x 112 x 112 outputs, 3 x 7 x 7 each = 118,013,952; fc: 512 x 1000.
  CHECK(scope_of(root, "conv1")->cost.macs.v == 118013952);
  CHECK(scope_of(root, "fc")->cost.macs.v == 512000);
  // layer2.0's downsample: 128 x 28 x 28 outputs of a 1x1 conv over 64 channels.
  CHECK(scope_of(root, "layer2.0.downsample")->cost.macs.v == 128 * 28 * 28 * 64);
}

TEST_CASE("dynamo export (torch 2.2): Speech2Text2's decoder, modules named by their parameters") {
  // onnx/ir-py testdata/e2e_models/Speech2Text2ForCausalLM: input_ids 1x128; d_model 256, 6 layers, FFN 2048,
  // vocab 10000 (the file's initializers). Per layer: q, k, v, out projections 4*S*d*d, FFN 2*S*d*F, QK^T and
  // AV 2*S*S*d; the LM head S*d*V.
  const int64_t S = 128, d = 256, F = 2048, V = 10000, L = 6;
  const int64_t per_layer = 4 * S * d * d + 2 * S * d * F + 2 * S * S * d;
  flopwise::Analysis a = analyse_file("Speech2Text2ForCausalLM_dynamo.onnx");
  const flopwise::Report& r = a.report;
  CHECK(r.warnings.empty());
  CHECK(r.totals.uncounted == 0);
  CHECK(r.totals.macs.v == L * per_layer + S * d * V);  // 1,384,644,608
  const flopwise::ScopeNode& root = *r.scopes;
  const flopwise::ScopeNode* dec = scope_of(root, "model.decoder");
  REQUIRE(dec);
  CHECK(dec->cls == "Speech2Text2Decoder");
  const flopwise::ScopeNode* layer = scope_of(root, "model.decoder.layers.3");
  REQUIRE(layer);
  CHECK(layer->cls == "Speech2Text2DecoderLayer");
  CHECK(layer->cost.macs.v == per_layer);
  const flopwise::ScopeNode* q = scope_of(root, "model.decoder.layers.3.self_attn.q_proj");
  REQUIRE(q);
  CHECK(q->cls == "Linear");
  CHECK(q->cost.macs.v == S * d * d);
  const flopwise::ScopeNode* act = scope_of(root, "model.decoder.layers.3.activation_fn");  // no parameter
  REQUIRE(act);
  CHECK(act->cls == "ReLU");
  const flopwise::ScopeNode* head = scope_of(root, "lm_head");
  REQUIRE(head);
  CHECK(head->cost.macs.v == S * d * V);
}

namespace {

void attr_i(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
onnx::AttributeProto* attr_ref(onnx::NodeProto* n, const std::string& name, const std::string& ref,
                               onnx::AttributeProto::AttributeType t) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(t);
  a->set_ref_attr_name(ref);
  return a;
}
onnx::GraphProto* branch(onnx::NodeProto* n, const std::string& name) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(name);
  return a->mutable_g();
}

}  // namespace

TEST_CASE("a function's subgraphs read its inputs and attributes at any depth; attribute_proto defaults") {
  // f(X, W) = If(rank(X) == 2, then: If(rank == 2, then: Gemm(X, W, transB = ref tb), else X), else X)
  // with tb defaulting to 1 in the function's attribute_proto (field 11, after ONNX 1.12). Called twice with
  // X 4x8 and W 16x8: Gemm 4x8 . (16x8)^T -> 4x16, 4*8*16 = 512 MACs a call.
  onnx::ModelProto m = fwtest::tiny_model(17);
  auto* dom = m.add_opset_import();
  dom->set_domain("pkg.torch.2.2.0");
  dom->set_version(1);
  onnx::FunctionProto* f = m.add_functions();
  f->set_name("my_pkg_Block_block_1");
  f->set_domain("pkg.torch.2.2.0");
  f->add_input("X");
  f->add_input("W");
  f->add_output("Y");
  f->add_attribute("tb");
  f->add_opset_import()->set_version(17);
  auto* g = f->mutable_node();
  auto add = [&](const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs) {
    auto* n = g->Add();
    n->set_op_type(op);
    n->set_name("n_" + outs[0]);
    for (auto& i : ins) n->add_input(i);
    for (auto& o : outs) n->add_output(o);
    return n;
  };
  add("Shape", {"X"}, {"shape"});
  add("Size", {"shape"}, {"rank"});
  auto* two = add("Constant", {}, {"two"});
  attr_i(two, "value_int", 2);
  add("CastLike", {"two", "rank"}, {"two_cast"});
  add("Equal", {"rank", "two_cast"}, {"cond"});
  auto* outer = add("If", {"cond"}, {"Y"});
  onnx::GraphProto* then1 = branch(outer, "then_branch");
  auto* inner = then1->add_node();
  inner->set_op_type("If");
  inner->add_input("cond");
  inner->add_output("inner_y");
  then1->add_output()->set_name("inner_y");
  onnx::GraphProto* then2 = branch(inner, "then_branch");
  auto* gemm = then2->add_node();
  gemm->set_op_type("Gemm");
  gemm->add_input("X");
  gemm->add_input("W");
  gemm->add_output("gemm_y");
  attr_ref(gemm, "transB", "tb", onnx::AttributeProto::INT);
  then2->add_output()->set_name("gemm_y");
  for (auto [node, out] : {std::pair{inner, "else_inner"}, std::pair{outer, "else_outer"}}) {
    onnx::GraphProto* e = branch(node, "else_branch");
    auto* id = e->add_node();
    id->set_op_type("Identity");
    id->add_input("X");
    id->add_output(out);
    e->add_output()->set_name(out);
  }
  onnx::AttributeProto tb_default;
  tb_default.set_name("tb");
  tb_default.set_type(onnx::AttributeProto::INT);
  tb_default.set_i(1);
  f->GetReflection()->MutableUnknownFields(f)->AddLengthDelimited(11, tb_default.SerializeAsString());

  onnx::GraphProto* mg = m.mutable_graph();
  fwtest::tiny_input(mg, "x", onnx::TensorProto::FLOAT, {"4", "8"});
  for (const char* w : {"w1", "w2"}) {
    auto* t = mg->add_initializer();
    t->set_name(w);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(16);
    t->add_dims(8);
  }
  fwtest::tiny_node(mg, "my_pkg_Block_block_1_1", "my_pkg_Block_block_1", {"x", "w1"}, {"y1"},
                    "pkg.torch.2.2.0");
  fwtest::tiny_node(mg, "my_pkg_Block_block_1_2", "my_pkg_Block_block_1", {"x", "w2"}, {"y2"},
                    "pkg.torch.2.2.0");
  mg->add_output()->set_name("y1");
  mg->add_output()->set_name("y2");
  flopwise::Model model = flopwise::import_onnx_bytes(m.SerializeAsString(), "test.onnx");
  CHECK(model.warnings.empty());
  flopwise::InferResult inf = flopwise::infer_shapes(model, {});
  CHECK(model.graph.values[model.graph.find("y1")].shape.str() == "4x16");
  flopwise::Report rep = flopwise::build_report(model, inf);
  CHECK(rep.totals.uncounted == 0);
  CHECK(rep.totals.macs.v == 2 * 512);
  const flopwise::ScopeNode* block = scope_of(*rep.scopes, "block");  // scope from the function's name
  REQUIRE(block);
  CHECK(block->cls == "Block");
  CHECK(block->cost.macs.v == 2 * 512);
}

TEST_CASE("ONNX Runtime GenAI's decoder layout (GroupQueryAttention, MatMulNBits): counts and KV cache") {
  // models/exported/genai.py: hidden 64, 4 query heads of 16, 2 kv heads, 2 layers, FFN 128, vocab 256.
  // Per token: q and o 64*64 each, k and v 64*32 each, gate/up/down 64*128 each, per layer; LM head 64*256:
  // 2*(4096 + 2048 + 2048 + 4096 + 3*8192) + 16384 = 90112. Per query and key: QK^T and AV over 4 heads of
  // 16, per layer: 2*2*4*16 = 256.
  const int64_t per_token = 90112, per_pair = 256;
  for (const char* name : {"genai_llama", "genai_llama_int4"}) {
    CAPTURE(name);
    const auto expect = nlohmann::json::parse(
        fwtest::slurp(fwtest::model_path(std::string("exported/") + name + ".expect.json")));
    for (const char* phase : {"prefill", "decode"}) {
      CAPTURE(phase);
      const auto& run = expect["runs"][phase];  // what ONNX Runtime 1.23 returned for these inputs
      const int64_t B = run["batch"], S = run["seq"], P = run["past"];
      flopwise::Pins pins;
      pins.dims = {{"batch_size", B},
                   {"sequence_length", S},
                   {"past_sequence_length", P},
                   {"total_sequence_length", P + S}};
      flopwise::Analysis a = flopwise::analyse(fwtest::model_path(std::string("exported/") + name + ".onnx"),
                                               pins, flopwise::default_convention());
      const flopwise::Report& r = a.report;
      CHECK(r.unsupported.empty());
      CHECK(r.totals.uncounted == 0);
      CHECK(r.totals.macs.v == B * S * per_token + B * S * (P + S) * per_pair);
      const flopwise::Graph& g = a.model->graph;
      for (const char* out : {"logits", "present.0.key"}) {
        std::vector<int64_t> ort = run[std::string(out) == "logits" ? "logits" : "present_key"];
        std::string want;
        for (size_t i = 0; i < ort.size(); ++i) want += (i ? "x" : "") + std::to_string(ort[i]);
        CHECK(g.values[static_cast<size_t>(g.find(out))].shape.str() == want);
      }
    }
    // The cache as for a plain decoder: past_key_values.N.* -> present.N.*, along the past axis.
    auto loaded = flopwise::analyse(fwtest::model_path(std::string("exported/") + name + ".onnx"),
                                    flopwise::Pins{}, flopwise::default_convention());
    auto kv = flopwise::find_kv_cache(*loaded.model);
    REQUIRE(kv);
    CHECK(kv->pairs.size() == 4);
    CHECK(kv->past_dim == "past_sequence_length");
    CHECK(kv->seq_dim == "sequence_length");
  }
}

TEST_CASE("ONNX-ML (skl2onnx/onnxmltools layouts): costs and params from the attributes, ORT's shapes") {
  // models/exported/onnxml.py; per row (N = 3, as ONNX Runtime ran them), by the records' formulas:
  // ml_linear: Scaler 2*4; LinearClassifier (3 classes, 4 features, SOFTMAX) 12 MACs, 2*12 + 3 + 3*(5 + 1);
  //   Normalizer L2 3*4 + 1; LinearRegressor (2 targets) 8 MACs, 2*8 + 2. Params 8 + 15 + 10.
  // ml_svm: SVC RBF (3 classes, 5 vectors of 4) 5*4 + 2*5 = 30 MACs, 2*30 + 5*(4 + 2) + 2*3 + 3*1;
  //   SVR POLY (3 vectors) 3*5 = 15 MACs, 2*15 + 3*3 + 1. Params 20 + 10 + 3 and 12 + 3 + 1.
  // ml_trees: classifier depths 3 + 4, 2 leaf weights, 2 classes * (base 1 + LOGISTIC 1 + label 1) = 15;
  //   regressor depths 2 + 1, 2 + 2 leaf weights, 2 targets * AVERAGE 1 = 9. Params 11 + 13 + 1 and 4 + 12.
  // ml_tree5: depths 3 + 4, 2 leaf weights, LOGISTIC 1 = 10. Params 11 splits + 13 leaf weights.
  // ml_encoders: Imputer 4, Binarizer 4; the encoders 0. Params: 4 imputed values.
  struct Want {
    const char* name;
    int64_t macs, flops, params;  // per row, per row, in all
  };
  const Want wants[] = {{"ml_linear", 20, 8 + 45 + 13 + 18, 33},
                        {"ml_svm", 45, 99 + 40, 49},
                        {"ml_trees", 0, 15 + 9, 41},
                        {"ml_tree5", 0, 10, 24},
                        {"ml_encoders", 0, 8, 4}};
  const auto expect = nlohmann::json::parse(fwtest::slurp(fwtest::model_path("exported/ml.expect.json")));
  const int64_t n = 3;
  for (const Want& w : wants) {
    CAPTURE(w.name);
    flopwise::Pins pins;
    pins.dims = {{"N", n}};
    flopwise::Analysis a = flopwise::analyse(fwtest::model_path(std::string("exported/") + w.name + ".onnx"),
                                             pins, flopwise::default_convention());
    const flopwise::Report& r = a.report;
    CHECK(r.unsupported.empty());
    CHECK(r.totals.uncounted == 0);
    CHECK(r.totals.macs.v == n * w.macs);
    CHECK(r.totals.flops.v == n * w.flops);
    CHECK(r.totals.params.v == w.params);
    const flopwise::Graph& g = a.model->graph;
    for (const auto& [out, shape] : expect[w.name].items()) {
      if (!shape.empty() && shape[0].is_string()) continue;  // ZipMap's sequence of maps
      std::string want;
      for (size_t i = 0; i < shape.size(); ++i)
        want += (i ? "x" : "") + std::to_string(shape[i].get<int64_t>());
      const auto& out_ = out;  // clang 14 cannot capture a structured binding
      CAPTURE(out_);
      CHECK(g.values[static_cast<size_t>(g.find(out))].shape.str() == want);
    }
  }
}

TEST_CASE("MatMulNBits' packed weights count as their N*K logical weights, their bytes as stored") {
  // models/exported/genai.py: MatMul weights 2 layers * (64*64*2 + 64*32*2 + 64*128*3) + LM head 64*256 =
  // 90112; embedding 256*64 = 16384; norms 2*2*64 + 64 = 320; cos/sin caches 2*128*8 = 2048: 108864 params.
  // The int4 copy holds the same weights (scales and zero points describe the encoding), 4 bits each: 45056
  // bytes.
  for (const char* name : {"genai_llama", "genai_llama_int4"}) {
    CAPTURE(name);
    const flopwise::Report& r = analyse_file(std::string(name) + ".onnx").report;
    CHECK(r.totals.params.v == 108864);
    if (std::string(name) == "genai_llama_int4") {
      const auto u8 = std::find_if(r.by_dtype.begin(), r.by_dtype.end(), [](const flopwise::DtypeCounts& d) {
        return d.dtype == flopwise::DType::UInt8;
      });
      REQUIRE(u8 != r.by_dtype.end());
      CHECK(u8->params.v == 90112);
      CHECK(u8->weight_bytes.v == 45056);
    }
  }
}
