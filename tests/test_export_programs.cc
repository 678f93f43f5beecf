// tests/test_export_programs.cc — torch.export programs (models/pt2/*.pt2, written by torch 2.14 in the
// modern root by models/pt2/generate.py, weights stripped) analysed without LibTorch, against the oracles
// torch itself wrote beside each file (models/pt2/*.oracle.json, never flopwise's output):
//   params               sum(p.numel() for p in m.parameters()) (a tied tensor once);
//   contraction_macs     a TorchDispatchMode over the eager run: mm, addmm, bmm, baddbmm, convolution,
//                        SDPA's two products, _grouped_mm (formulas in the oracle);
//   flop_counter_total   torch.utils.flop_counter.FlopCounterMode's total (flopwise's `torch` convention).
//                        torch 2.14's FlopCounterMode has no rule for the CPU SDPA kernel
//                        (_scaled_dot_product_flash_attention_for_cpu) nor for _grouped_mm, so their FLOPs
//                        are added here by its own formulas (2 per MAC of each product: sdpa_flop_count,
//                        mm_flop), from the MACs the dispatch counter saw (contraction_macs_by_kind);
// cnn_joint is a training step (torch.export.experimental._export_forward_backward: the forward and the
// loss's backward in one core-ATen program), its oracle counted over the eager forward and loss.backward():
// convolution_backward among the contractions, by the forward's MACs per gradient asked.
// at the export's sizes and at other sizes of the dynamic dims (bound by --dim on the names flopwise gives
// them: "<input>.<dim>"), so the symbolic formulas are checked against concrete runs.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "flopwise/analyse.h"
#include "flopwise/aten_lower.h"
#include "flopwise/cost.h"
#include "flopwise/errors.h"
#include "flopwise/training.h"
#include "pt2/program.h"

namespace fs = std::filesystem;
using namespace flopwise;

namespace {

// $FLOPWISE_PT2_DIR: programs exported afresh (scripts/test_modern.sh, in CI), else the committed ones.
fs::path pt2_dir() {
  const char* fresh = std::getenv("FLOPWISE_PT2_DIR");
  return fresh && *fresh ? fs::path(fresh) : fs::path(FLOPWISE_SOURCE_DIR) / "models" / "pt2";
}

nlohmann::json oracle(const std::string& name) {
  std::ifstream f(pt2_dir() / (name + ".oracle.json"));
  REQUIRE_MESSAGE(f.good(), "missing models/pt2/" << name << ".oracle.json");
  return nlohmann::json::parse(f);
}

Pins pins_for(const nlohmann::json& o, const nlohmann::json& set) {
  Pins p;
  for (const auto& d : o.at("dynamic"))
    p.dims.push_back({d.at("input").get<std::string>() + "." + std::to_string(d.at("dim").get<int>()),
                      set.at("sizes").at(d.at("size_name").get<std::string>()).get<int64_t>()});
  return p;
}

std::string uncounted(const Report& r) {
  std::string s;
  for (const auto& [op, nodes] : r.unsupported) s += op + " x" + std::to_string(nodes.size()) + " ";
  return s;
}

// A joint program's forward and backward apart, as torch counted the eager forward and loss.backward() each
// (models/pt2/generate.py count_phases): MACs dispatched, FlopCounterMode's FLOPs (plus the fused
// attention's products it has no rule for, 2 FLOPs a MAC: sdpa in the forward, sdpa_backward's five products
// in the backward).
void check_phases(const Report& r, const nlohmann::json& set) {
  const auto& kinds = set.at("contraction_macs_by_kind");
  const auto& fwd = set.at("forward");
  const auto& bwd = set.at("backward");
  CHECK(r.totals.macs.v == fwd.at("contraction_macs").get<int64_t>());
  CHECK(r.totals.backward_macs.v == bwd.at("contraction_macs").get<int64_t>());
  CHECK(r.totals.flops.v ==
        fwd.at("flop_counter_total").get<int64_t>() + 2 * kinds.value("sdpa", int64_t(0)));
  REQUIRE(r.totals.backward_flops.known);
  CHECK(r.totals.backward_flops.v ==
        bwd.at("flop_counter_total").get<int64_t>() + 2 * kinds.value("sdpa_backward", int64_t(0)));
}

// Every shape set of one program: params, contraction MACs and FlopCounterMode's FLOPs, exactly.
void check_program(const std::string& file, const nlohmann::json& o, const std::string& program = "") {
  for (const auto& set : o.at("shape_sets")) {
    Pins pins = pins_for(o, set);
    pins.program = program;
    CAPTURE(file);
    CAPTURE(set.at("sizes").dump());
    Report r = analyse((pt2_dir() / file).string(), pins, find_convention("torch")).report;
    INFO("not counted: " << uncounted(r));
    REQUIRE(r.totals.params.known);
    CHECK(r.totals.params.v == o.at("params").get<int64_t>());
    REQUIRE(r.totals.macs.known);
    REQUIRE(r.totals.backward_macs.known);  // zero but in a joint program
    CHECK(r.totals.macs.v + r.totals.backward_macs.v == set.at("contraction_macs").get<int64_t>());
    REQUIRE(r.totals.flops.known);
    // FlopCounterMode has no rule for the CPU's fused attention (forward and backward) nor _grouped_mm:
    // their products, 2 FLOPs a MAC, are added to its figure.
    const auto& kinds = set.at("contraction_macs_by_kind");
    auto kind = [&](const char* k) { return kinds.value(k, int64_t(0)); };
    const int64_t uncovered = 2 * (kind("sdpa") + kind("_grouped_mm") + kind("sdpa_backward"));
    const int64_t joint_flops = r.joint ? r.totals.backward_flops.v : 0;
    CHECK(r.totals.flops.v + joint_flops == set.at("flop_counter_total").get<int64_t>() + uncovered);
    CHECK(r.joint == set.contains("forward"));
    if (set.contains("forward")) check_phases(r, set);
  }
}

}  // namespace

TEST_CASE("pt2: torch 2.14 programs match torch's params, dispatched MACs and FlopCounterMode") {
  for (const char* name : {"mlp",
                           "cnn",
                           "cnn_train",
                           "cnn_core_aten",
                           "cnn_joint",
                           "llama_joint",
                           "resnet18",
                           "mobilenet_v3_small",
                           "lraspp_mobilenet_v3_large",
                           "r3d_18",
                           "gpt2",
                           "bert",
                           "falcon",
                           "llama",
                           "llama_static_cache",
                           "mixtral",
                           "mixtral_batched_mm",
                           "t5",
                           "vit",
                           "whisper"}) {
    SUBCASE(name) { check_program(std::string(name) + ".pt2", oracle(name)); }
  }
}

TEST_CASE(
    "pt2: Falcon's weight.T and its causal mask built under torch.vmap are lowered, every node counted") {
  // transformers' FalconLinear computes `input @ self.weight.T` (aten.numpy_T, 8 nodes) and its mask function
  // runs under torch.vmap, which a pre-dispatch export records as torch._functorch.predispatch's
  // _add_batch_dim / _remove_batch_dim (4 each). Each value's shape is torch's own (the program's
  // tensor_values): a lowering that got one wrong would show in the warnings ("declared shapes disagree").
  const nlohmann::json o = oracle("falcon");
  for (const auto& set : o.at("shape_sets")) {
    CAPTURE(set.at("sizes").dump());
    Report r =
        analyse((pt2_dir() / "falcon.pt2").string(), pins_for(o, set), find_convention("torch")).report;
    CHECK_MESSAGE(r.unsupported.empty(), uncounted(r));
    for (const std::string& w : r.warnings) CHECK_MESSAGE(w.find("disagree") == std::string::npos, w);
  }
}

TEST_CASE("pt2: a joint program's --train is its own backward, and it keeps what autograd keeps") {
  // cnn_joint: the bytes torch's saved_tensors_hooks saw the eager forward keep (each storage once, the
  // parameters, buffers and inputs apart: models/pt2/generate.py count_phases) are what the program's
  // backward reads from its forward. (llama_joint's export builds its causal mask as tensors where the eager
  // model passes is_causal, so its forward keeps other tensors than the eager one: not compared.)
  const nlohmann::json o = oracle("cnn_joint");
  for (const auto& set : o.at("shape_sets")) {
    CAPTURE(set.at("sizes").dump());
    Pins pins = pins_for(o, set);
    const Analysis a = analyse((pt2_dir() / "cnn_joint.pt2").string(), pins, find_convention("torch"));
    const TrainingReport t = analyse_training(*a.model, a.report, TrainOptions{});
    CHECK(t.total.saved_bytes.v == set.at("saved_bytes").get<int64_t>());
    CHECK(t.total.backward_macs.v == set.at("backward").at("contraction_macs").get<int64_t>());
    CHECK(t.total.trainable_params.v == o.at("params").get<int64_t>());
    CHECK(t.warnings.empty());
  }
}

TEST_CASE("pt2: higher-order ops are counted as they run: regions once, loops unrolled, custom ops listed") {
  for (const char* name :
       {"hop_no_grad", "hop_autocast", "hop_invoke_subgraph", "hop_map", "hop_scan", "hop_while_loop",
        "hop_custom_ops", "hop_auto_functionalized", "hop_with_effects", "hop_effect_print"}) {
    SUBCASE(name) { check_program(std::string(name) + ".pt2", oracle(name)); }
  }
  // A custom op (torch.library.custom_op "mylib::scale", also under auto_functionalized) has no cost rule:
  // listed as not counted, the totals being the rest (checked above against torch's own counts).
  Pins pins;
  pins.dims = {{"x.0", 2}};
  Report r = analyse((pt2_dir() / "hop_custom_ops.pt2").string(), pins, find_convention("default")).report;
  CHECK(r.unsupported.count("mylib::scale") == 1);
}

TEST_CASE("pt2: a cond on data counts its costlier branch, as FlopCounterMode counts the larger one") {
  check_program("hop_cond.pt2", oracle("hop_cond"));
  Pins pins;
  pins.dims = {{"x.0", 2}};
  Report r = analyse((pt2_dir() / "hop_cond.pt2").string(), pins, find_convention("default")).report;
  CHECK(r.unsupported.empty());
}

TEST_CASE(
    "pt2: transformers' grouped_mm_fallback (Mixtral's experts by default) counts as torch._grouped_mm") {
  // Under torch.export transformers 5 runs a float32 model's experts through its own custom op
  // (transformers::grouped_mm_fallback: torch._grouped_mm's product one expert at a time), with sort and
  // histc routing the tokens; the eager model the oracle counted calls torch._grouped_mm itself. Exact
  // figures: the "mixtral" row above. Here: nothing is left uncounted once the dims are bound.
  Pins pins;
  pins.dims = {{"input_ids.0", 2}, {"input_ids.1", 8}};
  Report r = analyse((pt2_dir() / "mixtral.pt2").string(), pins, find_convention("default")).report;
  INFO("not counted: " << uncounted(r));
  CHECK(r.unsupported.empty());
  CHECK(r.totals.complete());
  const nlohmann::json o = oracle("mixtral");
  const auto& set = o.at("shape_sets").at(0);
  REQUIRE(set.at("sizes").at("batch") == 2);
  REQUIRE(set.at("sizes").at("seq") == 8);
  CHECK(r.totals.macs.v == set.at("contraction_macs").get<int64_t>());
}

TEST_CASE(
    "pt2: torch's own symbol names bind the dims too, and a size outside range_constraints is refused") {
  const nlohmann::json o = oracle("gpt2");  // its "dynamic": torch's symbol and bounds of each input dim
  const auto& set = o.at("shape_sets").at(0);
  Pins by_torch_name;
  for (const auto& d : o.at("dynamic"))
    by_torch_name.dims.push_back({d.at("symbol").get<std::string>(),
                                  set.at("sizes").at(d.at("size_name").get<std::string>()).get<int64_t>()});
  Report r = analyse((pt2_dir() / "gpt2.pt2").string(), by_torch_name, find_convention("torch")).report;
  REQUIRE(r.totals.macs.known);
  CHECK(r.totals.macs.v == set.at("contraction_macs").get<int64_t>());
  for (const auto& d : o.at("dynamic")) {
    if (d.at("max").is_null()) continue;
    Pins too_big;
    too_big.dims = {{d.at("input").get<std::string>() + "." + std::to_string(d.at("dim").get<int>()),
                     d.at("max").get<int64_t>() + 1}};
    CHECK_THROWS_AS(analyse((pt2_dir() / "gpt2.pt2").string(), too_big, find_convention("torch")),
                    UsageError);
  }
}

TEST_CASE("pt2: a ResNet-18 exported by the Python package (flopwise.export_program, in the modern root)") {
  const fs::path file = pt2_dir() / "py_export.pt2";  // written by scripts/test_modern.sh only
  if (!fs::exists(file)) return;
  Pins pins;
  pins.dims = {{"x.0", 1}};
  Report r = analyse(file.string(), pins, find_convention("default")).report;
  CHECK(r.totals.params.v == 11689512);  // torch's sum(p.numel()) of torchvision's resnet18
  CHECK(r.totals.macs.v == 1814073344);  // torchvision's published figure: 1.814 GMACs at 224x224
  CHECK(r.unsupported.empty());
}

TEST_CASE("pt2: an archive of several programs: --program picks one, none picked is refused naming them") {
  const nlohmann::json o = oracle("multi_program");
  for (const auto& [name, prog] : o.at("programs").items()) check_program("multi_program.pt2", prog, name);
  try {
    analyse((pt2_dir() / "multi_program.pt2").string(), Pins{}, find_convention("torch"));
    FAIL("several programs and none named must be refused");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("mlp") != std::string::npos);
    CHECK(std::string(e.what()).find("cnn") != std::string::npos);
  }
}

TEST_CASE("pt2: the float8 kinds are element types of their own, one byte each") {
  // torch.export's ScalarType codes (torch/_export/serde/schema.py: FLOAT8E4M3FN = 29, FLOAT8E5M2 = 30,
  // FLOAT8E4M3FNUZ = 31, FLOAT8E5M2FNUZ = 32) and c10's (Float8_e5m2 = 23 ... Float8_e4m3fnuz = 26).
  const std::pair<int, DType> serde[] = {{29, DType::Float8E4M3FN},
                                         {30, DType::Float8E5M2},
                                         {31, DType::Float8E4M3FNUZ},
                                         {32, DType::Float8E5M2FNUZ}};
  for (const auto& row : serde) {  // (no structured binding: clang 14's doctest macros capture)
    const int code = row.first;
    const DType t = row.second;
    REQUIRE(pt2::scalar_type_info(code) != nullptr);
    CHECK(pt2::scalar_type_info(code)->ir == t);
    CHECK(dtype_size(t) == 1);
    CHECK(is_float(t));
    CHECK(parse_dtype(dtype_name(t)) == t);
  }
  CHECK(dtype_of_scalar_type(24) == DType::Float8E4M3FN);
  CHECK(dtype_of_scalar_type(23) == DType::Float8E5M2);
}
