// tests/test_report_formats.cc — text, CSV and markdown reports on a bundled model, checked against figures
// from outside flopwise: models/resnet18.expect.json (torch's parameter count adjusted for the BatchNorm
// fold, forward-hook MACs), and the structure torchvision's ResNet-18 has.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_util.h"

namespace {

nlohmann::json expect_r18() {
  std::ifstream f(fwtest::model_path("resnet18.expect.json"));
  return nlohmann::json::parse(f);
}

std::string r18() { return "\"" + fwtest::model_path("resnet18.onnx") + "\" --dim batch=1"; }

fwtest::CliRun run(const std::string& args) {
  fwtest::CliRun r = fwtest::run_cli(args, fwtest::scratch_dir("formats"));
  REQUIRE_MESSAGE(r.code == 0, args << ": " << r.err);
  return r;
}

}  // namespace

TEST_CASE("csv report: one row per node; the MAC column sums to the forward-hook MACs") {
  const auto e = expect_r18();
  fwtest::CliRun r = run(r18() + " --format csv");
  std::istringstream in(r.out);
  std::string line;
  std::getline(in, line);
  CHECK(line == "name,op,scope,output_shapes,params,macs,flops,memory_bytes,mac_dtype,param_dtypes");
  int64_t macs = 0, params = 0, rows = 0, convs = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    if (!line.empty() && line.back() == ',') f.push_back("");  // getline drops a trailing empty field
    REQUIRE(f.size() == 10);
    params += std::stoll(f[4]);
    macs += std::stoll(f[5]);
    // MACs run in float32 where there are any; params stored in float32 where there are any.
    CHECK(f[8] == (f[5] == "0" ? "" : "float32"));
    CHECK(f[9] == (f[4] == "0" ? "" : "float32"));
    convs += f[1] == "Conv";
    ++rows;
  }
  CHECK(macs == e["macs"].get<int64_t>());  // 1814073344
  CHECK(params == e["expected_onnx_params"].get<int64_t>());
  CHECK(convs == 20);  // ResNet-18: stem conv + 8 blocks x 2 convs + 3 downsample convs = 20
}

TEST_CASE("text report: summary, aggregated profile, tree depth and top-N") {
  fwtest::CliRun r = run(r18() + " --depth 1 --top 2");
  // 11684712 params -> "11.68 M"; 1814073344 MACs -> "1.81 G" (SI units, 2 decimals).
  CHECK(r.out.find("params:                                       11.68 M\n") != std::string::npos);
  CHECK(r.out.find("fwd MACs:                                     1.81 G\n") != std::string::npos);
  CHECK(r.out.find("(conv1): [Conv](") != std::string::npos);
  CHECK(r.out.find("(layer4): (") != std::string::npos);
  CHECK(r.out.find("(0): (") == std::string::npos);  // depth 1: blocks are folded into "..."
  // --top 2: two modules per list. layer4 holds the most params (8.39 M of 11.68 M).
  CHECK(r.out.find("params - {'layer4': '8.39 M', 'layer3': '2.10 M'}") != std::string::npos);
  CHECK(r.out.find("depth 2:") == std::string::npos);
}

TEST_CASE("markdown report and -o FILE") {
  fwtest::fs::path out = fwtest::scratch_dir("formats") / "r18.md";
  fwtest::CliRun r = run(r18() + " --format markdown -o \"" + out.string() + "\"");
  CHECK(r.out.empty());
  std::string md = fwtest::slurp(out);
  CHECK(md.find("| params | 11.68 M |") != std::string::npos);
  CHECK(md.find("| MACs | 1.81 G |") != std::string::npos);
  CHECK(md.find("| op | count | MACs | FLOPs |") != std::string::npos);
  CHECK(md.find("| Conv | 20 |") != std::string::npos);
}

TEST_CASE(
    "--format netron: an attachment Netron's reader takes, one entry per node and metric, values as the JSON "
    "report's") {
  auto dir = fwtest::scratch_dir("netron");
  for (const char* args : {"bert.onnx", "resnet18.onnx --dim batch=1"}) {
    CAPTURE(args);
    std::string m = std::string(args);
    std::string path = fwtest::model_path(m.substr(0, m.find(' '))) +
                       (m.find(' ') == std::string::npos ? "" : m.substr(m.find(' ')));
    fwtest::CliRun a = fwtest::run_cli(path + " --format netron", dir),
                   j = fwtest::run_cli(path + " --format json", dir);
    REQUIRE(a.code == 0);
    REQUIRE(j.code == 0);
    nlohmann::json att = nlohmann::json::parse(a.out), rep = nlohmann::json::parse(j.out);
    // Netron's metadata.Attachment.open: a JSON object whose "signature" is "netron:attachment"; its
    // Container.open keeps items with "kind" and "target", keyed "kind::target", each {name, value}.
    CHECK(att["signature"] == "netron:attachment");
    REQUIRE(att["metrics"].is_array());
    std::map<std::string, std::map<std::string, nlohmann::json>> entries;
    for (const auto& item : att["metrics"]) {
      REQUIRE(item.contains("kind"));
      REQUIRE(item.contains("target"));
      entries[item["kind"].get<std::string>() + "::" + item["target"].get<std::string>()]
             [item["name"].get<std::string>()] = item["value"];
    }
    size_t nodes = 0;
    for (const auto& n : rep["nodes"]) {
      ++nodes;
      const auto& e = entries["node::" + n["name"].get<std::string>()];
      CHECK(e.at("params") == n["params"]);
      CHECK(e.at("MACs") == n["macs"]);
      CHECK(e.at("FLOPs") == n["flops"]);
      CHECK(e.at("memory bytes") == n["memory_bytes"]);
    }
    size_t node_keys = 0;
    for (const auto& [k, v] : entries) node_keys += k.rfind("node::", 0) == 0;
    CHECK(node_keys == nodes);  // one entry per graph node
    CHECK(entries["model::"].at("FLOPs") == rep["totals"]["flops"]);
  }
}
