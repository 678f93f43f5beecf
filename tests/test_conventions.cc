// tests/test_conventions.cc — counting conventions (--convention; flopwise/convention.h,
// src/cost/conventions.def). Each expected figure is derived outside the tool: a hand formula written next to
// it, or a figure another tool publishes (named where used).
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "cli_util.h"
#include "flopwise/convention.h"
#include "flopwise/cost.h"
#include "op_test_util.h"

using namespace fwtest;
using json = nlohmann::json;

namespace {
Report report_of(OneNode& one, const std::string& convention) {
  return build_report(one.model, one.result, find_convention(convention));
}
// Inputs `slots` of the node become parameters (initializers), as a layer's weights are.
OneNode& with_params(OneNode& one, std::initializer_list<size_t> slots) {
  Graph& g = one.model.graph;
  for (size_t s : slots) {
    int v = g.nodes[0].inputs[s];
    g.values[v].is_initializer = true;
    g.values[v].is_input = false;
    g.inputs.erase(std::find(g.inputs.begin(), g.inputs.end(), v));
  }
  return one;
}
}  // namespace

TEST_CASE("conventions: one Gemm with bias, and one Relu, by hand") {
  // Gemm A[2x4] B[4x3] C[3]: MACs 2*3*4 = 24 (the same in every convention).
  //   default: 2*24 + 2*3 bias adds = 54;  torch (FlopCounterMode's addmm: 2*M*N*K, bias not counted) 48;
  //   torchvision (multiply-adds of mm, bias excluded) 24.
  OneNode gemm = run_op("Gemm", {"2x4", "4x3", "3"});
  for (auto [conv, flops] : {std::pair{"default", 54}, {"torch", 48}, {"torchvision", 24}}) {
    const auto& conv_ = conv;  // clang 14 cannot capture a structured binding
    CAPTURE(conv_);
    Report r = report_of(gemm, conv);
    CHECK(r.convention == conv);
    CHECK(r.totals.macs.v == 24);
    CHECK(r.totals.flops.v == flops);
    CHECK(r.totals.backward_flops.v == 2 * flops);  // the backward estimate follows the convention
  }
  // Relu on 2x5: default 1 per element = 10; torch and torchvision count no activation: 0.
  OneNode relu = run_op("Relu", {"2x5"});
  CHECK(report_of(relu, "default").totals.flops.v == 10);
  CHECK(report_of(relu, "torch").totals.flops.v == 0);
  CHECK(report_of(relu, "torchvision").totals.flops.v == 0);
}

TEST_CASE("conventions: torchvision's published figures on the bundled models") {
  // torchvision's docs list each weight's `_ops` ("GFLOPS", multiply-adds of conv/mm/bmm, bias excluded)
  // to 2 decimals: ResNet18_Weights.IMAGENET1K_V1 1.81, ResNet34_Weights.IMAGENET1K_V1 3.66,
  // MobileNet_V2_Weights.IMAGENET1K_V1 0.30 (at 1x3x224x224). The bundled files have a 10-class head
  // (models/generate.py), 0.5 M MACs fewer than torchvision's 1000-class one: invisible at 2 decimals.
  auto dir = scratch_dir("conventions");
  for (auto [model, gops] :
       {std::pair{"resnet18.onnx", 1.81}, {"resnet34.onnx", 3.66}, {"mobilenet_v2.onnx", 0.30}}) {
    const auto& model_ = model;  // clang 14 cannot capture a structured binding
    CAPTURE(model_);
    CliRun r = run_cli(model_path(model) + " --dim batch=1 --convention torchvision --format json", dir);
    REQUIRE_MESSAGE(r.code == 0, r.err);
    json j = json::parse(r.out);
    CHECK(j["convention"] == "torchvision");
    double g = j["totals"]["flops"].get<double>() / 1e9;
    CHECK(std::round(g * 100) / 100 == doctest::Approx(gops));
  }
}

TEST_CASE("conventions: the CLI names them, refuses unknown ones and mixed comparisons") {
  auto dir = scratch_dir("conventions");
  CliRun bad = run_cli(model_path("resnet18.onnx") + " --convention flops", dir);
  CHECK(bad.code == 2);
  CHECK(bad.err.find("unknown convention 'flops' (known: default, torch, torchvision, deepspeed, "
                     "deepspeed_legacy, fvcore, "
                     "thop, ptflops, ptflops_aten)") != std::string::npos);
  CliRun text = run_cli(model_path("resnet18.onnx") + " --convention torch", dir);
  CHECK(text.out.find("convention 'torch'") != std::string::npos);
  // --list-ops prints the convention's formulas from the same table.
  CliRun list = run_cli("--list-ops --convention torchvision", dir);
  CHECK(list.code == 0);
  CHECK(list.out.find("FLOPs formula (convention 'torchvision')") != std::string::npos);
  // diff: a saved report in one convention against a model analysed in another is refused (exit 2).
  fs::path saved = dir / "r18_torch.json";
  REQUIRE(run_cli(model_path("resnet18.onnx") + " --convention torch --format json -o " + saved.string(), dir)
              .code == 0);
  CliRun mixed = run_cli("diff " + saved.string() + " " + model_path("resnet34.onnx"), dir);
  CHECK(mixed.code == 2);
  CHECK(mixed.err.find("different conventions") != std::string::npos);
  CliRun same =
      run_cli("diff " + saved.string() + " " + model_path("resnet34.onnx") + " --convention torch", dir);
  CHECK(same.code == 0);
  // check: the table says which convention it checked; a saved report of another one is refused.
  fs::path budget = dir / "b.toml";
  std::ofstream(budget) << "[limits]\nflops = \"100G\"\n";
  CliRun chk = run_cli("check " + model_path("resnet18.onnx") + " --dim batch=1 --budget " + budget.string() +
                           " --convention torch",
                       dir);
  CHECK_MESSAGE(chk.code == 0, chk.err);
  CHECK(chk.out.find("FLOPs convention 'torch'") != std::string::npos);
  CliRun chk2 = run_cli("check " + saved.string() + " --budget " + budget.string(), dir);
  CHECK(chk2.code == 2);
}

TEST_CASE("conventions: --explain reconciles two conventions per op type") {
  auto dir = scratch_dir("conventions");
  CliRun r = run_cli(model_path("resnet18.onnx") + " --dim batch=1 --explain default torch", dir);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  // ResNet-18 by its architecture: 20 Conv (stem 1 + 8 blocks x 2 + 3 downsamples), 17 Relu (stem 1 +
  // 8 blocks x 2); BatchNorm is folded into Conv at export, so every Conv has a bias. Conv differs by its
  // bias adds (2 per MAC in both), Relu is counted by the default convention only.
  CHECK(r.out.find("in convention 'default' vs 'torch'") != std::string::npos);
  auto line = [&](const std::string& op) {
    size_t at = r.out.find("\n  " + op + " ");
    return at == std::string::npos ? std::string() : r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
  };
  CHECK(line("Conv").find(" 20 ") != std::string::npos);
  CHECK(line("Conv").find("torch: 2*MACs (mm, addmm, bmm, convolution; the bias not counted)") !=
        std::string::npos);
  CHECK(line("Relu").find(" 17 ") != std::string::npos);
  CHECK(line("Relu").find("default: 1 per output element; torch: 0") != std::string::npos);
  CHECK(line("Reshape").empty());  // layout: 0 in both, not listed
  CliRun bad = run_cli(model_path("resnet18.onnx") + " --explain default nope", dir);
  CHECK(bad.code == 2);
}

TEST_CASE(
    "conventions: ResNet-18's default-convention FLOPs and memory bytes from its architecture, by hand") {
  // models/resnet18.onnx: torchvision's resnet18 exported in eval mode (BatchNorm folded into Conv, so every
  // Conv has a bias), 1x3x224x224, 1000 classes. docs/COUNTING.md's default per node:
  //   Conv 2*MACs + 1 per output element (bias), MACs = out elems * Cin * k*k;  Relu 1 and Add 1 per
  //   element;  MaxPool 3x3 1 per window element read (9 per output);  GlobalAveragePool 1 per input
  //   element;  Gemm 2*M*N*K + M*N (bias);  Flatten 0.
  // Memory bytes (float32, 4 each): per node, every distinct input (activations, weight, bias) read plus
  // every output written.
  int64_t flops = 0, macs = 0, bytes = 0;
  auto conv = [&](int64_t cin, int64_t in_hw, int64_t cout, int64_t hw, int64_t k) {
    int64_t out = cout * hw * hw, m = out * cin * k * k;
    macs += m;
    flops += 2 * m + out;
    bytes += 4 * (cin * in_hw * in_hw + cout * cin * k * k + cout + out);
  };
  auto relu = [&](int64_t c, int64_t hw) { flops += c * hw * hw, bytes += 4 * 2 * c * hw * hw; };
  auto add = [&](int64_t c, int64_t hw) { flops += c * hw * hw, bytes += 4 * 3 * c * hw * hw; };
  conv(3, 224, 64, 112, 7);
  relu(64, 112);
  flops += 64 * 56 * 56 * 9;  // maxpool 3x3
  bytes += 4 * (64 * 112 * 112 + 64 * 56 * 56);
  int64_t cin = 64, in_hw = 56;
  for (auto [c, hw] : {std::pair<int64_t, int64_t>{64, 56}, {128, 28}, {256, 14}, {512, 7}}) {
    for (int b = 0; b < 2; ++b) {
      int64_t in = b == 0 ? cin : c, ihw = b == 0 ? in_hw : hw;
      conv(in, ihw, c, hw, 3);
      relu(c, hw);
      conv(c, hw, c, hw, 3);
      if (b == 0 && in != c) conv(in, ihw, c, hw, 1);  // downsample
      add(c, hw);
      relu(c, hw);
    }
    cin = c, in_hw = hw;
  }
  flops += 512 * 7 * 7;  // global average pool
  bytes += 4 * (512 * 7 * 7 + 512);
  bytes += 4 * (512 + 512);  // flatten: reads and writes 512 (0 FLOPs)
  macs += 512 * 1000;
  flops += 2 * 512 * 1000 + 1000;  // fc
  bytes += 4 * (512 + 512 * 1000 + 1000 + 1000);
  auto dir = scratch_dir("conventions");
  CliRun r = run_cli(model_path("resnet18.onnx") + " --dim batch=1 --format json", dir);
  REQUIRE(r.code == 0);
  json t = json::parse(r.out)["totals"];
  CHECK(t["macs"].get<int64_t>() == macs);
  CHECK(t["flops"].get<int64_t>() == flops);
  CHECK(t["memory_bytes"].get<int64_t>() == bytes);
  // The same hand MACs give the contraction-only conventions: torch (FlopCounterMode) 2 per MAC of conv/mm,
  // nothing else; torchvision one per MAC.
  for (auto [conv, per_mac] : {std::pair{"torch", 2}, {"torchvision", 1}}) {
    const auto& conv_ = conv;  // clang 14 cannot capture a structured binding
    CAPTURE(conv_);
    CliRun c =
        run_cli(model_path("resnet18.onnx") + " --dim batch=1 --format json --convention " + conv, dir);
    REQUIRE(c.code == 0);
    CHECK(json::parse(c.out)["totals"]["flops"].get<int64_t>() == per_mac * macs);
  }
}

TEST_CASE(
    "conventions: BERT's default-convention FLOPs from its architecture, by hand, at any batch and seq") {
  // models/bert.onnx: models/generate.py's BertModel (HF BERT's structure): 4 layers, hidden H 128, 4 heads
  // of 32, FFN F 512, dynamic batch b and seq S. docs/COUNTING.md's default per node, per sequence position:
  //   Linear(i, o): 2*i*o per MAC pair + o bias adds;  LayerNorm 5 + 2 (affine) per element;  residual and
  //   embedding sums 1 per element;  attention: QK^T and AV 2*heads*S*hd each (per query position), the
  //   /sqrt(hd) 1 and Softmax 5 per score (heads*S per position);  GELU as exported, x*0.5*(1+erf(x/sqrt2)):
  //   Div, Erf, Add, Mul, Mul = 5 per element.  Embedding lookups (Gather) 0.
  const int64_t H = 128, F = 512, heads = 4, hd = H / heads, layers = 4;
  auto linear = [](int64_t i, int64_t o) { return 2 * i * o + o; };
  const int64_t ln = 7 * H;
  // per position: terms in S (attention scores) and constant terms
  const int64_t per_s = layers * (2 * (2 * heads * hd) + heads + 5 * heads);
  const int64_t per_1 =
      2 * H + ln + layers * (4 * linear(H, H) + 2 * H + 2 * ln + linear(H, F) + 5 * F + linear(F, H));
  auto dir = scratch_dir("conventions");
  for (auto [b, S] : {std::pair<int64_t, int64_t>{1, 64}, {2, 7}, {3, 128}}) {
    const auto& b_ = b;  // clang 14 cannot capture a structured binding
    CAPTURE(b_);
    const auto& S_ = S;  // clang 14 cannot capture a structured binding
    CAPTURE(S_);
    CliRun r = run_cli(model_path("bert.onnx") + " --dim batch=" + std::to_string(b) +
                           " --dim seq=" + std::to_string(S) + " --format json",
                       dir);
    REQUIRE(r.code == 0);
    json t = json::parse(r.out)["totals"];
    CHECK(t["flops"].get<int64_t>() == b * S * (per_s * S + per_1));
    CHECK(t["macs"].get<int64_t>() == b * S * (layers * (2 * heads * S * hd + 4 * H * H + 2 * H * F)));
  }
  // Unpinned, the totals are those polynomials in batch and seq (the shape pass keeps the dims symbolic).
  CliRun r = run_cli(model_path("bert.onnx") + " --format json", dir);
  REQUIRE(r.code == 0);
  CHECK(json::parse(r.out)["totals"]["flops"].get<std::string>() ==
        std::to_string(per_s) + "*batch*seq*seq + " + std::to_string(per_1) + "*batch*seq");
}

TEST_CASE("conventions: every op has a kind, and every convention a row for every kind") {
  // The completeness the seam promises: an op's figure in any convention comes from a row of
  // conventions.def (its kind's, or its own), never from a fallback. assign_kinds() throws on a family
  // without a kind and on a row naming no op; convention_rule() on a missing kind row.
  std::set<std::string> names;
  for (const auto& c : conventions()) names.insert(std::string(c.name));
  for (const char* want :
       {"default", "torch", "torchvision", "deepspeed", "fvcore", "thop", "ptflops", "ptflops_aten"})
    CHECK(names.count(want) == 1);
  for (const auto& conv : conventions()) {
    CAPTURE(conv.name);
    for (size_t k = 0; k < kNumWorkKinds; ++k) {
      int rows = 0;
      for (const auto& r : convention_rules())
        rows +=
            r.convention == conv.name && r.op.empty() && r.call.empty() && static_cast<size_t>(r.kind) == k;
      CHECK_MESSAGE(rows == 1, work_kind_name(static_cast<WorkKind>(k)));
    }
    for (const auto& rec : OpRegistry::instance().records()) {
      std::string f = convention_formula(conv, rec);
      CHECK_MESSAGE(!f.empty(), rec.name);
    }
  }
  // An op row names a registered op; ops of a family keep its kind unless kinds.def says otherwise.
  for (const auto& r : convention_rules()) {
    if (r.op.empty()) continue;
    bool found = false;
    for (const auto& rec : OpRegistry::instance().records()) found = found || rec.name == r.op;
    CHECK_MESSAGE(found, r.convention << " row for unknown op " << r.op);
  }
  auto kind_of = [](const char* op) { return OpRegistry::instance().find("", op, 17)->kind; };
  CHECK(kind_of("Conv") == WorkKind::contraction);
  CHECK(kind_of("Exp") == WorkKind::transcendental);
  CHECK(kind_of("Add") == WorkKind::elementwise);
  CHECK(kind_of("Softmax") == WorkKind::norm);
  CHECK(kind_of("MaxPool") == WorkKind::pool);
  CHECK(kind_of("Reshape") == WorkKind::layout);
  CHECK(kind_of("LSTM") == WorkKind::recurrent);
  CHECK(kind_of("Loop") == WorkKind::subgraph);
}

TEST_CASE("conventions: the presets' formulas on single nodes, by hand from each tool's source") {
  // Conv X[1,2,5,5] W[4,2,3,3] B[4], no padding: out 1x4x3x3 = 36 elements, MACs 36*2*9 = 648.
  //   deepspeed (_conv_flops_compute): 2*648 + bias 4 channels x 9 positions = 1332;  fvcore (conv_flop_jit:
  //   batch x prod(w) x prod(out spatial) = 1*72*9) 648;  thop (out elems x Cin/g x k) 648;  ptflops (conv
  //   hook: MACs + bias elements) 684;  ptflops_aten (conv_flop_count with bias) 684.
  OneNode conv = run_op("Conv", {"1x2x5x5", "4x2x3x3", "4"});
  for (auto [c, flops] : {std::pair{"deepspeed", 1332},
                          {"fvcore", 648},
                          {"thop", 648},
                          {"ptflops", 684},
                          {"ptflops_aten", 684}}) {
    const auto& c_ = c;  // clang 14 cannot capture a structured binding
    CAPTURE(c_);
    CHECK(report_of(conv, c).totals.flops.v == flops);
  }
  // BatchNormalization on 1x4x3x3 (36 elements), eval, affine (scale and bias are parameters): deepspeed
  // and fvcore 2 per element (72), thop count_normalization 2 x 2 (affine) = 144, ptflops bn hook 2 (affine)
  // = 72, ptflops_aten 0. Without parameters (affine=False: constant scale): thop 2 x 36, ptflops 1 x 36.
  OneNode bn = run_op("BatchNormalization", {"1x4x3x3", "4", "4", "4", "4"});
  CHECK(report_of(bn, "thop").totals.flops.v == 72);
  CHECK(report_of(bn, "ptflops").totals.flops.v == 36);
  with_params(bn, {1, 2});
  for (auto [c, flops] :
       {std::pair{"deepspeed", 72}, {"fvcore", 72}, {"thop", 144}, {"ptflops", 72}, {"ptflops_aten", 0}}) {
    const auto& c_ = c;  // clang 14 cannot capture a structured binding
    CAPTURE(c_);
    CHECK(report_of(bn, c).totals.flops.v == flops);
  }
  // LayerNormalization on 2x8 (16 elements), affine: deepspeed/fvcore 5 each (80), thop 4 (64), ptflops 1
  // (its hook reads .affine, which LayerNorm lacks: 16), divided by its batch counter (below): 16 / 2 = 8.
  OneNode ln = run_op("LayerNormalization", {"2x8", "8", "8"});
  with_params(ln, {1, 2});
  for (auto [c, flops] : {std::pair{"deepspeed", 80}, {"fvcore", 80}, {"thop", 64}, {"ptflops", 8}}) {
    const auto& c_ = c;  // clang 14 cannot capture a structured binding
    CAPTURE(c_);
    CHECK(report_of(ln, c).totals.flops.v == flops);
  }
  // ptflops divides its module hooks' figures by the batch counter, dim 0 of the model's one input
  // (pytorch_engine.compute_average_flops_cost); the patched functionals' are not. A LayerNorm in a scope
  // (an .onnx module) on one 4x8 input: 32 / 4 = 8. Its hook at batch 1 would give 32.
  OneNode ln4 = run_op("LayerNormalization", {"4x8", "8", "8"});
  with_params(ln4, {1, 2});
  ln4.node().scope = {"norm"};
  CHECK(report_of(ln4, "ptflops").totals.flops.v == 8);
  // DeepSpeed's _conv_trans_flops_compute on ConvTranspose X[1,4,5,5] W[4,3,3,3] (groups 2: 6 outputs),
  // stride 2, pads 1, bias: MACs per input position = 3*3 kernel x 4 in_channels x (3 // 2) = 36, x 25
  // positions = 900, x 2 = 1800; bias = weight.shape[1] 3 x batch 1 x the forward-conv size
  // ((5 + 2 - 3) // 2 + 1 = 3)^2 = 27: 1827. Its MACs are not the op's: each of the 4x5x5 input elements
  // meets 3 (out_channels / groups) x 9 weights, 2700 (it divides by groups twice).
  OneNode ct = run_op("ConvTranspose", {"1x4x5x5", "4x3x3x3", "6"},
                      {{"strides", Attribute::of_ints({2, 2})},
                       {"pads", Attribute::of_ints({1, 1, 1, 1})},
                       {"group", Attribute::of_int(2)}});
  with_params(ct, {1, 2});
  CHECK(report_of(ct, "default").totals.macs.v == 2700);
  CHECK(report_of(ct, "deepspeed").totals.flops.v == 1827);
  // MaxPool 2x2 stride 2 on 1x1x4x4 (16 input elements): deepspeed _pool_flops_compute counts input
  // elements (16); fvcore has no handler (0, listed as skipped); thop zero_ops (0).
  OneNode mp =
      run_op("MaxPool", {"1x1x4x4"},
             {{"kernel_shape", Attribute::of_ints({2, 2})}, {"strides", Attribute::of_ints({2, 2})}});
  CHECK(report_of(mp, "deepspeed").totals.flops.v == 16);
  Report fv = report_of(mp, "fvcore");
  CHECK(fv.totals.flops.v == 0);
  REQUIRE(!fv.warnings.empty());
  CHECK(fv.warnings.back().find("skips as unsupported: MaxPool x1") != std::string::npos);
  CHECK(report_of(mp, "thop").totals.flops.v == 0);
  // Einsum bij,bkj->bik with b=2, i=3, j=4, k=5: MACs 2*3*4*5 = 120. numpy's einsum_path counts
  // 120 x (1 + 1 for the summed j) + 1 = 241 and prints "2.410e+02": deepspeed 241, fvcore floor(241/2) =
  // 120.
  OneNode es = run_op("Einsum", {"2x3x4", "2x5x4"}, {{"equation", Attribute::of_string("bij,bkj->bik")}});
  CHECK(report_of(es, "deepspeed").totals.flops.v == 241);
  CHECK(report_of(es, "fvcore").totals.flops.v == 120);
  CHECK(report_of(es, "ptflops").totals.flops.v == 0);  // torch.einsum is not patched
  // A large one rounds to numpy's 4 printed digits: b=1, i=j=k=100: 2*10^6 + 1 prints as 2.000e+06.
  OneNode big =
      run_op("Einsum", {"1x100x100", "1x100x100"}, {{"equation", Attribute::of_string("bij,bkj->bik")}});
  CHECK(report_of(big, "deepspeed").totals.flops.v == 2000000);
}

TEST_CASE("conventions: a function the tools patch only where it is looked up at call time") {
  // DeepSpeed and ptflops replace F.gelu when profiling starts; transformers' GELUActivation stored F.gelu
  // when it was built (self.act = nn.functional.gelu), so its calls are never seen: 0 (issue 31). nn.GELU
  // looks F.gelu up in forward: 1 per element, and ptflops adds its module hook (hook/B, B = dim 0 = 2).
  // A Gelu on 2x3: 6 elements.
  auto in_module = [](OneNode& one, const char* cls) {
    one.node().scope = {"act"};
    one.node().scope_classes = {cls};
    one.model.graph.module_class = "Model";  // a .pt: classes are known
  };
  OneNode hf = run_op("Gelu", {"2x3"}, {}, 1, "", 20);      // ONNX Gelu: opset 20
  REQUIRE(report_of(hf, "deepspeed").totals.flops.v == 6);  // at the root of an .onnx: F.gelu
  in_module(hf, "GELUActivation");
  CHECK(report_of(hf, "deepspeed").totals.flops.v == 0);
  CHECK(report_of(hf, "ptflops").totals.flops.v == 0);
  OneNode torch_gelu = run_op("Gelu", {"2x3"}, {}, 1, "", 20);
  in_module(torch_gelu, "GELU");
  CHECK(report_of(torch_gelu, "deepspeed").totals.flops.v == 6);
  CHECK(report_of(torch_gelu, "ptflops").totals.flops.v == 6 + 6 / 2);
  // An Erf: in ONNX it is torch.onnx's F.gelu (x*0.5*(1+erf(x/sqrt 2))), counted as F.gelu, 1 per element; in
  // a .pt it is a torch.erf call (a scripted bias_gelu, issue 39), which neither tool patches: 0.
  OneNode onnx_erf = run_op("Erf", {"2x3"});
  CHECK(report_of(onnx_erf, "deepspeed").totals.flops.v == 6);
  CHECK(report_of(onnx_erf, "ptflops").totals.flops.v == 6);
  OneNode pt_erf = run_op("Erf", {"2x3"});
  in_module(pt_erf, "BertIntermediate");
  CHECK(report_of(pt_erf, "deepspeed").totals.flops.v == 0);
  CHECK(report_of(pt_erf, "ptflops").totals.flops.v == 0);
}

TEST_CASE(
    "conventions: torch's transformer layers bound F.gelu and F.relu when built: unseen by the patches") {
  // Issue 52: nn.TransformerEncoderLayer and nn.TransformerDecoderLayer store F.gelu (activation="gelu") or
  // F.relu (activation="relu", or the default argument F.relu) when built, and call it from their own
  // forward: DeepSpeed's and ptflops' patches, made when profiling starts, never see it (their own runs on
  // models/generate.py's torch_transformer record no F.gelu or F.relu: models/reference_counts.json). A
  // tool that does not patch functionals is unaffected; an nn.ReLU looks F.relu up in forward and counts.
  // A Relu or Gelu on 2x3: 6 elements.
  auto in_module = [](OneNode& one, const char* cls) {
    one.node().scope = {"layer"};
    one.node().scope_classes = {cls};
    one.model.graph.module_class = "Model";
  };
  for (const char* layer : {"TransformerEncoderLayer", "TransformerDecoderLayer"}) {
    CAPTURE(layer);
    OneNode relu = run_op("Relu", {"2x3"});
    in_module(relu, layer);
    OneNode gelu = run_op("Gelu", {"2x3"}, {}, 1, "", 20);
    in_module(gelu, layer);
    for (const char* conv : {"deepspeed", "deepspeed_legacy", "ptflops"}) {
      CAPTURE(conv);
      CHECK(report_of(relu, conv).totals.flops.v == 0);
      CHECK(report_of(gelu, conv).totals.flops.v == 0);
    }
    CHECK(report_of(relu, "default").totals.flops.v == 6);      // 1 per element (docs/COUNTING.md)
    CHECK(report_of(gelu, "default").totals.flops.v == 5 * 6);  // div, erf, add, mul, mul per element
  }
  OneNode relu_module = run_op("Relu", {"2x3"});
  in_module(relu_module, "ReLU");
  CHECK(report_of(relu_module, "deepspeed").totals.flops.v == 6);
  // ptflops: F.relu's 6, and nn.ReLU's hook, divided by its batch counter B = dim 0 = 2.
  CHECK(report_of(relu_module, "ptflops").totals.flops.v == 6 + 6 / 2);
}

TEST_CASE("conventions: presets reproduce DeepSpeed, fvcore, thop and ptflops on the bundled .pt models") {
  // models/reference_counts.json holds each tool's own printed total, obtained by running the tool's
  // source (DeepSpeed 38327e07f, fvcore 3378afe, thop 43c064a, ptflops d612c75) on Debian's torch 1.13
  // with models/reference_counts.py, on the models models/generate.py builds, at the inputs each .pt records.
  std::ifstream in(model_path("reference_counts.json"));
  json ref = json::parse(in);
  auto dir = scratch_dir("conventions");
  std::string pt = pt_models_dir();
  struct Tool {
    const char* convention;
    const char* tool;
    const char* key;
  };
  const Tool tools[] = {{"deepspeed", "deepspeed", "total_flops"},
                        {"fvcore", "fvcore", "total_flops"},
                        {"thop", "thop", "total_macs"},
                        {"ptflops", "ptflops_pytorch", "total_macs"},
                        {"ptflops_aten", "ptflops_aten", "total_macs"}};
  struct File {
    const char* file;
    const char* model;
    const char* inputs;  // scripted modules record no input shapes
    // ptflops' nn.MultiheadAttention hook (its own formula for the module, beside the functionals the module
    // calls) is not reproduced (README: Conventions; kZooToolMismatch's C13): its figures, the tool's own
    // per-module ones (nonleaf_hooked: in these models the MultiheadAttention modules alone), are taken out.
    bool mha = false;
  };
  const File files[] = {{"resnet18.trace.pt", "resnet18", ""},
                        {"resnet18.script.pt", "resnet18", " --input 1x3x224x224"},
                        {"mobilenet_v2.trace.pt", "mobilenet_v2", ""},
                        {"bert.trace.pt", "bert", ""},
                        {"gpt2.trace.pt", "gpt2", ""},
                        {"misc_ops.trace.pt", "misc_ops", ""},
                        // Hugging Face's BERT as traced for export (issue 31): its GELUActivation calls the
                        // F.gelu it stored when built, which DeepSpeed's and ptflops' patches never see
                        {"hf_bert.trace.pt", "hf_bert", ""},
                        // torch's own TransformerEncoder (activation="gelu") and a TransformerDecoderLayer
                        // (F.relu), which bound their activation when built (issue 52)
                        {"torch_transformer.trace.pt", "torch_transformer", "", true}};
  for (const File& f : files) {
    for (const Tool& t : tools) {
      CAPTURE(f.file);
      CAPTURE(t.convention);
      CliRun r = run_cli(pt + "/" + f.file + f.inputs + " --format json --convention " + t.convention, dir);
      REQUIRE_MESSAGE(r.code == 0, r.err);
      json j = json::parse(r.out);
      CHECK(j["convention"] == t.convention);
      const json& tool = ref["models"][f.model][t.tool];
      int64_t want = tool[t.key].get<int64_t>();
      if (f.mha && std::string(t.tool) == "ptflops_pytorch") {
        REQUIRE(tool["nonleaf_hooked"].size() == 4);  // torch_transformer: 2 + 2 MultiheadAttention modules
        for (const auto& [name, macs] : tool["nonleaf_hooked"].items()) want -= macs.get<int64_t>();
      }
      CHECK(j["totals"]["flops"].get<int64_t>() == want);
    }
  }
  // torch_transformer: neither tool saw the activations its layers bound when built (their own per-function
  // figures hold no F.gelu or F.relu); 2 x 32 x 256 GELU and 16 x 256 ReLU elements are in the model.
  for (const char* tool : {"deepspeed", "ptflops_pytorch"}) {
    const json& by_op = ref["models"]["torch_transformer"][tool]["by_op"];
    CHECK(!by_op.contains("F.gelu"));
    CHECK(!by_op.contains("F.relu"));
  }
  // fvcore lists what it skipped; on resnet18 its own run reported aten::add_ x8 and aten::max_pool2d x1.
  CliRun fv = run_cli(pt + "/resnet18.trace.pt --format json --convention fvcore", dir);
  std::string warnings = json::parse(fv.out)["warnings"].dump();
  CHECK(ref["models"]["resnet18"]["fvcore"]["unsupported"].dump().find("\"aten::add_\":8") !=
        std::string::npos);
  CHECK(warnings.find("Add x8, MaxPool x1") != std::string::npos);
}

TEST_CASE("conventions: presets on the bundled ONNX files, and the folded-BatchNorm warning") {
  // The transformer files keep every op the tools see (GELU as its erf decomposition), so the same
  // reference figures hold at batch=1, seq=64; thop's 0 for gpt2's tied LM head (not an nn.Linear) needs
  // the module class, which ONNX does not keep, so gpt2 is checked without thop.
  std::ifstream in(model_path("reference_counts.json"));
  json ref = json::parse(in);
  auto dir = scratch_dir("conventions");
  const std::pair<const char*, const char*> tools[] = {{"deepspeed", "total_flops"},
                                                       {"fvcore", "total_flops"},
                                                       {"ptflops", "total_macs"},
                                                       {"ptflops_aten", "total_macs"}};
  for (const char* model : {"bert", "gpt2"}) {
    for (auto [conv, key] : tools) {
      CAPTURE(model);
      const auto& conv_ = conv;  // clang 14 cannot capture a structured binding
      CAPTURE(conv_);
      std::string tool = std::string(conv) == "ptflops" ? "ptflops_pytorch" : conv;
      CliRun r = run_cli(model_path(std::string(model) + ".onnx") +
                             " --dim batch=1 --dim seq=64 --format json --convention " + conv,
                         dir);
      REQUIRE_MESSAGE(r.code == 0, r.err);
      CHECK(json::parse(r.out)["totals"]["flops"].get<int64_t>() ==
            ref["models"][model][tool][key].get<int64_t>());
    }
  }
  CliRun bert_thop =
      run_cli(model_path("bert.onnx") + " --dim batch=1 --dim seq=64 --format json --convention thop", dir);
  CHECK(json::parse(bert_thop.out)["totals"]["flops"].get<int64_t>() ==
        ref["models"]["bert"]["thop"]["total_macs"].get<int64_t>());
  // resnet18.onnx was exported with BatchNorm folded into biased convs (models/generate.py records the
  // folds): a preset says so, and the default convention (which counts what the file holds) does not.
  CliRun thop = run_cli(model_path("resnet18.onnx") + " --dim batch=1 --format json --convention thop", dir);
  CHECK(json::parse(thop.out)["warnings"].dump().find("folded BatchNorm") != std::string::npos);
  CliRun dflt = run_cli(model_path("resnet18.onnx") + " --dim batch=1 --format json", dir);
  CHECK(json::parse(dflt.out)["warnings"].dump().find("folded BatchNorm") == std::string::npos);
}
