// tests/test_sweep.cc — flopwise MODEL --sweep: the cost formulas evaluated over a grid; every row checked
// against a separate concrete run of the CLI at that point (--dim, or --input for image sizes).
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "flopwise/errors.h"
#include "flopwise/sweep.h"
#include "onnx_tiny.h"

using namespace fwtest;
using json = nlohmann::json;

TEST_CASE("--sweep grammar: lists, doubling ranges, stepped ranges; bad ones refused") {
  using flopwise::parse_sweep;
  CHECK(parse_sweep("seq=128,256,512").values == std::vector<int64_t>{128, 256, 512});
  CHECK(parse_sweep("batch=1..32").values == std::vector<int64_t>{1, 2, 4, 8, 16, 32});
  CHECK(parse_sweep("batch=3..20").values == std::vector<int64_t>{3, 6, 12});
  CHECK(parse_sweep("H=0..10:5").values == std::vector<int64_t>{0, 5, 10});
  CHECK(parse_sweep("H=64..100:32").values == std::vector<int64_t>{64, 96});
  CHECK(parse_sweep("H=7").name == "H");
  for (const char* bad :
       {"seq", "=3", "seq=", "seq=a", "seq=-1", "seq=0..8", "seq=8..1", "seq=1..9:0", "seq=0..100000000:1"})
    CHECK_THROWS_AS(parse_sweep(bad), flopwise::UsageError);
}

namespace {

json totals_at(const std::string& args, const fs::path& dir) {
  CliRun r = run_cli(args + " --format json", dir);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  return json::parse(r.out)["totals"];
}

void check_rows(const json& sweep, const std::function<std::string(const json& point)>& concrete_args,
                const fs::path& dir) {
  for (const auto& row : sweep["rows"]) {
    CAPTURE(row["point"].dump());
    CHECK(row["method"] == "formula");
    json t = totals_at(concrete_args(row["point"]), dir);
    for (const char* k : {"params", "macs", "flops", "memory_bytes"}) {
      CAPTURE(k);
      CHECK(row[k] == t[k]);
    }
  }
}

}  // namespace

TEST_CASE(
    "--sweep: every row equals a concrete run at that point (BERT in batch and seq, ResNet-18 in H and W)") {
  auto dir = scratch_dir("sweep");
  std::string bert = model_path("bert.onnx");
  CliRun r = run_cli(bert + " --sweep seq=16,33,64,128 --sweep batch=1..4 --format json", dir);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  json sw = json::parse(r.out);
  CHECK(sw["schema"] == "flopwise.sweep/1");
  CHECK(sw["rows"].size() == 12);  // 4 seq x 3 batch (1, 2, 4)
  check_rows(
      sw,
      [&](const json& p) {
        return bert + " --dim batch=" + std::to_string(p["batch"].get<int64_t>()) +
               " --dim seq=" + std::to_string(p["seq"].get<int64_t>());
      },
      dir);

  std::string resnet = model_path("resnet18.onnx");
  r = run_cli(resnet + " --input input:1x3xHxW --sweep H=7,64,225 --sweep W=97,224 --format json", dir);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  sw = json::parse(r.out);
  CHECK(sw["rows"].size() == 6);
  check_rows(
      sw,
      [&](const json& p) {
        return resnet + " --input input:1x3x" + std::to_string(p["H"].get<int64_t>()) + "x" +
               std::to_string(p["W"].get<int64_t>());
      },
      dir);

  // Text, CSV and markdown render the same grid.
  CliRun csv = run_cli(bert + " --sweep seq=16 --sweep batch=1,2 --format csv", dir);
  CHECK(csv.out.rfind("seq,batch,params,macs,flops,memory_bytes", 0) == 0);
  CHECK(std::count(csv.out.begin(), csv.out.end(), '\n') == 3);
  CHECK(run_cli(bert + " --sweep seq=16 --sweep batch=1", dir).out.find("flopwise sweep") !=
        std::string::npos);
  // A dim the model does not have, or one left unbound: one line, exit 2.
  for (const char* args : {" --sweep foo=1", " --sweep seq=16"}) {
    CliRun bad = run_cli(bert + args, dir);
    CHECK(bad.code == 2);
    CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
  }
}

TEST_CASE("--sweep: a point the formulas cannot give is re-analysed, and the row says so") {
  // X[N] -> Shape -> Mod 3 -> ConstantOfShape -> Relu: N mod 3 has no formula here, so the Relu's cost is
  // unknown for a symbolic N and known once N is.
  onnx::ModelProto m = fwtest::tiny_model();
  auto* g = m.mutable_graph();
  fwtest::tiny_input(g, "X", onnx::TensorProto::FLOAT, {"N"});
  auto* three = g->add_initializer();
  three->set_name("three");
  three->set_data_type(onnx::TensorProto::INT64);
  three->add_dims(1);
  three->add_int64_data(3);
  auto node = [&](const char* op, std::vector<std::string> ins, const std::string& out) {
    fwtest::tiny_node(g, std::string("/") + op, op, ins, {out});
  };
  node("Shape", {"X"}, "s");
  node("Mod", {"s", "three"}, "r");
  node("ConstantOfShape", {"r"}, "z");
  node("Relu", {"z"}, "Y");
  g->add_output()->set_name("Y");
  auto dir = scratch_dir("sweep");
  std::string path = (dir / "mod.onnx").string();
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();

  CliRun r = run_cli(path + " --sweep N=5,7,9 --format json", dir);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  json sw = json::parse(r.out);
  CHECK(sw["reanalysed_points"] == 3);
  for (const auto& row : sw["rows"]) {
    CAPTURE(row.dump());
    CHECK(row["method"] == "re-analysed");
    json t = totals_at(path + " --input X:" + std::to_string(row["point"]["N"].get<int64_t>()), dir);
    for (const char* k : {"params", "macs", "flops", "memory_bytes"}) CHECK(row[k] == t[k]);
  }
  // Hand count: the Mod of the 1-element shape is 1 FLOP, the Relu 1 per element of N mod 3:
  // N = 5: 1 + 2, N = 7: 1 + 1, N = 9: 1 + 0.
  CHECK(sw["rows"][0]["flops"] == 3);
  CHECK(sw["rows"][1]["flops"] == 2);
  CHECK(sw["rows"][2]["flops"] == 1);
}
