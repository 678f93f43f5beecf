// tests/test_html.cc — --format html in a real browser: Debian's chromium, headless. The page's own #selftest
// mode clicks the largest cell that has children and writes what it drew (cells, their areas and values, the
// zoom) into <pre id="selftest">, which --dump-dom returns; the areas are checked against the JSON report's
// FLOPs. A screenshot is saved as a test artefact (BUILD/html_report.png).
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>

#include "cli_util.h"

using namespace fwtest;
using json = nlohmann::json;

namespace {

std::string chromium() {
  for (const char* c : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (fs::exists(c)) return c;
  return "";
}

// The page after its scripts ran; "" when the browser failed.
std::string dump_dom(const std::string& url, const fs::path& dir) {
  std::string out = (dir / "dom.html").string();
  std::string cmd = "timeout 120 " + chromium() +
                    " --headless --no-sandbox --disable-gpu --user-data-dir=" + (dir / "profile").string() +
                    " --window-size=1280,1000 --dump-dom '" + url + "' > " + out + " 2> " +
                    (dir / "chromium.log").string();
  if (std::system(cmd.c_str()) != 0) return "";
  return slurp(out);
}

json selftest(const std::string& dom) {
  std::smatch m;
  REQUIRE_MESSAGE(std::regex_search(dom, m, std::regex("<pre id=\"selftest\"[^>]*>([^<]*)</pre>")),
                  "no selftest output in the page");
  std::string text = m[1].str();
  for (auto [from, to] :
       {std::pair<std::string, std::string>{"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}})
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  return json::parse(text);
}

// A page drawn by `metric` (#selftest-METRIC): no errors, each top cell's value the report's figure for its
// scope (`want`), its area in proportion to its value.
void check_cells_sized_by(const json& st, const std::string& metric,
                          const std::map<std::string, double>& want) {
  CHECK(st["errors"].empty());
  CHECK(st["metric"] == metric);
  REQUIRE(!st["before"].empty());
  double area = 0, total = 0;
  for (const auto& c : st["before"]) area += c["area"].get<double>(), total += c["value"].get<double>();
  for (const auto& c : st["before"]) {
    CAPTURE(c["scope"]);
    CHECK(c["value"].get<double>() == doctest::Approx(want.at(c["scope"].get<std::string>())));
    CHECK(c["area"].get<double>() / area == doctest::Approx(c["value"].get<double>() / total).epsilon(1e-6));
  }
}

}  // namespace

TEST_CASE(
    "--format html: opened in headless Chromium, no errors, one treemap cell per scope sized by FLOPs, click "
    "zooms") {
  if (chromium().empty()) {
    MESSAGE("skipped: chromium is not installed (scripts/test.sh installs Debian's chromium)");
    return;
  }
  auto dir = scratch_dir("html");
  std::string model = model_path("resnet18.onnx") + " --dim batch=1";
  std::string page = (dir / "resnet18.html").string();
  REQUIRE(run_cli(model + " --format html -o " + page, dir).code == 0);
  json rep = json::parse(run_cli(model + " --format json", dir).out);

  std::string dom = dump_dom("file://" + page + "#selftest", dir);
  REQUIRE_MESSAGE(!dom.empty(), slurp(dir / "chromium.log"));
  json st = selftest(dom);
  CHECK(st["errors"].empty());
  // One cell per top-level scope with FLOPs, of the report's FLOPs, with areas in proportion.
  std::map<std::string, double> flops;
  for (const auto& c : rep["scopes"]["children"])
    if (c["flops"].get<double>() > 0) flops[c["name"].get<std::string>()] = c["flops"].get<double>();
  REQUIRE(st["before"].size() == flops.size());
  double area = 0, total = 0;
  for (const auto& c : st["before"]) area += c["area"].get<double>(), total += c["value"].get<double>();
  CHECK(area == doctest::Approx(st["map"]["w"].get<double>() * st["map"]["h"].get<double>()).epsilon(1e-6));
  for (const auto& c : st["before"]) {
    std::string s = c["scope"].get<std::string>();
    CAPTURE(s);
    CHECK(c["value"].get<double>() == flops.at(s));
    CHECK(c["area"].get<double>() / area == doctest::Approx(flops.at(s) / total).epsilon(1e-6));
  }
  // The click zoomed into the clicked scope: its children are the cells now.
  REQUIRE(st["clicked"].is_string());
  CHECK(st["zoom"] == st["clicked"]);
  size_t kids = 0;
  for (const auto& c : rep["scopes"]["children"])
    if (c["name"] == st["clicked"])
      for (const auto& k : c["children"]) kids += k["flops"].get<double>() > 0;
  CHECK(st["after"].size() == kids);
  CHECK(st["crumbs"].get<std::string>().find(st["clicked"].get<std::string>()) != std::string::npos);

  // A sweep is plotted: one point per swept value and series.
  std::string swept = (dir / "bert.html").string();
  REQUIRE(
      run_cli(model_path("bert.onnx") + " --sweep seq=16..128 --sweep batch=1 --format html -o " + swept, dir)
          .code == 0);
  std::string dom2 = dump_dom("file://" + swept + "#selftest", dir);
  CHECK(selftest(dom2)["errors"].empty());
  // Drawn circles (the page's script, also in the DOM, spells the element with a template placeholder).
  std::regex circle("<circle cx=\"[0-9]");
  size_t circles =
      std::distance(std::sregex_iterator(dom2.begin(), dom2.end(), circle), std::sregex_iterator());
  CHECK(circles == 4 * 3);  // seq 16, 32, 64, 128 x FLOPs, MACs, memory

  // The artefact to look at.
  std::string shot = binary_dir() + "/html_report.png";
  std::string cmd = "timeout 120 " + chromium() +
                    " --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir=" +
                    (dir / "profile").string() + " --window-size=1280,1000 --screenshot=" + shot +
                    " 'file://" + page + "' > /dev/null 2>&1";
  CHECK(std::system(cmd.c_str()) == 0);
  CHECK(fs::exists(shot));
}

TEST_CASE(
    "diff --format html: both models side by side in headless Chromium, every changed scope highlighted") {
  if (chromium().empty()) {
    MESSAGE("skipped: chromium is not installed (scripts/test.sh installs Debian's chromium)");
    return;
  }
  auto dir = scratch_dir("html_diff");
  std::string a = model_path("bert.onnx"), b = model_path("bert6.onnx"), page = (dir / "diff.html").string();
  REQUIRE(run_cli("diff " + a + " " + b + " --dim batch=1 --dim seq=64 --format html -o " + page, dir).code ==
          0);
  json d = json::parse(run_cli("diff " + a + " " + b + " --dim batch=1 --dim seq=64 --format json", dir).out);
  size_t changed = 0, scopes = 0;
  for (const auto& s : d["scopes"]) ++scopes, changed += s["status"] != "same";
  REQUIRE(changed > 0);  // bert6 has two more layers
  std::string dom = dump_dom("file://" + page + "#selftest", dir);
  REQUIRE_MESSAGE(!dom.empty(), slurp(dir / "chromium.log"));
  json st = selftest(dom);
  CHECK(st["errors"].empty());
  CHECK(st["rows"] == scopes);
  CHECK(st["highlighted"] == changed);
}

TEST_CASE("run --profile --format html: measured latency is a metric of the page, cells sized by it") {
  if (chromium().empty()) {
    MESSAGE("skipped: chromium is not installed (scripts/test.sh installs Debian's chromium)");
    return;
  }
  auto dir = scratch_dir("html_run");
  std::string model = model_path("resnet18.onnx"),
              prof = std::string(FLOPWISE_SOURCE_DIR) + "/models/ort/resnet18.all.json";
  std::string page = (dir / "run.html").string();
  REQUIRE(run_cli("run " + model + " --profile " + prof + " --format html -o " + page, dir).code == 0);
  json rep = json::parse(run_cli("run " + model + " --profile " + prof + " --format json", dir).out);
  std::map<std::string, double> ms;
  for (const auto& s : rep["scopes"])
    if (s["depth"] == 1) ms[s["name"].get<std::string>()] = s["latency_ms"].get<double>();
  json st = selftest(dump_dom("file://" + page + "#selftest-latency", dir));
  CHECK(st["errors"].empty());
  CHECK(st["metric"] == "latency");
  double area = 0, total = 0;
  for (const auto& c : st["before"]) area += c["area"].get<double>(), total += c["value"].get<double>();
  size_t with_time = 0;
  for (const auto& [k, v] : ms) with_time += v > 0;
  CHECK(st["before"].size() == with_time);
  for (const auto& c : st["before"]) {
    CAPTURE(c["scope"]);
    CHECK(c["value"].get<double>() == doctest::Approx(ms.at(c["scope"].get<std::string>())));
    CHECK(c["area"].get<double>() / area == doctest::Approx(c["value"].get<double>() / total).epsilon(1e-6));
  }
}

TEST_CASE(
    "--train --format html: the backward's FLOPs per scope are a metric of the page, cells sized by them") {
  if (chromium().empty()) {
    MESSAGE("skipped: chromium is not installed (scripts/test.sh installs Debian's chromium)");
    return;
  }
  auto dir = scratch_dir("html_train");
  std::string cmd = model_path("resnet18.onnx") + " --dim batch=1 --train --freeze layer1";
  std::string page = (dir / "train.html").string();
  REQUIRE(run_cli(cmd + " --format html -o " + page, dir).code == 0);
  json rep = json::parse(run_cli(cmd + " --format json", dir).out);
  std::map<std::string, double> bwd;  // the JSON report's per-scope figures
  for (const auto& s : rep["training"]["scopes"]) bwd[s["name"].get<std::string>()] = s["backward_flops"];
  check_cells_sized_by(selftest(dump_dom("file://" + page + "#selftest-bwd_flops", dir)), "bwd_flops", bwd);
  CHECK(bwd.at("layer1") > 0);  // frozen, it still passes the gradient back to the trainable stem
}

TEST_CASE(
    "--predict --format html: the predicted latency per scope is a metric of the page, cells sized by it") {
  if (chromium().empty()) {
    MESSAGE("skipped: chromium is not installed (scripts/test.sh installs Debian's chromium)");
    return;
  }
  auto dir = scratch_dir("html_predict");
  const std::string model = model_path("resnet18.onnx"), run = (dir / "run.json").string(),
                    calib = (dir / "c.json").string();
  REQUIRE(run_cli("run " + model + " --profile " + std::string(FLOPWISE_SOURCE_DIR) +
                      "/models/ort/resnet18.disabled.json --format json -o " + run,
                  dir)
              .code == 0);
  REQUIRE(run_cli("calibrate " + run + " -o " + calib, dir).code == 0);
  std::string cmd = model + " --dim batch=1 --predict " + calib;
  std::string page = (dir / "predict.html").string();
  REQUIRE(run_cli(cmd + " --format html -o " + page, dir).code == 0);
  json rep = json::parse(run_cli(cmd + " --format json", dir).out);
  std::map<std::string, double> ms;  // the JSON report's per-scope predictions
  for (const auto& s : rep["prediction"]["scopes"]) ms[s["name"].get<std::string>()] = s["ms"];
  check_cells_sized_by(selftest(dump_dom("file://" + page + "#selftest-predicted", dir)), "predicted", ms);
}
