// tests/test_control_flow_precision.cc — products inside control-flow bodies run at their own precision
// (issue 37): an If's MACs by precision are its branches' products, never the condition's bool; a Loop's are
// its body's times the trip count; the roofline bounds each body node at its own precision's peak. Models
// built by hand here; every expected figure is a hand formula written beside it, with the peaks of the device
// table's datasheet rows.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli_util.h"
#include "flopwise/cost.h"
#include "flopwise/infer.h"
#include "flopwise/onnx_import.h"
#include "flopwise/roofline.h"
#include "onnx_tiny.h"

namespace {

using flopwise::DType;

void body_weight(onnx::GraphProto* g, const std::string& name, int elem, const std::vector<int64_t>& dims) {
  auto* t = g->add_initializer();  // dims only: flopwise never reads weights
  t->set_name(name);
  t->set_data_type(elem);
  for (auto d : dims) t->add_dims(d);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value("absent.bin");
}

onnx::AttributeProto* graph_attr(onnx::NodeProto* n, const std::string& name) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  return a;
}

void bool_constant(onnx::GraphProto* g, const std::string& out, bool v) {
  auto* c = fwtest::tiny_node(g, out + "_const", "Constant", {}, {out});
  auto* a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::BOOL);
  a->mutable_t()->add_int32_data(v ? 1 : 0);
}

// x [1, 4, 8, 8] float32. then_branch: MatMul(x, w_then [8, 8] float32). else_branch: Cast to float16,
// Conv(w_else [4, 4, 3, 3] float16, pads 1), Cast back to float32. The condition: a graph input (unknown), or
// a Constant true / false.
onnx::ModelProto if_model(int cond) {  // -1: unknown
  auto m = fwtest::tiny_model();
  auto* g = m.mutable_graph();
  fwtest::tiny_input(g, "x", onnx::TensorProto::FLOAT, {"1", "4", "8", "8"});
  if (cond < 0)
    fwtest::tiny_input(g, "cond", onnx::TensorProto::BOOL, {});
  else
    bool_constant(g, "cond", cond == 1);
  auto* n = fwtest::tiny_node(g, "branch", "If", {"cond"}, {"y"});
  auto* then_g = graph_attr(n, "then_branch")->mutable_g();
  then_g->set_name("then");
  body_weight(then_g, "w_then", onnx::TensorProto::FLOAT, {8, 8});
  fwtest::tiny_node(then_g, "then_mm", "MatMul", {"x", "w_then"}, {"y_then"});
  then_g->add_output()->set_name("y_then");
  auto* else_g = graph_attr(n, "else_branch")->mutable_g();
  else_g->set_name("else");
  body_weight(else_g, "w_else", onnx::TensorProto::FLOAT16, {4, 4, 3, 3});
  auto* to16 = fwtest::tiny_node(else_g, "to16", "Cast", {"x"}, {"xh"});
  auto* a = to16->add_attribute();
  a->set_name("to");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(onnx::TensorProto::FLOAT16);
  auto* conv = fwtest::tiny_node(else_g, "else_conv", "Conv", {"xh", "w_else"}, {"yh"});
  auto* pads = conv->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  auto* to32 = fwtest::tiny_node(else_g, "to32", "Cast", {"yh"}, {"y_else"});
  a = to32->add_attribute();
  a->set_name("to");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(onnx::TensorProto::FLOAT);
  else_g->add_output()->set_name("y_else");
  g->add_output()->set_name("y");
  return m;
}

flopwise::Report report_of(const onnx::ModelProto& m) {
  flopwise::Model model = flopwise::import_onnx_bytes(m.SerializeAsString(), "tiny.onnx");
  auto inferred = flopwise::infer_shapes(model);
  return flopwise::build_report(model, std::move(inferred));
}

int64_t macs_of(const flopwise::Report& r, DType t) {
  for (const auto& d : r.by_dtype)
    if (d.dtype == t) return d.macs.v;
  return 0;
}

// Hand counts. then: MatMul [1,4,8,8] x [8,8]: 1*4*8*8 outputs x 8 = 2,048 MACs, 4,096 FLOPs; bytes x 1,024 +
// w 256 + y 1,024 = 2,304. else: Conv 4 out channels x 8*8 positions x (4 in x 3*3) = 9,216 MACs, 18,432
// FLOPs; bytes xh 512 + w 288 + yh 512 = 1,312; each Cast reads 1,024 and writes 512 bytes (or the reverse):
// 1,536, no FLOPs.
constexpr int64_t kThenMacs = 2048, kElseMacs = 9216;
constexpr double kMatMulFlops = 4096, kMatMulBytes = 2304, kConvFlops = 18432, kConvBytes = 1312,
                 kCastBytes = 1536;

double bound(double flops, double bytes, double peak, double bw) {
  return std::max(flops / peak, bytes / bw);
}

}  // namespace

TEST_CASE("If: MACs by precision are the products of the branch that runs, never the condition's bool") {
  const flopwise::Hardware hw = flopwise::find_hardware("h100-sxm");
  const double f32 = hw.peak[static_cast<size_t>(flopwise::PeakType::Float32)];
  const double f16 = hw.peak[static_cast<size_t>(flopwise::PeakType::Float16)];
  // Datasheet (hardware.def): H100 SXM FP32 67 TFLOP/s, FP16 989.5 dense, 3.35 TB/s.
  REQUIRE(f32 == 67e12);
  REQUIRE(f16 == 989.5e12);
  const double then_s = bound(kMatMulFlops, kMatMulBytes, f32, hw.bandwidth);
  const double else_s =
      bound(0, kCastBytes, f16, hw.bandwidth) * 2 + bound(kConvFlops, kConvBytes, f16, hw.bandwidth);
  struct Case {
    int cond;
    int64_t f32_macs, f16_macs;
    double seconds;
  };
  // Unknown condition: the costlier branch (else: 18,432 FLOPs against 4,096) is what the counts take.
  for (const Case& c :
       {Case{1, kThenMacs, 0, then_s}, Case{0, 0, kElseMacs, else_s}, Case{-1, 0, kElseMacs, else_s}}) {
    CAPTURE(c.cond);
    flopwise::Report r = report_of(if_model(c.cond));
    CHECK(r.totals.macs.v == c.f32_macs + c.f16_macs);
    CHECK(macs_of(r, DType::Float32) == c.f32_macs);
    CHECK(macs_of(r, DType::Float16) == c.f16_macs);
    CHECK(macs_of(r, DType::Bool) == 0);
    for (const auto& n : r.nodes)
      if (n.op == "If") CHECK(n.mac_dtype == (c.f16_macs ? DType::Float16 : DType::Float32));
    flopwise::RooflineReport rf = flopwise::roofline(r, hw);
    CHECK(rf.unbounded_nodes == 0);
    CHECK(rf.total.seconds == doctest::Approx(c.seconds).epsilon(1e-9));
    CHECK(rf.total.flops == (c.f16_macs ? kConvFlops : kMatMulFlops));
  }
  // The CLI's JSON and CSV say the same: no bool in by_dtype or a node's precision (the condition input is
  // bool).
  auto dir = fwtest::scratch_dir("cfprec");
  const std::string path = (dir / "if.onnx").string();
  {
    std::ofstream o(path, std::ios::binary);
    o << if_model(-1).SerializeAsString();
  }
  auto j = nlohmann::json::parse(fwtest::run_cli(path + " --format json", dir).out);
  for (const auto& d : j["by_dtype"]) CHECK(d["dtype"] != "bool");
  CHECK(j["nodes"].dump().find("\"bool\"") == std::string::npos);
  auto csv = fwtest::run_cli(path + " --format csv --hardware h100-sxm", dir);
  CHECK(csv.code == 0);
  CHECK(csv.out.find(",bool,") == std::string::npos);
  CHECK(csv.out.find(",float16,") != std::string::npos);
}

TEST_CASE("Loop: a float16 Gemm body runs trip-count times at float16") {
  // Loop M = 3 (a Constant), cond true, carried h [4, 8] float16; body: h' = Gemm(h, w [8, 8] float16), cond'
  // a Constant true. MACs 3 x 4*8*8 = 768, all float16.
  auto m = fwtest::tiny_model();
  auto* g = m.mutable_graph();
  fwtest::tiny_input(g, "h0", onnx::TensorProto::FLOAT16, {"4", "8"});
  auto* mc = fwtest::tiny_node(g, "trips", "Constant", {}, {"M"});
  auto* a = mc->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  a->mutable_t()->add_int64_data(3);
  bool_constant(g, "go", true);
  auto* loop = fwtest::tiny_node(g, "loop", "Loop", {"M", "go", "h0"}, {"h"});
  auto* body = graph_attr(loop, "body")->mutable_g();
  body->set_name("body");
  fwtest::tiny_input(body, "i", onnx::TensorProto::INT64, {});
  fwtest::tiny_input(body, "c", onnx::TensorProto::BOOL, {});
  fwtest::tiny_input(body, "h_in", onnx::TensorProto::FLOAT16, {"4", "8"});
  body_weight(body, "w", onnx::TensorProto::FLOAT16, {8, 8});
  bool_constant(body, "c_out", true);
  fwtest::tiny_node(body, "gemm", "Gemm", {"h_in", "w"}, {"h_out"});
  body->add_output()->set_name("c_out");
  body->add_output()->set_name("h_out");
  g->add_output()->set_name("h");
  flopwise::Report r = report_of(m);
  CHECK(r.totals.macs.v == 3 * 4 * 8 * 8);
  CHECK(macs_of(r, DType::Float16) == 768);
  CHECK(macs_of(r, DType::Int64) == 0);
  CHECK(macs_of(r, DType::Bool) == 0);
  // Roofline: three runs of the Gemm, each 2*256 FLOPs and h_in 64 + w 128 + h_out 64 = 256 bytes, bound by
  // memory on an H100 (256 B / 3.35 TB/s against 512 / 989.5 TFLOP/s).
  const flopwise::Hardware hw = flopwise::find_hardware("h100-sxm");
  flopwise::RooflineReport rf = flopwise::roofline(r, hw);
  CHECK(rf.unbounded_nodes == 0);
  CHECK(rf.total.seconds == doctest::Approx(3 * bound(512, 256, 989.5e12, 3.35e12)).epsilon(1e-9));
}

TEST_CASE("models with control flow, ours and others', run no product in bool or an index type") {
  // Every .onnx under models/ holding an If, Loop or Scan, the silero-vad files where a test fetched them
  // (test_shipped.cc), and ONNX's own If/Loop/Scan/SequenceMap backend node tests (Debian libonnx-testdata):
  // MACs by precision name float or 8-bit types only (issue 37: the condition's bool was taken for the
  // precision).
  std::vector<std::filesystem::path> files;
  for (const auto& root : {fwtest::model_path(""), fwtest::binary_dir() + "/silero",
                           std::string("/usr/share/libonnx-testdata/data/node")}) {
    if (!std::filesystem::exists(root)) continue;
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
      const std::string dir = e.path().parent_path().filename().string();
      if (e.path().extension() != ".onnx") continue;
      if (root.find("testdata") != std::string::npos && dir.rfind("test_if", 0) != 0 &&
          dir.rfind("test_loop", 0) != 0 && dir.rfind("test_scan", 0) != 0 &&
          dir.rfind("test_sequence_map", 0) != 0)
        continue;
      files.push_back(e.path());
    }
  }
  int with_control_flow = 0;
  for (const auto& path : files) {
    CAPTURE(path.string());
    flopwise::Model model = flopwise::import_onnx_file(path.string());
    bool cf = false;
    for (const auto& n : model.graph.nodes) cf = cf || !n.subgraphs.empty();
    if (!cf) continue;
    ++with_control_flow;
    auto inferred = flopwise::infer_shapes(model);
    flopwise::Report r = flopwise::build_report(model, std::move(inferred));
    for (const auto& d : r.by_dtype)
      if (d.macs != flopwise::Count{})
        CHECK((flopwise::is_float(d.dtype) || d.dtype == DType::Int8 || d.dtype == DType::UInt8));
  }
  MESSAGE(with_control_flow << " models with control flow");
  CHECK(with_control_flow >= 2);
}
