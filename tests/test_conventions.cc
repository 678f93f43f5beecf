// Counting conventions (--convention; flopwise/convention.h, src/cost/conventions.def). Each expected
// figure is derived outside the tool: a hand formula written next to it, or a figure another tool
// publishes (named where used).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

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
}  // namespace

TEST_CASE("conventions: one Gemm with bias, and one Relu, by hand") {
  // Gemm A[2x4] B[4x3] C[3]: MACs 2*3*4 = 24 (the same in every convention).
  //   default: 2*24 + 2*3 bias adds = 54;  torch (FlopCounterMode's addmm: 2*M*N*K, bias not counted) 48;
  //   torchvision (multiply-adds of mm, bias excluded) 24.
  OneNode gemm = run_op("Gemm", {"2x4", "4x3", "3"});
  for (auto [conv, flops] : {std::pair{"default", 54}, {"torch", 48}, {"torchvision", 24}}) {
    CAPTURE(conv);
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
  for (auto [model, gops] : {std::pair{"resnet18.onnx", 1.81}, {"resnet34.onnx", 3.66}, {"mobilenet_v2.onnx", 0.30}}) {
    CAPTURE(model);
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
  CHECK(bad.err.find("unknown convention 'flops' (known: default, torch, torchvision)") != std::string::npos);
  CliRun text = run_cli(model_path("resnet18.onnx") + " --convention torch", dir);
  CHECK(text.out.find("convention 'torch'") != std::string::npos);
  // --list-ops prints the convention's formulas from the same table.
  CliRun list = run_cli("--list-ops --convention torchvision", dir);
  CHECK(list.code == 0);
  CHECK(list.out.find("FLOPs formula (convention 'torchvision')") != std::string::npos);
  // diff: a saved report in one convention against a model analysed in another is refused (exit 2).
  fs::path saved = dir / "r18_torch.json";
  REQUIRE(run_cli(model_path("resnet18.onnx") + " --convention torch --format json -o " + saved.string(), dir).code == 0);
  CliRun mixed = run_cli("diff " + saved.string() + " " + model_path("resnet34.onnx"), dir);
  CHECK(mixed.code == 2);
  CHECK(mixed.err.find("different conventions") != std::string::npos);
  CliRun same = run_cli("diff " + saved.string() + " " + model_path("resnet34.onnx") + " --convention torch", dir);
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
  // 8 blocks x 2); BatchNorm is folded into Conv at export, so every Conv has a bias. Conv differs by its bias adds
  // (2 per MAC in both), Relu is counted by the default convention only.
  CHECK(r.out.find("in convention 'default' vs 'torch'") != std::string::npos);
  auto line = [&](const std::string& op) {
    size_t at = r.out.find("\n  " + op + " ");
    return at == std::string::npos ? std::string() : r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
  };
  CHECK(line("Conv").find(" 20 ") != std::string::npos);
  CHECK(line("Conv").find("per MAC") == std::string::npos);  // same MAC factor
  CHECK(line("Conv").find("counted in 'default' only") != std::string::npos);
  CHECK(line("Relu").find(" 17 ") != std::string::npos);
  CHECK(line("Reshape").empty());  // layout: 0 in both, not listed
  CliRun bad = run_cli(model_path("resnet18.onnx") + " --explain default nope", dir);
  CHECK(bad.code == 2);
}

TEST_CASE("conventions: ResNet-18's default-convention FLOPs and memory bytes from its architecture, by hand") {
  // models/resnet18.onnx: torchvision's resnet18 exported in eval mode (BatchNorm folded into Conv, so every
  // Conv has a bias), 1x3x224x224, 1000 classes. COUNTING.md's default per node:
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
    CAPTURE(conv);
    CliRun c = run_cli(model_path("resnet18.onnx") + " --dim batch=1 --format json --convention " + conv, dir);
    REQUIRE(c.code == 0);
    CHECK(json::parse(c.out)["totals"]["flops"].get<int64_t>() == per_mac * macs);
  }
}
