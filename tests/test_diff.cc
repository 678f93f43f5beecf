// tests/test_diff.cc — `flopwise diff` on the bundled variant pairs (models/README.md):
// resnet18 vs resnet34 and bert (4 layers) vs bert6 (6 layers). Every delta the diff reports must equal
// the difference of the two single-model reports, computed here independently from two separate
// `flopwise MODEL --format json` runs; scopes only in B must be exactly the added ones (no renames).
#include <doctest/doctest.h>

#include "cli_util.h"
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "flopwise/diff.h"
#include "flopwise/report_io.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

fs::path diff_tmp() { return fwtest::scratch_dir("diff"); }

std::string model(const std::string& name) {
  return (fs::path(FLOPWISE_SOURCE_DIR) / "models" / name).string();
}

using Run = fwtest::CliRun;

Run cli(const std::string& args) { return fwtest::run_cli(args, diff_tmp()); }

json run_json(const std::string& args) {
  Run r = cli(args);
  REQUIRE_MESSAGE(r.code == 0, args << ": " << r.err);
  return json::parse(r.out);
}

void flatten(const json& s, std::map<std::string, json>& out) {
  if (!s.at("name").get<std::string>().empty()) out[s.at("name").get<std::string>()] = s;
  for (const auto& c : s.at("children")) flatten(c, out);
}

// b - a from the single-model reports; null when either is null. `a`/`b` may be null (absent side = 0).
json minus(const json& b, const json& a, const std::string& key) {
  json vb = b.is_null() ? json(0) : b.at(key), va = a.is_null() ? json(0) : a.at(key);
  if (vb.is_null() || va.is_null()) return nullptr;
  return vb.get<int64_t>() - va.get<int64_t>();
}

const char* const kScopeKeys[] = {"params", "macs", "flops", "memory_bytes", "uncounted_nodes"};
const char* const kOpKeys[] = {"count", "params", "macs", "flops", "memory_bytes"};
const char* const kTotalKeys[] = {"params",       "buffers",        "macs",           "flops",
                                  "memory_bytes", "backward_flops", "uncounted_nodes"};

// Checks a flopwise.diff/1 document against the two single-model reports ra, rb. Returns the names of
// the added scopes.
std::set<std::string> check_against_reports(const json& d, const json& ra, const json& rb) {
  CHECK(d.at("schema") == "flopwise.diff/1");
  for (const char* k : kTotalKeys) {
    CAPTURE(k);
    CHECK(d.at("a").at(k) == ra.at("totals").at(k));
    CHECK(d.at("b").at(k) == rb.at("totals").at(k));
    CHECK(d.at("delta").at(k) == minus(rb.at("totals"), ra.at("totals"), k));
  }
  std::map<std::string, json> sa, sb;
  flatten(ra.at("scopes"), sa);
  flatten(rb.at("scopes"), sb);
  std::set<std::string> seen_a, seen_b, added;
  int64_t last = INT64_MAX;
  for (const auto& e : d.at("scopes")) {
    std::string name = e.at("name"), status = e.at("status");
    std::string a_name = e.value("a_name", name);
    CAPTURE(name);
    // Sorted by largest |delta flops| first.
    int64_t mag =
        e.at("delta").at("flops").is_null() ? 0 : std::llabs(e.at("delta").at("flops").get<int64_t>());
    CHECK(mag <= last);
    last = mag;
    json a = status == "added" ? json(nullptr) : sa.at(a_name);
    json b = status == "removed" ? json(nullptr) : sb.at(name);
    if (!a.is_null()) CHECK(seen_a.insert(a_name).second);
    if (!b.is_null()) CHECK(seen_b.insert(name).second);
    if (status == "added") added.insert(name);
    for (const char* k : kScopeKeys) {
      CAPTURE(k);
      CHECK(e.at("delta").at(k) == minus(b, a, k));
      if (!a.is_null()) CHECK(e.at("a").at(k) == a.at(k));
      if (!b.is_null()) CHECK(e.at("b").at(k) == b.at(k));
    }
    bool equal = !a.is_null() && !b.is_null();
    for (const char* k : kScopeKeys) equal = equal && a.at(k) == b.at(k);
    if (!a.is_null() && !b.is_null()) CHECK(status == (equal ? "same" : "changed"));
  }
  CHECK(seen_a.size() == sa.size());  // every scope of both sides listed once
  CHECK(seen_b.size() == sb.size());

  std::map<std::string, json> oa, ob;
  for (const auto& o : ra.at("op_types")) oa[o.at("op")] = o;
  for (const auto& o : rb.at("op_types")) ob[o.at("op")] = o;
  size_t listed = 0;
  for (const auto& e : d.at("op_types")) {
    std::string op = e.at("name"), status = e.at("status");
    CAPTURE(op);
    json a = oa.count(op) ? oa.at(op) : json(nullptr), b = ob.count(op) ? ob.at(op) : json(nullptr);
    CHECK(status == (a.is_null() ? "added" : b.is_null() ? "removed" : status));
    for (const char* k : kOpKeys) CHECK(e.at("delta").at(k) == minus(b, a, k));
    ++listed;
  }
  std::set<std::string> all_ops;
  for (const auto& [k, v] : oa) all_ops.insert(k);
  for (const auto& [k, v] : ob) all_ops.insert(k);
  CHECK(listed == all_ops.size());
  return added;
}

// Scopes only in B, by name (computed from the single reports).
std::set<std::string> only_in(const json& rb, const json& ra) {
  std::map<std::string, json> sa, sb;
  flatten(ra.at("scopes"), sa);
  flatten(rb.at("scopes"), sb);
  std::set<std::string> out;
  for (const auto& [n, s] : sb)
    if (!sa.count(n)) out.insert(n);
  return out;
}

struct Pair {
  const char* a;
  const char* b;
  const char* dims;
  std::set<std::string> added_roots;  // subtrees B adds
};

const Pair kPairs[] = {
    // resnet34 has 3,4,6,3 basic blocks per stage where resnet18 has 2,2,2,2.
    {"resnet18.onnx",
     "resnet34.onnx",
     "--dim batch=1",
     {"layer1.2", "layer2.2", "layer2.3", "layer3.2", "layer3.3", "layer3.4", "layer3.5", "layer4.2"}},
    // bert6 adds encoder layers 4 and 5.
    {"bert.onnx", "bert6.onnx", "--dim batch=1 --dim seq=64", {"encoder.layer.4", "encoder.layer.5"}},
};

}  // namespace

TEST_CASE("diff: every delta equals the difference of the two single-model reports") {
  for (const auto& p : kPairs) {
    CAPTURE(p.b);
    json ra = run_json("\"" + model(p.a) + "\" " + p.dims + " --format json");
    json rb = run_json("\"" + model(p.b) + "\" " + p.dims + " --format json");
    json d = run_json("diff \"" + model(p.a) + "\" \"" + model(p.b) + "\" " + p.dims + " --format json");
    std::set<std::string> added = check_against_reports(d, ra, rb);
    // Added = exactly the scopes B has and A lacks (the new blocks and everything inside them).
    CHECK(added == only_in(rb, ra));
    CHECK(only_in(ra, rb).empty());
    for (const auto& root : p.added_roots) CHECK(added.count(root) == 1);
    for (const auto& n : added) {
      bool under_root = false;
      for (const auto& root : p.added_roots) under_root |= n == root || n.rfind(root + ".", 0) == 0;
      CHECK_MESSAGE(under_root, n);
    }
    for (const auto& e : d.at("scopes")) {
      CHECK(e.at("status") != "removed");
      CHECK_FALSE(e.contains("a_name"));  // no renames: names line up
    }

    // The same diff from saved reports (and a mix of report and model) gives identical numbers.
    fs::path ja = diff_tmp() / "a.json", jb = diff_tmp() / "b.json";
    std::ofstream(ja) << ra.dump();
    std::ofstream(jb) << rb.dump();
    json d2 = run_json("diff \"" + ja.string() + "\" \"" + jb.string() + "\" --format json");
    json d3 = run_json("diff \"" + ja.string() + "\" \"" + model(p.b) + "\" " + p.dims + " --format json");
    CHECK(d2.at("scopes") == d.at("scopes"));
    CHECK(d2.at("op_types") == d.at("op_types"));
    CHECK(d3.at("delta") == d.at("delta"));
    CHECK(d3.at("scopes") == d.at("scopes"));
  }
}

TEST_CASE("diff: text and markdown name the added blocks; --top limits the JSON") {
  Run t =
      cli("diff \"" + model("bert.onnx") + "\" \"" + model("bert6.onnx") + "\" --dim batch=1 --dim seq=64");
  REQUIRE(t.code == 0);
  CHECK(t.out.find("added: encoder.layer.4, encoder.layer.5") != std::string::npos);
  CHECK(t.out.find("+50.00%") != std::string::npos);  // MACs: 6/4 layers, all MACs are in the encoder
  Run m = cli("diff \"" + model("resnet18.onnx") + "\" \"" + model("resnet34.onnx") +
              "\" --dim batch=1 --format markdown --top 3");
  REQUIRE(m.code == 0);
  CHECK(m.out.rfind("### flopwise diff", 0) == 0);
  CHECK(m.out.find("| `layer3` | changed |") != std::string::npos);  // the largest change: 2 -> 6 blocks
  json d = run_json("diff \"" + model("resnet18.onnx") + "\" \"" + model("resnet34.onnx") +
                    "\" --dim batch=1 --format json --top 3");
  CHECK(d.at("scopes").size() == 3);
  CHECK(d.at("scopes")[0].at("name") == "layer3");
}

TEST_CASE("diff: renamed blocks align by position and op signature") {
  json ra = run_json("\"" + model("bert.onnx") + "\" --dim batch=1 --dim seq=64 --format json");
  json rb = run_json("\"" + model("bert6.onnx") + "\" --dim batch=1 --dim seq=64 --format json");
  // Rename every scope under a prefix (scope names, labels and the nodes' scopes) in a saved report.
  auto rename = [](json r, const std::string& from, const std::string& to) {
    auto fix = [&](std::string s) { return s.rfind(from, 0) == 0 ? to + s.substr(from.size()) : s; };
    std::function<void(json&)> walk = [&](json& s) {
      std::string old = s.at("name");
      s["name"] = fix(old);
      if (old == from.substr(0, from.size() - 1) || old.rfind(from, 0) == 0) {
        std::string l = s.at("label");
        if (l.rfind("layer.", 0) == 0) s["label"] = "block." + l.substr(6);
      }
      for (auto& c : s.at("children")) walk(c);
    };
    walk(r.at("scopes"));
    for (auto& n : r.at("nodes")) n["scope"] = fix(n.at("scope"));
    return r;
  };
  fs::path ja = diff_tmp() / "bert.json", jr = diff_tmp() / "bert_renamed.json",
           j6r = diff_tmp() / "bert6_renamed.json";
  std::ofstream(ja) << ra.dump();
  std::ofstream(jr) << rename(ra, "encoder.layer.", "encoder.block.").dump();
  std::ofstream(j6r) << rename(rb, "encoder.layer.", "encoder.block.").dump();

  SUBCASE("same model, blocks renamed: everything aligns, nothing added or removed") {
    json d = run_json("diff \"" + ja.string() + "\" \"" + jr.string() + "\" --format json");
    int renamed = 0;
    for (const auto& e : d.at("scopes")) {
      CAPTURE(e.at("name"));
      CHECK(e.at("status") == "same");
      if (e.contains("a_name")) {
        ++renamed;
        CHECK(e.at("a_name").get<std::string>().rfind("encoder.layer.", 0) == 0);
        CHECK(e.at("name").get<std::string>().rfind("encoder.block.", 0) == 0);
      }
    }
    std::map<std::string, json> sa;
    flatten(ra.at("scopes"), sa);
    CHECK(d.at("scopes").size() == sa.size());
    int under_layers = 0;
    for (const auto& [n, s] : sa) under_layers += n.rfind("encoder.layer.", 0) == 0;
    CHECK(renamed == under_layers);
  }
  SUBCASE("4 -> 6 layers under new names: 4 align in order, the last 2 are added") {
    json d = run_json("diff \"" + ja.string() + "\" \"" + j6r.string() + "\" --format json");
    std::set<std::string> added_roots, removed;
    for (const auto& e : d.at("scopes")) {
      if (e.at("status") == "removed") removed.insert(e.at("name").get<std::string>());
      if (e.at("status") == "added") {
        std::string n = e.at("name");
        if (n.find('.', std::string("encoder.block.").size()) == std::string::npos) added_roots.insert(n);
      }
      if (e.contains("a_name")) {  // aligned in order: layer.i -> block.i
        std::string a = e.at("a_name"), b = e.at("name");
        CHECK(a.substr(std::string("encoder.layer.").size()) ==
              b.substr(std::string("encoder.block.").size()));
      }
    }
    CHECK(removed.empty());
    CHECK(added_roots == std::set<std::string>{"encoder.block.4", "encoder.block.5"});
  }
}

TEST_CASE("diff: output shape changes and bad input") {
  // Same model at two batch sizes: the graph output's shape changes (1x64x128 -> 2x64x128).
  json r1 = run_json("\"" + model("bert.onnx") + "\" --dim batch=1 --dim seq=64 --format json");
  json r2 = run_json("\"" + model("bert.onnx") + "\" --dim batch=2 --dim seq=64 --format json");
  fs::path j1 = diff_tmp() / "b1.json", j2 = diff_tmp() / "b2.json";
  std::ofstream(j1) << r1.dump();
  std::ofstream(j2) << r2.dump();
  json d = run_json("diff \"" + j1.string() + "\" \"" + j2.string() + "\" --format json");
  bool found = false;
  for (const auto& s : d.at("shape_changes"))
    if (s.at("kind") == "output" && s.at("name") == "last_hidden_state") {
      found = true;
      CHECK(s.at("a") == "1x64x128");
      CHECK(s.at("b") == "2x64x128");
    }
  CHECK(found);
  CHECK(d.at("delta").at("macs") == r1.at("totals").at("macs"));  // batch 2 doubles the MACs

  CHECK(cli("diff \"" + model("bert.onnx") + "\" /nonexistent/x.onnx").code == 2);
  CHECK(cli("diff \"" + model("bert.onnx") + "\"").code == 2);  // B missing
  fs::path bad = diff_tmp() / "bad.json";
  std::ofstream(bad) << R"({"schema": "something/else"})";
  Run r = cli("diff \"" + bad.string() + "\" \"" + j1.string() + "\"");
  CHECK(r.code == 2);
  CHECK(r.err.find("flopwise.report/1") != std::string::npos);
}

TEST_CASE("diff: the report reader round-trips totals, scopes and op types") {
  json r = run_json("\"" + model("resnet18.onnx") + "\" --dim batch=1 --format json");
  flopwise::Report rep = flopwise::parse_report_json(r.dump(), "r18.json");
  CHECK(rep.totals.macs.v == r.at("totals").at("macs").get<int64_t>());
  CHECK(rep.op_types.size() == r.at("op_types").size());
  CHECK(rep.nodes.size() == r.at("nodes").size());
  flopwise::Diff d = flopwise::diff_reports(rep, rep);
  for (const auto& e : d.scopes) CHECK(e.status == flopwise::DiffStatus::Same);
  CHECK(d.delta.get("flops") == int64_t{0});
  CHECK(d.shape_changes.empty());
}
