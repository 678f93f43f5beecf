// tests/test_roofline.cc — the roofline on named hardware (issue 13): hand-computed bounds for a GEMM and a
// LayerNorm on two rows of the table, the table's rows each citing a source, a user's device from TOML.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <fstream>

#include "cli_util.h"
#include "flopwise/cost.h"
#include "flopwise/errors.h"
#include "flopwise/infer.h"
#include "flopwise/onnx_import.h"
#include "flopwise/roofline.h"
#include "flopwise/torch_trace.h"
#include "onnx_tiny.h"

namespace {

onnx::TensorProto* weight(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims) {
  auto* t = g->add_initializer();  // dims only: flopwise never reads weights
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) t->add_dims(d);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value("absent.bin");
  return t;
}

flopwise::Report report_of(const onnx::ModelProto& m) {
  flopwise::Model model = flopwise::import_onnx_bytes(m.SerializeAsString(), "tiny.onnx");
  auto inferred = flopwise::infer_shapes(model);
  return flopwise::build_report(model, std::move(inferred));
}

}  // namespace

TEST_CASE("roofline: a GEMM is compute-bound and a LayerNorm memory-bound, by hand, on two devices") {
  auto m = fwtest::tiny_model();
  auto* g = m.mutable_graph();
  fwtest::tiny_input(g, "x", onnx::TensorProto::FLOAT, {"1024", "1024"});
  weight(g, "w", {1024, 1024});
  weight(g, "gamma", {1024});
  weight(g, "beta", {1024});
  fwtest::tiny_node(g, "gemm", "MatMul", {"x", "w"}, {"y"});
  fwtest::tiny_node(g, "ln", "LayerNormalization", {"y", "gamma", "beta"}, {"z"});
  g->add_output()->set_name("z");
  flopwise::Report r = report_of(m);
  REQUIRE(r.nodes.size() == 2);
  const auto& gemm = r.nodes[0];
  const auto& ln = r.nodes[1];
  // GEMM: 2*1024^3 FLOPs; bytes x, w read and y written, 4 MiB each. LayerNorm: y read, gamma and beta read,
  // z written: 2 * 4 MiB + 2 * 4 KiB.
  REQUIRE(gemm.cost.flops.v == 2LL * 1024 * 1024 * 1024);
  REQUIRE(gemm.cost.memory_bytes.v == 3LL * 4 * 1024 * 1024);
  REQUIRE(ln.cost.memory_bytes.v == 2LL * 4 * 1024 * 1024 + 2 * 4 * 1024);
  // Datasheet figures (dense): H100 SXM FP32 67 TFLOP/s, 3.35 TB/s; A100 40GB FP32 19.5 TFLOP/s, 1,555 GB/s.
  struct Device {
    const char* name;
    double fp32, bw;
  };
  for (const Device& d : {Device{"h100-sxm", 67e12, 3.35e12}, Device{"a100-40gb", 19.5e12, 1555e9}}) {
    CAPTURE(d.name);
    flopwise::RooflineReport rf = flopwise::roofline(r, flopwise::find_hardware(d.name));
    const double gemm_s = 2.0 * 1024 * 1024 * 1024 / d.fp32;  // compute: 32.05 us on H100, 110.1 us on A100
    const double ln_s = (2.0 * 4 * 1024 * 1024 + 2 * 4 * 1024) / d.bw;  // memory: 2.51 us, 5.40 us
    CHECK(rf.total.compute_bound == 1);
    CHECK(rf.total.memory_bound == 1);
    CHECK(rf.total.seconds == doctest::Approx(gemm_s + ln_s).epsilon(1e-9));
    CHECK(rf.total.compute_seconds == doctest::Approx(gemm_s).epsilon(1e-9));
    CHECK(rf.total.memory_seconds == doctest::Approx(ln_s).epsilon(1e-9));
    CHECK(rf.unbounded_nodes == 0);
    // The LayerNorm's arithmetic fits under its memory time: its FLOPs at the FP32 peak take less.
    CHECK(static_cast<double>(ln.cost.flops.v) / d.fp32 < ln_s);
  }
  // TF32: the GEMM at the tensor-core rate (H100 SXM 494.5 dense); still compute-bound.
  flopwise::RooflineReport tf = flopwise::roofline(r, flopwise::find_hardware("h100-sxm:tf32"));
  CHECK(tf.total.compute_seconds == doctest::Approx(2.0 * 1024 * 1024 * 1024 / 494.5e12).epsilon(1e-9));
}

TEST_CASE("roofline: every table row cites a source; unknown devices and bad files are usage errors") {
  for (const auto& name : flopwise::hardware_names()) {
    CAPTURE(name);
    flopwise::Hardware hw = flopwise::find_hardware(name);
    CHECK(hw.bandwidth > 0);
    CHECK(hw.peak[0] > 0);  // float32 always given
    CHECK_FALSE(hw.sources.empty());
    for (const auto& s : hw.sources) CHECK(s.size() > 20);
  }
  for (const char* must :
       {"a100-40gb", "a100-80gb", "h100-sxm", "h100-pcie", "h200", "l40s", "rtx4090", "xeon-8380"})
    CHECK_NOTHROW(flopwise::find_hardware(must));
  CHECK_THROWS_AS(flopwise::find_hardware("tpu-v9"), flopwise::UsageError);

  auto dir = fwtest::scratch_dir("roofline");
  const std::string good = (dir / "dev.toml").string(), bad = (dir / "bad.toml").string();
  std::ofstream(good) << "name = \"lab-gpu\"\nbandwidth_gbs = 500\n[peak_tflops]\nfloat32 = 10\nint8 = 80\n";
  std::ofstream(bad) << "name = \"x\"\nbandwidth_gbs = -1\n[peak_tflops]\nfloat32 = 10\n";
  flopwise::Hardware hw = flopwise::load_hardware_file(good);
  CHECK(hw.name == "lab-gpu");
  CHECK(hw.bandwidth == 500e9);
  CHECK(hw.peak[static_cast<size_t>(flopwise::PeakType::Int8)] == 80e12);
  CHECK_THROWS_AS(flopwise::load_hardware_file(bad), flopwise::UsageError);
  CHECK_THROWS_AS(flopwise::load_hardware_file((dir / "missing.toml").string()), flopwise::UsageError);
}

TEST_CASE("roofline: int8 products run at the int8 rate; symbolic counts are not bounded") {
  flopwise::NodeReport n;
  n.mac_dtype = flopwise::DType::Int8;
  CHECK(flopwise::node_peak_type(n, false) == flopwise::PeakType::Int8);
  n.mac_dtype = flopwise::DType::Float32;
  CHECK(flopwise::node_peak_type(n, true) == flopwise::PeakType::TF32);
  n.mac_dtype = flopwise::DType::Undefined;
  CHECK(flopwise::node_peak_type(n, true) == flopwise::PeakType::Float32);

  auto m = fwtest::tiny_model();
  auto* g = m.mutable_graph();
  fwtest::tiny_input(g, "x", onnx::TensorProto::FLOAT, {"N", "64"});
  weight(g, "w", {64, 64});
  fwtest::tiny_node(g, "mm", "MatMul", {"x", "w"}, {"y"});
  g->add_output()->set_name("y");
  flopwise::RooflineReport rf = flopwise::roofline(report_of(m), flopwise::find_hardware("l40s"));
  CHECK(rf.unbounded_nodes == 1);
  CHECK(rf.total.seconds == 0);
}

TEST_CASE("roofline: tf32_conv puts convolutions on the TF32 row and leaves matrix products on FP32") {
  // What `flopwise run --device cuda` sets when LibTorch reports cuDNN's allow_tf32 (its default) and not
  // cuBLAS's: a 3x3 convolution of 64 to 64 channels on 1x64x56x56 (pad 1) and a 1024^3 MatMul.
  auto m = fwtest::tiny_model();
  auto* g = m.mutable_graph();
  fwtest::tiny_input(g, "x", onnx::TensorProto::FLOAT, {"1", "64", "56", "56"});
  fwtest::tiny_input(g, "a", onnx::TensorProto::FLOAT, {"1024", "1024"});
  weight(g, "w", {64, 64, 3, 3});
  weight(g, "b", {1024, 1024});
  auto* conv = fwtest::tiny_node(g, "conv", "Conv", {"x", "w"}, {"y"});
  auto* pads = conv->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  fwtest::tiny_node(g, "mm", "MatMul", {"a", "b"}, {"z"});
  g->add_output()->set_name("y");
  g->add_output()->set_name("z");
  flopwise::Report r = report_of(m);
  REQUIRE(r.nodes.size() == 2);
  const double conv_flops = 2.0 * 56 * 56 * 64 * 64 * 9;  // 2 x output elements x (64 x 3 x 3) MACs each
  const double mm_flops = 2.0 * 1024 * 1024 * 1024;
  REQUIRE(static_cast<double>(r.nodes[0].cost.flops.v) == conv_flops);
  flopwise::Hardware hw = flopwise::find_hardware("h200");  // FP32 67, TF32 494.5 TFLOP/s dense
  CHECK(flopwise::node_peak_type(r.nodes[0], hw) == flopwise::PeakType::Float32);
  hw.tf32_conv = true;
  CHECK(flopwise::node_peak_type(r.nodes[0], hw) == flopwise::PeakType::TF32);
  CHECK(flopwise::node_peak_type(r.nodes[1], hw) == flopwise::PeakType::Float32);
  flopwise::RooflineReport rf = flopwise::roofline(r, hw);
  CHECK(rf.total.compute_seconds == doctest::Approx(conv_flops / 494.5e12 + mm_flops / 67e12).epsilon(1e-9));
}

// The GPU name a trace writes (Kineto's deviceProperties: cudaGetDeviceProperties' name, as nvidia-smi prints
// it) to the datasheet's row (src/analysis/hardware.def, TRACE_GPU): the product each name is, by its
// datasheet. The A100 PCIe cards name no memory size in some drivers: their memory tells 80 GB from 40 GB.
TEST_CASE("match_trace_hardware: GPU names as CUDA reports them, to their datasheet rows") {
  const int64_t gib = int64_t{1} << 30;
  struct Case {
    const char* name;
    int64_t memory;
    const char* row;  // "" for none
  };
  for (const Case& c :
       {Case{"NVIDIA H200", 141 * gib, "h200"}, Case{"NVIDIA H100 80GB HBM3", 80 * gib, "h100-sxm"},
        Case{"NVIDIA H100 PCIe", 80 * gib, "h100-pcie"}, Case{"NVIDIA A100-SXM4-80GB", 80 * gib, "a100-80gb"},
        Case{"NVIDIA A100-SXM4-40GB", 40 * gib, "a100-40gb"},
        Case{"NVIDIA A100-PCIE-40GB", 40 * gib, "a100-40gb"}, Case{"NVIDIA A100 PCIe", 80 * gib, "a100-80gb"},
        Case{"NVIDIA L40S", 48 * gib, "l40s"}, Case{"NVIDIA GeForce RTX 4090", 24 * gib, "rtx4090"},
        Case{"Tesla V100-SXM2-16GB", 16 * gib, ""}}) {
    CAPTURE(c.name);
    std::string note;
    std::optional<flopwise::Hardware> hw = flopwise::match_trace_hardware(c.name, c.memory, &note);
    if (*c.row) {
      REQUIRE(hw.has_value());
      CHECK(hw->name == c.row);
      CHECK(note.find(c.row) != std::string::npos);
    } else {
      CHECK(!hw.has_value());
      CHECK(note.find("no roofline row") != std::string::npos);
    }
  }
}
