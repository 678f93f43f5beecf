// tests/test_ort_profile.cc — flopwise run MODEL.onnx --profile: ONNX Runtime profiles (models/ort/, made by
// ORT 1.30 on CPU with models/ort/profiles.sh) mapped back onto the bundled models and rolled up by module
// scope. The profiles are read here a second time, independently (nlohmann, no flopwise code), for the sums
// they must add up to.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli_util.h"
#include "ort_util.h"

using namespace fwtest;
using json = nlohmann::json;

namespace {

const char* kModels[] = {"resnet18", "mobilenet_v2", "bert", "bert6", "gpt2"};

std::string profile_path(const std::string& model, const std::string& level) {
  return std::string(FLOPWISE_SOURCE_DIR) + "/models/ort/" + model + "." + level + ".json";
}

// Node time per run straight from the profile: the durations of the "Node" events inside each model_run.
std::vector<double> node_us_per_run(const std::string& path) {
  json doc = json::parse(slurp(path));
  const std::vector<std::pair<double, double>> runs = ort_model_runs(doc);
  std::vector<double> us(runs.size(), 0.0);
  for (const auto& e : doc) {
    if (e.value("cat", "") != "Node") continue;
    double ts = e["ts"].get<double>();
    for (size_t r = 0; r < runs.size(); ++r)
      if (ts >= runs[r].first && ts <= runs[r].second) us[r] += e["dur"].get<double>();
  }
  return us;
}

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  size_t n = xs.size();
  return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

json run_profile(const std::string& model, const std::string& level, const fs::path& dir) {
  CliRun r = run_cli(
      "run " + model_path(model + ".onnx") + " --profile " + profile_path(model, level) + " --format json",
      dir);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  return json::parse(r.out);
}

}  // namespace

TEST_CASE(
    "run --profile: every bundled model at both levels: >= 99 % attributed, scope sums equal the events") {
  auto dir = scratch_dir("ort");
  for (const char* m : kModels) {
    for (const char* level : {"disabled", "all"}) {
      CAPTURE(m);
      CAPTURE(level);
      json rep = run_profile(m, level, dir);
      const json& at = rep["attribution"];
      CHECK(at["attributed_pct"].get<double>() >= 99.0);
      // The root's time is every node event of the run (median over the measured runs: all but the first).
      std::vector<double> us = node_us_per_run(profile_path(m, level));
      REQUIRE(us.size() == 3);
      double expect_ms = median({us[1], us[2]}) / 1000.0;
      const json& root = rep["scopes"][0];
      REQUIRE(root["name"] == "");
      CHECK(root["latency_ms"].get<double>() == doctest::Approx(expect_ms).epsilon(1e-9));
      CHECK(at["node_time_ms"].get<double>() == doctest::Approx(expect_ms).epsilon(1e-9));
      CHECK(root["warmup_ms"].get<double>() == doctest::Approx(us[0] / 1000.0).epsilon(1e-9));
      // ... and the root is its direct children plus its own nodes (per run, so for the one measured
      // median here only where the two measured runs are the same shape: check run by run below).
      double children = 0;
      for (const auto& s : rep["scopes"])
        if (s["depth"] == 1) children += s["latency_ms"].get<double>();
      CHECK(children + root["self_ms"].get<double>() ==
            doctest::Approx(root["latency_ms"].get<double>()).epsilon(1e-6));
      // Per op type the same total.
      double ops = 0;
      for (const auto& o : rep["op_types"]) ops += o["latency_ms"].get<double>();
      CHECK(ops == doctest::Approx(expect_ms).epsilon(1e-6));
      // The profile's input shapes bound the model's dynamic dims: FLOPs are numbers.
      CHECK(rep["static_totals"]["complete"] == true);

      std::map<std::string, int> covered;  // original node -> kernels covering it with time
      for (const auto& k : at["kernels"]) {
        if (k["method"] == "inserted by ORT") continue;
        for (const auto& n : k["nodes"])
          if (n["share"].get<double>() > 0) ++covered[n["node"].get<std::string>()];
      }
      for (const auto& [node, count] : covered) {
        const auto& node_ = node;  // clang 14 cannot capture a structured binding
        CAPTURE(node_);
        CHECK(count == 1);  // no node's FLOPs are given time by two kernels
      }
      if (std::string(level) == "disabled") {
        // Optimisations off: every kernel is one node of the file, by name.
        for (const auto& k : at["kernels"]) {
          CAPTURE(k["kernel"]);
          CHECK(k["method"] == "name");
          REQUIRE(k["nodes"].size() == 1);
          CHECK(k["nodes"][0]["node"] == k["kernel"]);
        }
      }
    }
  }
}

TEST_CASE("run --profile: ORT's fusions map onto the nodes they replaced") {
  auto dir = scratch_dir("ort");
  auto ops_of = [](const json& rep) {  // original node name -> op type, from the static report
    std::map<std::string, std::string> m;
    for (const auto& n : rep["nodes"]) m[n["name"].get<std::string>()] = n["op"].get<std::string>();
    return m;
  };
  for (const char* m : {"bert", "gpt2"}) {
    CAPTURE(m);
    json rep = run_profile(m, "all", dir);
    CliRun st =
        run_cli(model_path(std::string(m) + ".onnx") + " --dim batch=1 --dim seq=64 --format json", dir);
    REQUIRE(st.code == 0);
    auto op = ops_of(json::parse(st.out));
    int bias_gelu = 0, scaled = 0;
    for (const auto& k : rep["attribution"]["kernels"]) {
      std::multiset<std::string> types;
      for (const auto& n : k["nodes"]) types.insert(op.at(n["node"].get<std::string>()));
      // BiasGelu = the bias Add and the erf form of GELU, x * 0.5 * (1 + erf(x / sqrt 2)): ORT's
      // BiasGeluFusion and GeluFusion patterns (onnxruntime/core/optimizer/gelu_fusion.cc).
      if (k["op"] == "BiasGelu") {
        ++bias_gelu;
        CHECK(k["method"] == "graph structure");
        CHECK(types == std::multiset<std::string>{"Add", "Add", "Div", "Erf", "Mul", "Mul"});
      }
      // MatMulScaleFusion: a MatMul and the Div by sqrt(head size) after it.
      if (k["kernel"].get<std::string>().find("MatMulScaleFusion") != std::string::npos) {
        ++scaled;
        CHECK(k["method"] == "fused-node name");
        CHECK(types == std::multiset<std::string>{"Div", "MatMul"});
      }
    }
    CHECK(bias_gelu == 4);  // one per layer (4 layers)
    CHECK(scaled == 4);     // the attention scores of each layer
  }
  // Fusions applied in turn nest their names (seen on nn.MultiheadAttention at level all:
  // "/m/MatMul_1/MatmulTransposeFusion//MatMulScaleFusion//MatmulTransposeFusion/"): the same profile with
  // one name nested so maps the same.
  {
    std::string text = slurp(profile_path("bert", "all"));
    const std::string from = "/encoder/layer.0/attention/self/MatMul/MatMulScaleFusion/_kernel_time";
    const std::string to =
        "/encoder/layer.0/attention/self/MatMul/MatmulTransposeFusion//MatMulScaleFusion//"
        "MatmulTransposeFusion/_kernel_time";
    size_t n = 0;
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()), ++n)
      text.replace(at, from.size(), to);
    REQUIRE(n == 3);  // one per run
    std::string nested = (dir / "nested.json").string();
    std::ofstream(nested) << text;
    CliRun r = run_cli("run " + model_path("bert.onnx") + " --profile " + nested + " --format json", dir);
    REQUIRE_MESSAGE(r.code == 0, r.err);
    bool found = false;
    json nested_rep = json::parse(r.out);
    for (const auto& k : nested_rep["attribution"]["kernels"])
      if (k["kernel"].get<std::string>().find("//MatMulScaleFusion//") != std::string::npos) {
        found = true;
        CHECK(k["method"] == "fused-node name");
        CHECK(k["nodes"].size() == 2);
      }
    CHECK(found);
  }
  // ResNet-18 at level all: every ORT Conv kernel (NCHWc, with activation and residual add fused in) is one
  // of the 20 Convs of the file.
  json rep = run_profile("resnet18", "all", dir);
  CliRun st = run_cli(model_path("resnet18.onnx") + " --format json", dir);
  auto op = ops_of(json::parse(st.out));
  std::set<std::string> convs;
  for (const auto& k : rep["attribution"]["kernels"]) {
    if (k["op"] != "Conv") continue;
    int n = 0;
    for (const auto& x : k["nodes"])
      if (op.at(x["node"].get<std::string>()) == "Conv") ++n, convs.insert(x["node"].get<std::string>());
    CHECK(n == 1);
  }
  CHECK(convs.size() == 20);
}

TEST_CASE("run --profile: wrong or broken profiles are one line and exit 2") {
  auto dir = scratch_dir("ort");
  std::string bert = model_path("bert.onnx");
  std::string truncated = (dir / "truncated.json").string(), object = (dir / "object.json").string(),
              no_nodes = (dir / "no_nodes.json").string();
  std::ofstream(truncated) << slurp(profile_path("bert", "all")).substr(0, 5000);
  std::ofstream(object) << R"({"traceEvents": 3})";
  std::ofstream(no_nodes) << R"([{"cat": "Session", "name": "model_run", "ts": 0, "dur": 5, "ph": "X"}])";
  struct Case {
    std::string args, says;
  };
  for (const Case& c : {Case{bert + " --profile " + profile_path("bert6", "all"), "another model"},
                        Case{bert + " --profile " + profile_path("resnet18", "disabled"), "another model"},
                        Case{bert + " --profile " + truncated, "not valid JSON"},
                        Case{bert + " --profile " + object, "not an ONNX Runtime profile"},
                        Case{bert + " --profile " + no_nodes, "no node events"},
                        Case{bert + " --profile " + (dir / "absent.json").string(), "cannot open"},
                        Case{bert + " --profile " + profile_path("bert", "all") + " --input input_ids:1x32",
                             "other shapes"}}) {
    CAPTURE(c.args);
    CliRun r = run_cli("run " + c.args, dir);
    CHECK(r.code == 2);
    CHECK(r.err.find(c.says) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("diff of two measured run reports: every delta is B - A of the two reports") {
  auto dir = scratch_dir("ort");
  std::string a = (dir / "a.json").string(), b = (dir / "b.json").string();
  // A: bert with ORT's optimisations off; B: bert6 with them on (scopes only B has, fused kernels).
  REQUIRE(run_cli("run " + model_path("bert.onnx") + " --profile " + profile_path("bert", "disabled") +
                      " --format json -o " + a,
                  dir)
              .code == 0);
  REQUIRE(run_cli("run " + model_path("bert6.onnx") + " --profile " + profile_path("bert6", "all") +
                      " --format json -o " + b,
                  dir)
              .code == 0);
  CliRun d = run_cli("diff " + a + " " + b + " --format json", dir);
  REQUIRE_MESSAGE(d.code == 0, d.err);
  json diff = json::parse(d.out), ja = json::parse(slurp(a)), jb = json::parse(slurp(b));
  CHECK(diff["schema"] == "flopwise.run-diff/1");
  auto index = [](const json& rows, const char* key) {
    std::map<std::string, json> m;
    for (const auto& r : rows) m[r[key].get<std::string>()] = r;
    return m;
  };
  auto value = [](const std::map<std::string, json>& m, const std::string& k, const char* f) {
    auto it = m.find(k);
    return it == m.end() || !it->second[f].is_number() ? 0.0 : it->second[f].get<double>();
  };
  for (const char* section : {"scopes", "op_types"}) {
    const char* key = std::string(section) == "scopes" ? "name" : "op";
    auto ma = index(ja[section], key), mb = index(jb[section], key);
    std::set<std::string> keys;
    for (const auto& [k, r] : ma) keys.insert(k);
    for (const auto& [k, r] : mb) keys.insert(k);
    CHECK(diff[section].size() == keys.size());
    for (const auto& r : diff[section]) {
      std::string k = r[key].get<std::string>();
      CAPTURE(k);
      CHECK(r["d_latency_ms"].get<double>() ==
            doctest::Approx(value(mb, k, "latency_ms") - value(ma, k, "latency_ms")).epsilon(1e-12));
      CHECK(r["d_flops"].get<double>() == doctest::Approx(value(mb, k, "flops") - value(ma, k, "flops")));
    }
    // Largest change first.
    for (size_t i = 1; i < diff[section].size(); ++i)
      CHECK(std::fabs(diff[section][i - 1]["d_latency_ms"].get<double>()) >=
            std::fabs(diff[section][i]["d_latency_ms"].get<double>()));
  }
  // Scopes only B has: encoder.layer.4 and .5.
  auto rows = index(diff["scopes"], "name");
  CHECK(rows.at("encoder.layer.5")["in"] == "B only");
  // Totals: the medians each report states.
  for (const auto& t : diff["totals"]) {
    if (t["quantity"] != "fwd_latency_ms") continue;
    CHECK(t["delta"].get<double>() ==
          doctest::Approx(jb["summary"]["fwd_latency_ms"]["median"].get<double>() -
                          ja["summary"]["fwd_latency_ms"]["median"].get<double>()));
  }
  // A run report beside a model: one line, exit 2.
  CliRun mixed = run_cli("diff " + a + " " + model_path("bert.onnx"), dir);
  CHECK(mixed.code == 2);
  CHECK(mixed.err.find("run report") != std::string::npos);
  // Text and markdown render.
  CHECK(run_cli("diff " + a + " " + b, dir).out.find("Scopes by largest latency change") !=
        std::string::npos);
  CHECK(run_cli("diff " + a + " " + b + " --format markdown", dir).out.find("| scope |") !=
        std::string::npos);
}

TEST_CASE("run --profile: torchvision models the mapping was not written against (models/ort/zoo)") {
  auto dir = scratch_dir("ort");
  const std::string zoo = std::string(FLOPWISE_SOURCE_DIR) + "/models/ort/zoo/";
  struct Case {
    std::string model, level;
  };
  for (const Case& c : {Case{"mobilenet_v3_small", "disabled"}, Case{"mobilenet_v3_small", "all"},
                        Case{"convnext_tiny", "all"}, Case{"vgg11", "all"}}) {
    CAPTURE(c.model);
    CAPTURE(c.level);
    std::string prof = zoo + c.model + "." + c.level + ".json";
    CliRun r = run_cli("run " + zoo + c.model + ".onnx --profile " + prof + " --format json", dir);
    REQUIRE_MESSAGE(r.code == 0, r.err);
    json rep = json::parse(r.out);
    CHECK(rep["attribution"]["attributed_pct"].get<double>() >= 99.0);
    std::vector<double> us = node_us_per_run(prof);
    REQUIRE(us.size() == 3);
    CHECK(rep["scopes"][0]["latency_ms"].get<double>() ==
          doctest::Approx(median({us[1], us[2]}) / 1000.0).epsilon(1e-9));
    if (c.model == "mobilenet_v3_small" && c.level == "disabled") {
      // ORT has no HardSwish kernel and runs the op's function body, HardSigmoid then Mul, as two kernels
      // with made-up names: both belong to the one HardSwish node of the file.
      std::map<std::string, int> parts;
      for (const auto& k : rep["attribution"]["kernels"]) {
        std::string name = k["kernel"].get<std::string>();
        if (name.rfind("HardSigmoid_", 0) != 0 && name.rfind("Mul_", 0) != 0) continue;
        CAPTURE(name);
        CHECK(k["method"] == "graph structure");
        REQUIRE(k["nodes"].size() == 1);
        std::string node = k["nodes"][0]["node"].get<std::string>();
        CHECK(node.find("/HardSwish") != std::string::npos);
        ++parts[node];
      }
      CHECK(parts.size() == 19);  // the 19 HardSwish activations of torchvision's mobilenet_v3_small
      for (const auto& [node, n] : parts) CHECK(n == 2);
    }
  }
}

TEST_CASE("run --profile: the provider each scope ran on; mixed providers get a column") {
  // No GPU here: the CPU profile with its Conv kernels relabelled as CUDA's, as a CUDA session that
  // falls back to CPU for the rest would write it.
  auto dir = scratch_dir("ort");
  json doc = json::parse(slurp(profile_path("resnet18", "disabled")));
  for (auto& e : doc)
    if (e.value("cat", "") == "Node" && e["args"].value("op_name", "") == "Conv")
      e["args"]["provider"] = "CUDAExecutionProvider";
  std::string mixed = (dir / "mixed.json").string();
  std::ofstream(mixed) << doc.dump();
  CliRun r = run_cli("run " + model_path("resnet18.onnx") + " --profile " + mixed + " --format json", dir);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  json rep = json::parse(r.out);
  std::map<std::string, json> rows;
  for (const auto& s : rep["scopes"]) rows[s["name"].get<std::string>()] = s;
  CHECK(rows.at("layer1.0.conv1")["providers"] == json::array({"CUDAExecutionProvider"}));
  CHECK(rows.at("layer1.0.relu")["providers"] == json::array({"CPUExecutionProvider"}));
  CHECK(rows.at("layer1.0")["providers"] == json::array({"CPUExecutionProvider", "CUDAExecutionProvider"}));
  CHECK(rep["runtime"]["providers"].size() == 2);
  CliRun text = run_cli("run " + model_path("resnet18.onnx") + " --profile " + mixed, dir);
  CHECK(text.out.find("CPU,CUDA") != std::string::npos);
}

TEST_CASE(
    "run --profile --hardware: each scope's roofline bound beside its time; a time below its bound is "
    "flagged") {
  auto dir = scratch_dir("ort_bound");
  // ORT ran these on a laptop CPU: every scope is far slower than its bound on an H100.
  CliRun fast = run_cli("run " + model_path("bert.onnx") + " --profile " + profile_path("bert", "all") +
                            " --hardware h100-sxm --format json",
                        dir);
  REQUIRE_MESSAGE(fast.code == 0, fast.err);
  json j = json::parse(fast.out);
  int bounded = 0;
  for (const auto& r : j["scopes"]) {
    if (!r.contains("bound_ms")) continue;
    ++bounded;
    CHECK_FALSE(r["below_bound"].get<bool>());
  }
  CHECK(bounded > 0);
  // A device of 1 MFLOP/s and 1 MB/s: every measured scope beats its bound, which can only be an error.
  const std::string slow = (dir / "slow.toml").string();
  std::ofstream(slow) << "name = \"abacus\"\nbandwidth_gbs = 0.001\n[peak_tflops]\nfloat32 = 0.000001\n";
  CliRun flagged = run_cli("run " + model_path("bert.onnx") + " --profile " + profile_path("bert", "all") +
                               " --hardware-file " + slow,
                           dir);
  REQUIRE_MESSAGE(flagged.code == 0, flagged.err);
  CHECK(flagged.out.find("BELOW BOUND") != std::string::npos);
  CHECK(flagged.out.find("faster than its roofline bound") != std::string::npos);
}
