// tests/test_report_json.cc — the JSON report contract (README, schema flopwise.report/1): keys, types, and
// internal consistency (nodes sum to totals, children sum to their scope, op types sum to totals). The
// streamed writer is checked byte for byte against nlohmann's dump(2) of the same document built as a DOM.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_util.h"
#include "flopwise/analysed_report.h"
#include "flopwise/cost.h"
#include "flopwise/infer.h"
#include "flopwise/json_text.h"
#include "flopwise/onnx_import.h"
#include "flopwise/writers.h"
#include "writers/json_writer.h"

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

// The reference: the whole report as an nlohmann DOM, dumped with indent 2 (write_json before it streamed).
namespace dom {
using ojson = nlohmann::ordered_json;

ojson count(const flopwise::Count& c) {
  if (c.known) return ojson(c.v);
  return c.symbolic() ? ojson(c.sym.str()) : ojson(nullptr);
}

ojson shape(const flopwise::Shape& s) {
  if (!s.rank_known) return nullptr;
  ojson a = ojson::array();
  for (const auto& d : s.dims) {
    if (d.is_known())
      a.push_back(d.value());
    else if (d.is_symbolic())
      a.push_back(d.str());
    else
      a.push_back(nullptr);
  }
  return a;
}

ojson scope(const flopwise::ScopeNode& s) {
  ojson j{{"name", s.name},
          {"label", s.label},
          {"class", s.cls.empty() ? ojson(nullptr) : ojson(s.cls)},
          {"params", count(s.cost.params)},
          {"params_held", count(s.params_held)},
          {"macs", count(s.cost.macs)},
          {"flops", count(s.cost.flops)},
          {"memory_bytes", count(s.cost.memory_bytes)},
          {"uncounted_nodes", s.cost.uncounted},
          {"complete", s.cost.complete()}};
  ojson ch = ojson::array();
  for (const auto& c : s.children) ch.push_back(scope(*c));
  j["children"] = ch;
  return j;
}

// Throws nlohmann's type_error 316 on a string that is not UTF-8.
std::string report(const flopwise::Report& r) {
  ojson j;
  j["schema"] = "flopwise.report/1";
  j["flopwise_version"] = flopwise::flopwise_version();
  ojson opsets = ojson::object();
  for (const auto& [d, v] : r.opsets) opsets[d.empty() ? "ai.onnx" : d] = v;
  j["model"] = {{"path", r.path}, {"format", r.format}, {"producer", r.producer}, {"opset", opsets}};
  j["convention"] = r.convention;
  if (!r.notes.empty()) j["notes"] = r.notes;
  auto io = [](const auto& vs) {
    ojson a = ojson::array();
    for (const auto& [name, ts] : vs)
      a.push_back({{"name", name}, {"dtype", flopwise::dtype_name(ts.first)}, {"shape", shape(ts.second)}});
    return a;
  };
  j["inputs"] = io(r.inputs);
  j["outputs"] = io(r.outputs);
  const flopwise::Totals& t = r.totals;
  j["totals"] = {{"params", count(t.params)},
                 {"buffers", count(t.buffers)},
                 {"macs", count(t.macs)},
                 {"flops", count(t.flops)},
                 {"memory_bytes", count(t.memory_bytes)},
                 {"backward_flops", count(t.backward_flops)},
                 {"uncounted_nodes", t.uncounted},
                 {"complete", t.complete()}};
  j["totals_complete"] = r.totals.complete();
  j["by_dtype"] = ojson::array();
  for (const auto& d : r.by_dtype)
    j["by_dtype"].push_back({{"dtype", flopwise::dtype_name(d.dtype)},
                             {"params", count(d.params)},
                             {"weight_bytes", count(d.weight_bytes)},
                             {"macs", count(d.macs)}});
  if (!r.branch_params.empty()) {
    j["branch_params"] = ojson::array();
    for (const auto& b : r.branch_params)
      j["branch_params"].push_back({{"node", b.node}, {"branch", b.branch}, {"params", count(b.params)}});
  }
  j["scopes"] = scope(*r.scopes);
  ojson ops = ojson::array();
  for (const auto& o : r.op_types)
    ops.push_back({{"op", o.op},
                   {"count", o.count},
                   {"macs", count(o.macs)},
                   {"flops", count(o.flops)},
                   {"params", count(o.params)},
                   {"memory_bytes", count(o.memory_bytes)}});
  j["op_types"] = ops;
  ojson nodes = ojson::array();
  for (const auto& n : r.nodes) {
    ojson outs = ojson::array();
    for (const auto& [name, s] : n.outputs)
      outs.push_back({{"name", std::string(name)}, {"shape", shape(s)}});
    nodes.push_back(
        {{"name", std::string(n.name)},
         {"op", n.domain.empty() ? std::string(n.op) : std::string(n.domain) + "::" + std::string(n.op)},
         {"scope", std::string(n.scope)},
         {"outputs", outs},
         {"params", count(n.cost.params)},
         {"macs", count(n.cost.macs)},
         {"flops", count(n.cost.flops)},
         {"memory_bytes", count(n.cost.memory_bytes)}});
  }
  j["nodes"] = nodes;
  ojson uns = ojson::array();
  for (const auto& [op, names] : r.unsupported)
    uns.push_back({{"op", op}, {"count", names.size()}, {"nodes", names}});
  j["unsupported"] = uns;
  j["warnings"] = r.warnings;
  if (!r.aliases.empty()) {
    j["dim_aliases"] = ojson::array();
    for (const auto& a : r.aliases)
      j["dim_aliases"].push_back({{"name", a.name}, {"equals", a.value.str()}, {"declared_on", a.where}});
  }
  if (!r.assumptions.empty()) {
    j["assumptions"] = ojson::array();
    for (const auto& a : r.assumptions)
      j["assumptions"].push_back({{"holds", a.text()},
                                  {"lhs", a.lhs.str()},
                                  {"rhs", a.rhs.str()},
                                  {"node", a.node},
                                  {"why", a.why}});
  }
  return j.dump(2) + "\n";
}
}  // namespace dom

std::string streamed(const flopwise::AnalysedReport& r) {
  std::ostringstream os;
  flopwise::write_json(os, r);
  return os.str();
}

flopwise::AnalysedReport report_of(flopwise::Model&& m, const flopwise::InferOptions& opts = {}) {
  flopwise::InferResult ir = flopwise::infer_shapes(m, opts);
  return flopwise::AnalysedReport(flopwise::build_report(m, std::move(ir)));
}

// x [batch, 4] -> MatMul(W 4x3) -> Relu -> my.ops::Custom (no shape function), with node and value
// names that need escaping (quotes, backslash, tab, a control byte, non-ASCII) and, when `bad_utf8`,
// one that is not UTF-8 at all.
flopwise::Model awkward_model(bool bad_utf8) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.set_producer_name("te\"st");
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(17);
  o = m.add_opset_import();
  o->set_domain("my.ops");
  o->set_version(1);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* in = g->add_input();
  in->set_name("x\"in");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("batch");
  tt->mutable_shape()->add_dim()->set_dim_value(4);
  auto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->add_dims(3);
  auto node = [&](const std::string& op, const std::string& name, std::vector<std::string> ins,
                  const std::string& out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& i : ins) n->add_input(i);
    n->add_output(out);
    return n;
  };
  node("MatMul", "/blk\"1\"/lin\\ear/MatMul", {"x\"in", "W"}, "mm\tout");
  node("Relu", bad_utf8 ? "/act\xff\xfe/Relu" : "/act\x01\u00e9/Relu", {"mm\tout"}, "r");
  node("Custom", "/cust\"om/Custom", {"r"}, "y")->set_domain("my.ops");
  g->add_output()->set_name("y");
  return flopwise::import_onnx_bytes(m.SerializeAsString(), "awk\"ward.onnx");
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
  for (const auto& w : j["warnings"])
    warned = warned || w.get<std::string>().find("--dim") != std::string::npos;
  CHECK(warned);
}

TEST_CASE("json report: streamed output is byte-identical to the DOM dump on every bundled model") {
  for (const char* name : {"resnet18", "resnet34", "mobilenet_v2", "bert", "bert6", "gpt2"}) {
    CAPTURE(name);
    const std::string path = fwtest::model_path(std::string(name) + ".onnx");
    // Unbound: symbolic counts and dims; bound: integers.
    flopwise::AnalysedReport r = report_of(flopwise::import_onnx_file(path));
    CHECK(streamed(r) == dom::report(r));
    flopwise::InferOptions bound;
    bound.dims = {{"batch", 2}, {"seq", 9}};
    r = report_of(flopwise::import_onnx_file(path), bound);
    CHECK(streamed(r) == dom::report(r));
  }
}

TEST_CASE("json report: names that need escaping; the documented structure") {
  flopwise::AnalysedReport r = report_of(awkward_model(false));
  const std::string out = streamed(r);
  CHECK(out == dom::report(r));
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(out);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"schema", "flopwise_version", "model", "convention", "inputs",
                                         "outputs", "totals", "totals_complete", "by_dtype", "scopes",
                                         "op_types", "nodes", "unsupported", "warnings"});
  CHECK(j["model"]["path"] == "awk\"ward.onnx");
  CHECK(j["model"]["producer"] == "te\"st");
  CHECK(j["model"]["opset"] == nlohmann::ordered_json{{"ai.onnx", 17}, {"my.ops", 1}});
  CHECK(j["inputs"][0]["name"] == "x\"in");
  CHECK(j["inputs"][0]["shape"] == json::array({"batch", 4}));
  CHECK(j["outputs"][0]["shape"].is_null());  // Custom has no shape function: rank unknown
  // The escapes as nlohmann writes them: \", \\, \t, \u0001; UTF-8 as is.
  CHECK(out.find(R"("/blk\"1\"/lin\\ear/MatMul")") != std::string::npos);
  CHECK(out.find(R"("mm\tout")") != std::string::npos);
  CHECK(out.find("\"/act\\u0001\u00e9/Relu\"") != std::string::npos);
  REQUIRE(j["nodes"].size() == 3);
  CHECK(j["nodes"][0]["name"] == "/blk\"1\"/lin\\ear/MatMul");
  CHECK(j["nodes"][0]["outputs"][0]["name"] == "mm\tout");
  // MatMul batch x 4 by 4 x 3: 12 MACs per row.
  CHECK(j["nodes"][0]["macs"] == "12*batch");
  CHECK(j["nodes"][2]["op"] == "my.ops::Custom");
  CHECK(j["nodes"][2]["macs"].is_null());
  CHECK(j["totals_complete"] == false);
  CHECK(j["totals"]["uncounted_nodes"] == 1);
  REQUIRE(j["unsupported"].size() == 1);
  CHECK(j["unsupported"][0]["op"] == "my.ops::Custom");
  CHECK(j["unsupported"][0]["count"] == 1);
  CHECK(j["unsupported"][0]["nodes"] == json::array({"/cust\"om/Custom"}));
  for (const auto& n : j["nodes"])
    for (const char* k : {"name", "op", "scope", "outputs", "params", "macs", "flops", "memory_bytes"})
      CHECK_MESSAGE(n.contains(k), k);
  CHECK(j["scopes"]["name"] == "");
  CHECK(j["scopes"]["class"].is_null());
  CHECK(j["scopes"]["children"].is_array());
}

TEST_CASE("json report: bytes that are not UTF-8 become U+FFFD; the report is still written") {
  flopwise::AnalysedReport r = report_of(awkward_model(true));
  CHECK_THROWS_AS(dom::report(r), nlohmann::json::type_error);  // the DOM dump refused the whole report
  std::string out;
  REQUIRE_NOTHROW(out = streamed(r));
  json j = json::parse(out);
  CHECK(j["nodes"][1]["name"] == "/act\ufffd\ufffd/Relu");
  CHECK(j["nodes"][0]["name"] == "/blk\"1\"/lin\\ear/MatMul");  // the rest as before
}

TEST_CASE(
    "json writer: a byte to escape at any position of a 1 to 48 byte string is escaped as the DOM does") {
  // The writer checks 16 bytes at a time and the tail as the last 16 (overlapping): every position of
  // every length around those blocks, against the text of the same string dumped by nlohmann (json_text, the
  // DOM writer's dump).
  for (size_t len = 1; len <= 48; ++len)
    for (size_t at = 0; at <= len; ++at)
      for (char bad : {'"', '\\', '\n', '\x7f'}) {
        std::string s(len, 'a');
        if (at < len) s[at] = bad;  // at == len: nothing to escape
        std::ostringstream os;
        flopwise::writers_detail::JsonWriter w(os);
        w.value(s);
        w.finish();
        CHECK_MESSAGE(os.str() == flopwise::json_text(nlohmann::json(s)) + "\n",
                      "length " << len << ", at " << at);
      }
}
