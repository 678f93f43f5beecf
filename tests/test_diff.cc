// tests/test_diff.cc — `flopwise diff` on the bundled variant pairs (models/README.md):
// resnet18 vs resnet34 and bert (4 layers) vs bert6 (6 layers). Every delta the diff reports must equal
// the difference of the two single-model reports, computed here independently from two separate
// `flopwise MODEL --format json` runs; scopes only in B must be exactly the added ones (no renames).
// The last cases check the alignment at scale: generated chains of 1000 renamed blocks (aligned by the
// LCS table, by Myers and approximately) and synthetic reports with the approximate path forced.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include "cli_util.h"
#include "flopwise/diff.h"
#include "flopwise/report_io.h"
#include "onnx_builder.h"  // bench/: graph-only ONNX protos

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
  flopwise::AnalysedReport rep = flopwise::parse_report_json(r.dump(), "r18.json");
  CHECK(rep.totals.macs.v == r.at("totals").at("macs").get<int64_t>());
  CHECK(rep.op_types.size() == r.at("op_types").size());
  CHECK(rep.nodes.size() == r.at("nodes").size());
  flopwise::Diff d = flopwise::diff_reports(rep, rep);
  for (const auto& e : d.scopes) CHECK(e.status == flopwise::DiffStatus::Same);
  CHECK(d.delta.get("flops") == int64_t{0});
  CHECK(d.shape_changes.empty());
}

// --- Alignment at scale (DiffOptions::exact_align_cells) ---------------------------------------------

namespace {

// A chain of blocks named as torch.onnx.export names them: /PREFIX.i/mlp/MatMul, /PREFIX.i/ACT, input
// X [1, 8]. acts[i] is block i's activation, so blocks with equal activations have equal op signatures.
// Weights are external data that is never written (flopwise reads the graph only).
std::string block_chain_model(const std::string& prefix, const std::vector<std::string>& acts) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* os = m.add_opset_import();
  os->set_domain("");
  os->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name(prefix);
  flopwise_bench::add_io(g, "X", {"1", "8"}, false);
  flopwise_bench::Builder b{g};
  std::string x = "X";
  for (size_t i = 0; i < acts.size(); ++i) {
    std::string s = "/" + prefix + "." + std::to_string(i), w = prefix + "." + std::to_string(i);
    auto mm = b.node(s + "/mlp/MatMul", "MatMul", {x, b.weight(w + ".weight", {8, 8})});
    x = b.node(s + "/" + acts[i], acts[i], {mm});
  }
  g->add_output()->set_name(x);
  return m.SerializeAsString();
}

// A is blocks.0 .. blocks.n-1 then a Tanh block; B is a Tanh block then layers.1 .. layers.n, the same
// blocks renamed and shifted by one. The complete alignment: blocks.i -> layers.(i+1), each with its
// mlp; only layers.0 added and blocks.n removed.
void check_shifted_alignment(const json& d, int n) {
  int paired = 0;
  for (const auto& e : d.at("scopes")) {
    std::string name = e.at("name"), status = e.at("status");
    CAPTURE(name);
    if (status == "added") {
      CHECK((name == "layers.0" || name == "layers.0.mlp"));
    } else if (status == "removed") {
      CHECK((name == "blocks." + std::to_string(n) || name == "blocks." + std::to_string(n) + ".mlp"));
    } else {
      REQUIRE(e.contains("a_name"));
      std::string a = e.at("a_name");
      size_t dot = a.find('.', 7);  // "blocks.17.mlp": the index ends at the second dot
      std::string tail = dot == std::string::npos ? "" : a.substr(dot);
      int i = std::stoi(a.substr(7, dot == std::string::npos ? std::string::npos : dot - 7));
      CHECK(name == "layers." + std::to_string(i + 1) + tail);
      CHECK(status == "same");
      ++paired;
    }
  }
  CHECK(paired == 2 * n);
}

}  // namespace

TEST_CASE("diff: 1000 renamed, shifted blocks align completely by table, by Myers and approximately") {
  // 1001 x 1001 children unmatched by name under the root. The default budget fits the exact LCS table;
  // 2^16 steps do not, but Myers' algorithm (2 edits) fits; 0 forces the approximate path. All three
  // pair every block, and the deltas are the single reports' differences.
  const int n = 1000;
  std::vector<std::string> acts;
  for (int i = 0; i < n; ++i) acts.push_back(i % 3 == 2 ? "Sigmoid" : "Relu");
  std::vector<std::string> a_acts = acts, b_acts = acts;
  a_acts.push_back("Tanh");
  b_acts.insert(b_acts.begin(), "Tanh");
  fs::path pa = diff_tmp() / "blocks.onnx", pb = diff_tmp() / "layers.onnx";
  std::ofstream(pa, std::ios::binary) << block_chain_model("blocks", a_acts);
  std::ofstream(pb, std::ios::binary) << block_chain_model("layers", b_acts);
  Run ja = cli("\"" + pa.string() + "\" --format json"), jb = cli("\"" + pb.string() + "\" --format json");
  REQUIRE(ja.code == 0);
  REQUIRE(jb.code == 0);
  json ra = json::parse(ja.out), rb = json::parse(jb.out);
  // The diff of the saved reports (what `flopwise diff a.json b.json` computes).
  flopwise::AnalysedReport a = flopwise::parse_report_json(ja.out, "blocks.json");
  flopwise::AnalysedReport b = flopwise::parse_report_json(jb.out, "layers.json");
  auto diff = [&](int64_t cells) {
    flopwise::DiffOptions o;
    o.exact_align_cells = cells;
    return flopwise::diff_reports(a, b, o);
  };
  auto pairing = [](const flopwise::Diff& d) {
    std::vector<std::string> v;
    for (const auto& e : d.scopes) v.push_back(e.a_name + " -> " + e.name + " " + status_name(e.status));
    return v;
  };
  flopwise::Diff table = diff(flopwise::DiffOptions{}.exact_align_cells), myers = diff(1 << 16),
                 approx = diff(0);
  CHECK(table.warnings.empty());
  CHECK(myers.warnings.empty());
  REQUIRE(approx.warnings.size() == 1);
  CHECK(approx.warnings[0].find("approximate under (root) (1001 vs 1001 children)") != std::string::npos);

  std::ostringstream os;
  flopwise::write_diff_json(os, approx, {});
  json f = json::parse(os.str());
  check_against_reports(f, ra, rb);  // totals' and every scope's deltas = the single reports' differences
  check_shifted_alignment(f, n);
  CHECK(pairing(table) == pairing(approx));
  CHECK(pairing(myers) == pairing(approx));
}

namespace {

// A report whose root has one child scope per entry of `ops`, "PREFIX<i>", holding one node of op
// "Op<ops[i]>" and params i + 1.
flopwise::AnalysedReport flat_report(const std::vector<int>& ops, const std::string& prefix) {
  flopwise::AnalysedReport r;
  r.scopes = std::make_unique<flopwise::ScopeNode>();
  for (size_t i = 0; i < ops.size(); ++i) {
    auto c = std::make_unique<flopwise::ScopeNode>();
    c->name = c->label = prefix + std::to_string(i);
    c->depth = 1;
    c->cost.params = static_cast<int64_t>(i + 1);
    r.scopes->cost.params += c->cost.params;
    r.scopes->children.push_back(std::move(c));
    flopwise::NodeReport n;
    n.name = r.strings.add(prefix + "_n" + std::to_string(i));
    n.op = r.strings.intern("Op" + std::to_string(ops[i]));
    n.scope = r.strings.intern(prefix + std::to_string(i));
    r.nodes.push_back(std::move(n));
  }
  r.totals = r.scopes->cost;
  return r;
}

// Checks that the pairs of a diff of flat_report(a, "a") and flat_report(b, "b") are a common
// subsequence (equal ops, increasing in both), every scope listed once with its own figures; returns
// how many pairs.
size_t check_common_subsequence(const flopwise::Diff& d, const std::vector<int>& a,
                                const std::vector<int>& b) {
  std::vector<int> seen_a(a.size()), seen_b(b.size());
  std::vector<std::pair<size_t, size_t>> pairs;
  for (const auto& e : d.scopes) {
    CAPTURE(e.name);
    std::string an = e.a_name.empty() ? e.name : e.a_name;
    if (e.a) {
      size_t i = std::stoul(an.substr(1));
      ++seen_a[i];
      CHECK(e.a->get("params") == static_cast<int64_t>(i + 1));
    }
    if (e.b) {
      size_t j = std::stoul(e.name.substr(1));
      ++seen_b[j];
      CHECK(e.b->get("params") == static_cast<int64_t>(j + 1));
    }
    if (e.a && e.b) pairs.push_back({std::stoul(an.substr(1)), std::stoul(e.name.substr(1))});
  }
  for (int s : seen_a) CHECK(s == 1);
  for (int s : seen_b) CHECK(s == 1);
  std::sort(pairs.begin(), pairs.end());
  for (size_t k = 0; k < pairs.size(); ++k) {
    CHECK(a[pairs[k].first] == b[pairs[k].second]);
    if (k > 0) CHECK(pairs[k].second > pairs[k - 1].second);
  }
  return pairs.size();
}

size_t lcs_length(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<size_t> row(b.size() + 1, 0), next(b.size() + 1, 0);
  for (size_t i = a.size(); i-- > 0;) {
    for (size_t j = b.size(); j-- > 0;)
      next[j] = a[i] == b[j] ? row[j + 1] + 1 : std::max(row[j], next[j + 1]);
    std::swap(row, next);
  }
  return row[0];
}

}  // namespace

TEST_CASE("diff: forced approximate alignment is a common subsequence; Myers' chunks keep it optimal") {
  std::mt19937 rng(7);
  flopwise::DiffOptions forced;
  forced.exact_align_cells = 0;
  auto approximate_warning = [](const flopwise::Diff& d) {
    return d.warnings.size() == 1 && d.warnings[0].find("approximate under (root)") != std::string::npos;
  };

  SUBCASE("few edits, three signatures: the Myers chunks find an LCS") {
    std::vector<int> a(800), b;
    for (int& x : a) x = static_cast<int>(rng() % 3);
    for (int x : a) {  // ~5% inserted, removed or replaced
      unsigned r = rng() % 60;
      if (r == 0) b.push_back(7), b.push_back(x);
      if (r == 1) continue;
      b.push_back(r == 2 ? 8 : x);
    }
    flopwise::Diff d = flopwise::diff_reports(flat_report(a, "a"), flat_report(b, "b"), forced);
    CHECK(approximate_warning(d));
    CHECK(check_common_subsequence(d, a, b) == lcs_length(a, b));
    CHECK(d.delta.get("params") == *d.b.get("params") - *d.a.get("params"));
  }
  SUBCASE("a shuffle of unique signatures: past the chunks' budget, anchors pair an increasing chain") {
    std::vector<int> a(1500), b;
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int>(i);
    b = a;
    std::shuffle(b.begin(), b.end(), rng);
    flopwise::Diff d = flopwise::diff_reports(flat_report(a, "a"), flat_report(b, "b"), forced);
    CHECK(approximate_warning(d));
    size_t paired = check_common_subsequence(d, a, b);
    CHECK(paired > 0);
    CHECK(paired <= lcs_length(a, b));
    CHECK(d.delta.get("params") == int64_t{0});  // the same scopes, reordered
  }
}
