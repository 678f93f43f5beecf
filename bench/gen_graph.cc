// bench/gen_graph.cc — writes synthetic graph-only ONNX models of a chosen size for the scale benchmark
// (bench/run_scale.sh). Weights are initializers whose bytes live in an external-data file that is never
// written (flopwise never reads external data), so a 1 M-node model is a ~100 MB graph and nothing else.
//
// Usage: gen_graph [--inline] KIND NODES OUT.onnx
//   --inline: the weights' bytes (zeros) are written into the file as raw_data, for the benchmark of
//             memory independent of weight bytes (the same graph, graph-only and inline).
//   KIND decoder: a pre-LN decoder as torch.onnx.export names it, ~42 nodes and 13 scopes per layer
//                 (/model/layers.17/self_attn/q_proj/MatMul, decomposed LayerNorm, SiLU MLP), input
//                 [batch, seq, 64] with both dims dynamic; layers = NODES / 42.
//   KIND chain:   the chain: MatMul + Add + Relu per block, one scope per block
//                 (/blocks.17/MatMul), input [batch, 64]; blocks = NODES / 3.
//   KIND flat:    the chain without scopes (node names MatMul_17).
//   KIND decoder_renamed, chain_renamed: the same graphs with other scope names (GPT-2 style
//                 /transformer/h.17/attn/q_proj/MatMul, ln_1, ln_2, ffn; /layers.17/MatMul): every
//                 scope label differs, for `flopwise diff`'s alignment by op signature at scale.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "onnx_builder.h"

namespace {

using flopwise_bench::add_io;
using flopwise_bench::Builder;

constexpr int64_t kHidden = 64, kHeads = 4, kFfn = 128;

// Decomposed LayerNorm as torch.onnx.export (opset < 17) writes it: 9 nodes.
std::string layer_norm(Builder& b, const std::string& s, const std::string& x, const std::string& wn) {
  auto mean = b.node(s + "/ReduceMean", "ReduceMean", {x}, {}, {{"axes", {-1}}});
  auto sub = b.node(s + "/Sub", "Sub", {x, mean});
  auto pw = b.node(s + "/Pow", "Pow", {sub, "two"});
  auto var = b.node(s + "/ReduceMean_1", "ReduceMean", {pw}, {}, {{"axes", {-1}}});
  auto add = b.node(s + "/Add", "Add", {var, "eps"});
  auto sq = b.node(s + "/Sqrt", "Sqrt", {add});
  auto div = b.node(s + "/Div", "Div", {sub, sq});
  auto mul = b.node(s + "/Mul", "Mul", {div, b.weight(wn + ".weight", {kHidden})});
  return b.node(s + "/Add_1", "Add", {mul, b.weight(wn + ".bias", {kHidden})});
}

std::string linear(Builder& b, const std::string& s, const std::string& x, const std::string& wn, int64_t in,
                   int64_t out) {
  return b.node(s + "/MatMul", "MatMul", {x, b.weight(wn + ".weight", {in, out})});
}

std::string decoder_layer(Builder& b, int64_t l, const std::string& x) {
  std::string s = "/model/layers." + std::to_string(l), w = "model.layers." + std::to_string(l);
  auto h = layer_norm(b, s + "/input_layernorm", x, w + ".input_layernorm");
  std::string a = s + "/self_attn";
  auto q = linear(b, a + "/q_proj", h, w + ".self_attn.q_proj", kHidden, kHidden);
  auto k = linear(b, a + "/k_proj", h, w + ".self_attn.k_proj", kHidden, kHidden);
  auto v = linear(b, a + "/v_proj", h, w + ".self_attn.v_proj", kHidden, kHidden);
  auto heads = [&](const std::string& t, const std::string& tag, std::vector<int64_t> perm) {
    auto r = b.node(a + "/Reshape" + tag, "Reshape", {t, "heads_shape"});
    return b.node(a + "/Transpose" + tag, "Transpose", {r}, {}, {{"perm", perm}});
  };
  auto qh = heads(q, "", {0, 2, 1, 3}), kh = heads(k, "_1", {0, 2, 3, 1}), vh = heads(v, "_2", {0, 2, 1, 3});
  auto scores = b.node(a + "/MatMul", "MatMul", {qh, kh});
  auto scaled = b.node(a + "/Div", "Div", {scores, "scale"});
  auto probs = b.node(a + "/Softmax", "Softmax", {scaled}, {{"axis", -1}});
  auto ctx = b.node(a + "/MatMul_1", "MatMul", {probs, vh});
  auto ct = b.node(a + "/Transpose_3", "Transpose", {ctx}, {}, {{"perm", {0, 2, 1, 3}}});
  auto merged = b.node(a + "/Reshape_3", "Reshape", {ct, "merge_shape"});
  auto o = linear(b, a + "/o_proj", merged, w + ".self_attn.o_proj", kHidden, kHidden);
  auto r1 = b.node(s + "/Add", "Add", {x, o});
  auto h2 = layer_norm(b, s + "/post_attention_layernorm", r1, w + ".post_attention_layernorm");
  std::string m = s + "/mlp";
  auto gate = linear(b, m + "/gate_proj", h2, w + ".mlp.gate_proj", kHidden, kFfn);
  auto sig = b.node(m + "/act_fn/Sigmoid", "Sigmoid", {gate});
  auto silu = b.node(m + "/act_fn/Mul", "Mul", {gate, sig});
  auto up = linear(b, m + "/up_proj", h2, w + ".mlp.up_proj", kHidden, kFfn);
  auto prod = b.node(m + "/Mul", "Mul", {silu, up});
  auto down = linear(b, m + "/down_proj", prod, w + ".mlp.down_proj", kFfn, kHidden);
  return b.node(s + "/Add_1", "Add", {r1, down});
}

constexpr int64_t kDecoderLayerNodes = 42;

// KIND_renamed: rewrites the node names' scope parts; the graph itself is unchanged.
void rename_scopes(onnx::GraphProto* g) {
  const std::pair<std::string, std::string> kRenames[] = {{"/model/layers.", "/transformer/h."},
                                                          {"/blocks.", "/layers."},
                                                          {"/self_attn/", "/attn/"},
                                                          {"/input_layernorm/", "/ln_1/"},
                                                          {"/post_attention_layernorm/", "/ln_2/"},
                                                          {"/mlp/", "/ffn/"}};
  for (auto& n : *g->mutable_node()) {
    std::string name = n.name();
    for (const auto& [from, to] : kRenames)
      if (auto p = name.find(from); p != std::string::npos) name.replace(p, from.size(), to);
    n.set_name(name);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool inline_weights = argc > 1 && std::string(argv[1]) == "--inline";
  if (inline_weights) --argc, ++argv;
  if (argc != 4) {
    std::cerr
        << "usage: gen_graph [--inline] decoder|chain|flat|decoder_renamed|chain_renamed NODES OUT.onnx\n";
    return 2;
  }
  std::string kind = argv[1];
  int64_t nodes = std::atoll(argv[2]);
  bool renamed = kind == "decoder_renamed" || kind == "chain_renamed";
  if (renamed) kind = kind.substr(0, kind.size() - std::string("_renamed").size());
  if ((kind != "decoder" && kind != "chain" && kind != "flat") || nodes < 1) {
    std::cerr << "gen_graph: KIND is decoder, chain, flat, decoder_renamed or chain_renamed; "
                 "NODES a positive count\n";
    return 2;
  }
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("flopwise bench/gen_graph");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(14);
  auto* g = model.mutable_graph();
  g->set_name(kind + "_" + std::to_string(nodes));
  Builder b{g};
  b.inline_weights = inline_weights;
  std::string x = "x";
  if (kind == "decoder") {
    add_io(g, "x", {"batch", "seq", std::to_string(kHidden)}, false);
    b.ints("heads_shape", {0, 0, kHeads, kHidden / kHeads});
    b.ints("merge_shape", {0, 0, kHidden});
    for (const char* c : {"two", "eps", "scale"}) {
      auto* t = g->add_initializer();
      t->set_name(c);
      t->set_data_type(onnx::TensorProto::FLOAT);
      t->add_float_data(c[0] == 't' ? 2.0f : c[0] == 'e' ? 1e-5f : 4.0f);
    }
    int64_t layers = std::max<int64_t>(1, nodes / kDecoderLayerNodes);
    for (int64_t l = 0; l < layers; ++l) x = decoder_layer(b, l, x);
    add_io(g, x, {"batch", "seq", std::to_string(kHidden)}, true);
  } else {
    add_io(g, "x", {"batch", std::to_string(kHidden)}, false);
    int64_t blocks = std::max<int64_t>(1, nodes / 3);
    for (int64_t i = 0; i < blocks; ++i) {
      std::string id = std::to_string(i);
      std::string s = kind == "chain" ? "/blocks." + id + "/" : "";
      std::string suffix = kind == "chain" ? "" : "_" + id;
      auto mm = b.node(s + "MatMul" + suffix, "MatMul",
                       {x, b.weight("blocks." + id + ".weight", {kHidden, kHidden})});
      auto add = b.node(s + "Add" + suffix, "Add", {mm, b.weight("blocks." + id + ".bias", {kHidden})});
      x = b.node(s + "Relu" + suffix, "Relu", {add});
    }
    add_io(g, x, {"batch", std::to_string(kHidden)}, true);
  }
  if (renamed) rename_scopes(g);
  std::ofstream f(argv[3], std::ios::binary | std::ios::trunc);
  if (!f || !model.SerializeToOstream(&f)) {
    std::cerr << "gen_graph: cannot write " << argv[3] << "\n";
    return 1;
  }
  std::printf("%s: %d nodes, %d initializers\n", argv[3], g->node_size(), g->initializer_size());
  return 0;
}
