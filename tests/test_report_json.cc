// The JSON report contract (README, schema flopwise.report/1): keys, types, and internal consistency
// (nodes sum to totals, children sum to their scope, op types sum to totals).
#include <doctest/doctest.h>

#include "cli_util.h"

#include <nlohmann/json.hpp>
#include <string>

using json = nlohmann::json;

namespace {

json run_json(const std::string& args) {
  fwtest::CliRun r = fwtest::run_cli(args + " --format json", fwtest::scratch_dir("json_report"));
  REQUIRE_MESSAGE(r.code == 0, args << ": " << r.err);
  return json::parse(r.out);
}

int64_t sum_children(const json& s, const char* key) {
  int64_t t = 0;
  for (const auto& c : s["children"]) t += c[key].get<int64_t>();
  return t;
}

void check_scope_sums(const json& s) {
  if (s["children"].empty()) return;
  // A scope's own nodes plus its children's: children alone never exceed the scope.
  for (const char* k : {"params", "macs", "flops"}) CHECK(sum_children(s, k) <= s[k].get<int64_t>());
  for (const auto& c : s["children"]) check_scope_sums(c);
}

}  // namespace

TEST_CASE("json report: keys and consistency on resnet18") {
  const std::string model = std::string(FLOPWISE_SOURCE_DIR) + "/models/resnet18.onnx";
  json j = run_json("\"" + model + "\" --dim batch=1");
  CHECK(j["schema"] == "flopwise.report/1");
  CHECK(j["model"]["format"] == "onnx");
  CHECK(j["model"]["opset"]["ai.onnx"].is_number_integer());
  CHECK(j["convention"] == "default");
  // --dim batch=1 binds the dynamic axis: [1, 3, 224, 224] as exported by models/generate.py.
  CHECK(j["inputs"][0]["shape"] == json::array({1, 3, 224, 224}));
  CHECK(j["outputs"][0]["shape"] == json::array({1, 1000}));
  for (const char* k : {"params", "buffers", "macs", "flops", "memory_bytes", "backward_flops"})
    CHECK_MESSAGE(j["totals"][k].is_number_integer(), k);
  CHECK(j["totals_complete"] == true);
  CHECK(j["unsupported"].empty());

  int64_t params = 0, macs = 0, flops = 0, mem = 0;
  for (const auto& n : j["nodes"]) {
    params += n["params"].get<int64_t>();
    macs += n["macs"].get<int64_t>();
    flops += n["flops"].get<int64_t>();
    mem += n["memory_bytes"].get<int64_t>();
    CHECK(n.contains("scope"));
    CHECK(n["outputs"].is_array());
  }
  CHECK(params == j["totals"]["params"].get<int64_t>());
  CHECK(macs == j["totals"]["macs"].get<int64_t>());
  CHECK(flops == j["totals"]["flops"].get<int64_t>());
  CHECK(mem == j["totals"]["memory_bytes"].get<int64_t>());
  CHECK(j["totals"]["backward_flops"].get<int64_t>() == 2 * flops);

  int64_t op_macs = 0, op_count = 0;
  for (const auto& o : j["op_types"]) {
    op_macs += o["macs"].get<int64_t>();
    op_count += o["count"].get<int64_t>();
  }
  CHECK(op_macs == macs);
  CHECK(op_count == static_cast<int64_t>(j["nodes"].size()));

  const json& root = j["scopes"];
  CHECK(root["macs"] == j["totals"]["macs"]);
  check_scope_sums(root);
  // torchvision's ResNet-18: conv1, bn1 (folded), relu, maxpool, layer1..4, avgpool, fc.
  std::vector<std::string> top;
  for (const auto& c : root["children"]) top.push_back(c["name"]);
  CHECK(top == std::vector<std::string>{"conv1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4",
                                        "avgpool", "fc"});
  const json& layer1 = root["children"][3];
  CHECK(layer1["children"][0]["name"] == "layer1.0");
  CHECK(layer1["children"][0]["label"] == "0");
}

TEST_CASE("json report: costs stay polynomials in the dynamic dims until they are bound") {
  const std::string model = std::string(FLOPWISE_SOURCE_DIR) + "/models/resnet18.onnx";
  json j = run_json("\"" + model + "\"");
  CHECK(j["inputs"][0]["shape"] == json::array({"batch", 3, 224, 224}));
  CHECK(j["totals_complete"] == true);
  CHECK(j["totals"]["uncounted_nodes"].get<int64_t>() == 0);
  // models/resnet18.expect.json: forward hooks on every Conv2d/Linear give 1814073344 MACs per image.
  CHECK(j["totals"]["macs"] == "1814073344*batch");
  CHECK(j["totals"]["params"] == 11684712);  // params do not depend on the batch
  bool warned = false;
  for (const auto& w : j["warnings"]) warned = warned || w.get<std::string>().find("--dim") != std::string::npos;
  CHECK(warned);
}
