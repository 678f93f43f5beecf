// tests/test_order.cc — unsorted graphs (fp16 converters write them; ONNX Runtime runs them): analysed in
// dependency order, so a copy of every bundled model with its nodes shuffled reports what the original does,
// and a true cycle is one error naming its nodes.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <map>
#include <random>

#include "cli_util.h"
#include "flopwise/cost.h"
#include "flopwise/errors.h"
#include "flopwise/infer.h"
#include "flopwise/onnx_import.h"
#include "onnx_tiny.h"

namespace {

flopwise::Report analyse_bytes(const std::string& bytes, const std::string& path) {
  flopwise::Model m = flopwise::import_onnx_bytes(bytes, path);
  auto inferred = flopwise::infer_shapes(m);
  return flopwise::build_report(m, std::move(inferred));
}

void index_scopes(const flopwise::ScopeNode& s, std::map<std::string, const flopwise::ScopeNode*>& out) {
  out[s.name] = &s;
  for (const auto& c : s.children) index_scopes(*c, out);
}

bool same(const flopwise::Totals& a, const flopwise::Totals& b) {
  return a.params == b.params && a.macs == b.macs && a.flops == b.flops && a.memory_bytes == b.memory_bytes &&
         a.buffers == b.buffers && a.uncounted == b.uncounted;
}

}  // namespace

TEST_CASE("unsorted graphs: every bundled model with its nodes shuffled reports what the original does") {
  for (const char* name :
       {"resnet18.onnx", "resnet34.onnx", "mobilenet_v2.onnx", "bert.onnx", "bert6.onnx", "gpt2.onnx",
        "shipped/llama_mha.onnx", "shipped/llama_gqa.onnx", "shipped/constant_weights.onnx",
        "shipped/dynamic_quant.onnx", "shipped/qdq.onnx"}) {
    CAPTURE(name);
    std::string path = fwtest::model_path(name), bytes = fwtest::slurp(path);
    onnx::ModelProto m;
    REQUIRE(m.ParseFromString(bytes));
    std::vector<onnx::NodeProto> nodes(m.graph().node().begin(), m.graph().node().end());
    std::shuffle(nodes.begin(), nodes.end(), std::mt19937(7));
    m.mutable_graph()->clear_node();
    for (auto& n : nodes) *m.mutable_graph()->add_node() = n;
    flopwise::Report a = analyse_bytes(bytes, path), b = analyse_bytes(m.SerializeAsString(), path);
    // The same figures everywhere; the order of nodes in the report is the dependency order found.
    CHECK(same(a.totals, b.totals));
    REQUIRE(a.by_dtype.size() == b.by_dtype.size());
    for (size_t i = 0; i < a.by_dtype.size(); ++i) {
      CHECK(a.by_dtype[i].dtype == b.by_dtype[i].dtype);
      CHECK(a.by_dtype[i].params == b.by_dtype[i].params);
      CHECK(a.by_dtype[i].macs == b.by_dtype[i].macs);
    }
    REQUIRE(a.nodes.size() == b.nodes.size());
    std::map<std::string, const flopwise::NodeReport*, std::less<>> by_name;
    for (const auto& n : a.nodes) by_name[std::string(n.name)] = &n;
    for (const auto& n : b.nodes) {
      CAPTURE(n.name);
      REQUIRE(by_name.count(n.name));
      const flopwise::NodeReport* an = by_name.find(n.name)->second;
      CHECK(same(an->cost, n.cost));
      CHECK(an->outputs == n.outputs);
    }
    std::map<std::string, const flopwise::ScopeNode*> sa, sb;
    index_scopes(*a.scopes, sa);
    index_scopes(*b.scopes, sb);
    REQUIRE(sa.size() == sb.size());
    for (const auto& [k, s] : sa) {
      const auto& k_ = k;  // clang 14 cannot capture a structured binding
      CAPTURE(k_);
      REQUIRE(sb.count(k));
      CHECK(same(s->cost, sb[k]->cost));
    }
    // Said once; the original says nothing of it.
    auto said = [](const flopwise::Report& r) {
      return std::count_if(r.warnings.begin(), r.warnings.end(), [](const std::string& w) {
        return w.find("not in topological order") != std::string::npos;
      });
    };
    CHECK(said(a) == 0);
    CHECK(said(b) == 1);
    for (const auto& w : b.warnings) CHECK(w.find("never defined") == std::string::npos);
  }
}

TEST_CASE("unsorted graphs: a true cycle is one error naming the nodes on it, exit 2") {
  onnx::ModelProto m = fwtest::tiny_model();
  auto* g = m.mutable_graph();
  fwtest::tiny_input(g, "X", onnx::TensorProto::FLOAT, {"4"});
  fwtest::tiny_node(g, "first", "Add", {"X", "b"}, {"a"});
  fwtest::tiny_node(g, "second", "Relu", {"a"}, {"b"});
  fwtest::tiny_node(g, "last", "Relu", {"a"}, {"Y"});
  g->add_output()->set_name("Y");
  CHECK_THROWS_WITH_AS(analyse_bytes(m.SerializeAsString(), "cycle.onnx"),
                       doctest::Contains("cycle: 2 nodes wait on each other ('first', 'second')"),
                       flopwise::InputError);
  auto dir = fwtest::scratch_dir("order");
  std::string file = (dir / "cycle.onnx").string();
  std::ofstream(file, std::ios::binary) << m.SerializeAsString();
  fwtest::CliRun r = fwtest::run_cli(file, dir);
  CHECK(r.code == 2);
  CHECK(r.err.find("cycle") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("opset imports of domains no node uses are not warned about; a used unknown domain is") {
  auto model = [](bool use) {
    onnx::ModelProto m = fwtest::tiny_model();
    auto* extra = m.add_opset_import();
    extra->set_domain("com.example.custom");
    extra->set_version(1);
    auto* g = m.mutable_graph();
    fwtest::tiny_input(g, "X", onnx::TensorProto::FLOAT, {"4"});
    fwtest::tiny_node(g, "n", use ? "MyOp" : "Relu", {"X"}, {"Y"}, use ? "com.example.custom" : "");
    g->add_output()->set_name("Y");
    return m.SerializeAsString();
  };
  auto mentions = [](const flopwise::Report& r) {
    return std::count_if(r.warnings.begin(), r.warnings.end(), [](const std::string& w) {
      return w.find("com.example.custom") != std::string::npos;
    });
  };
  CHECK(mentions(analyse_bytes(model(false), "unused.onnx")) == 0);
  CHECK(mentions(analyse_bytes(model(true), "used.onnx")) == 1);
}
