// tests/test_hostile.cc — hostile input (issue 16): small hand-made files of every class an outside fuzzing
// run found, each with the exit code and the message the tool must give. One TEST_CASE per class:
//   input checks     a rule never reads an input a node does not have, or past its contents
//   arithmetic       dim products and costs overflow into "unknown"; floats become ints only when they are
//   graph structure  one definition per value, no cycles, dangling inputs a warning
//   reports          JSON valid UTF-8, control characters escaped, deep scopes cut, no recursion
//   resource bounds  inlining, polynomial terms, ranks (README: Limits)
//   exit codes       non-regular files refused at once; 70 is the internal-error code
// To add a case: build the model with fwtest::tiny_* (tests/onnx_tiny.h), analyse it in process with
// `analyse_bytes` (shapes, costs) or write it and run the CLI with `cli` (exit code, stderr).
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "flopwise/cost.h"
#include "flopwise/errors.h"
#include "flopwise/infer.h"
#include "flopwise/limits.h"
#include "flopwise/onnx_import.h"
#include "flopwise/ops.h"
#include "onnx_tiny.h"

namespace {

namespace fs = std::filesystem;
using fwtest::tiny_input;
using fwtest::tiny_model;
using fwtest::tiny_node;
using json = nlohmann::json;

struct Analysed {
  flopwise::Model m;
  flopwise::Report r;
  const flopwise::Value& value(const std::string& name) const { return m.graph.values[m.graph.find(name)]; }
};

Analysed analyse_bytes(const onnx::ModelProto& mp) {
  Analysed a;
  a.m = flopwise::import_onnx_bytes(mp.SerializeAsString(), "hostile.onnx");
  flopwise::InferResult inf = flopwise::infer_shapes(a.m);
  a.r = flopwise::build_report(a.m, inf);
  return a;
}

// A Constant node: int64 (or float when `floats` is given) contents of shape `dims`.
void tiny_const(onnx::GraphProto* g, const std::string& out, const std::vector<int64_t>& dims,
                const std::vector<int64_t>& ints, const std::vector<float>& floats = {}) {
  auto* n = tiny_node(g, "const_" + out, "Constant", {}, {out});
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  for (int64_t d : dims) t->add_dims(d);
  if (floats.empty()) {
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t v : ints) t->add_int64_data(v);
  } else {
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (float v : floats) t->add_float_data(v);
  }
}

void tiny_output(onnx::GraphProto* g, const std::string& name) { g->add_output()->set_name(name); }

fs::path scratch() { return fwtest::scratch_dir("hostile"); }

// Writes the model and runs `flopwise FILE EXTRA`.
fwtest::CliRun cli(const onnx::ModelProto& mp, const std::string& extra = "") {
  const fs::path f = scratch() / "model.onnx";
  {
    std::ofstream o(f, std::ios::binary);
    o << mp.SerializeAsString();
  }
  return fwtest::run_cli("\"" + f.string() + "\" " + extra, scratch());
}

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

// The time a run may take: the 10 s, or 5 x that under AddressSanitizer (FLOPWISE_SANITIZE).
#if defined(__SANITIZE_ADDRESS__)
constexpr int kSlow = 5;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr int kSlow = 5;
#else
constexpr int kSlow = 1;
#endif
#else
constexpr int kSlow = 1;
#endif

}  // namespace

TEST_CASE("hostile: folding never reads an operand a node lacks or past an operand's contents") {
  // Each node's contents are known (Constants), so each would be folded: the folder must check the node
  // has the operands its op reads, and that each broadcasts to the output.
  auto m = tiny_model(13);
  auto* g = m.mutable_graph();
  tiny_const(g, "c3", {3}, {1, 2, 3});
  tiny_const(g, "c5", {5}, {1, 2, 3, 4, 5});
  tiny_const(g, "c23", {2, 3}, {1, 2, 3, 4, 5, 6});
  tiny_node(g, "add1", "Add", {"c3"}, {"add1_out"});             // Add with one input (reads a[1])
  tiny_node(g, "where2", "Where", {"c3", "c3"}, {"where_out"});  // Where with two (reads a[2])
  tiny_node(g, "neg_wide", "Neg", {"c3", "c5"}, {"neg_out"});    // a second input of 5 vs an output of 3
  tiny_node(g, "neg_rank", "Neg", {"c3", "c23"}, {"neg2_out"});  // a second input of higher rank
  tiny_node(g, "add_ok", "Add", {"c3", "c3"}, {"ok_out"});       // the control: folds
  for (const char* o : {"add1_out", "where_out", "neg_out", "neg2_out", "ok_out"}) tiny_output(g, o);
  Analysed a = analyse_bytes(m);
  // Shapes are still inferred (Add of one input: its shape; Neg: input 0's), contents are not folded.
  CHECK(a.value("add1_out").shape.str() == "3");
  CHECK_FALSE(a.value("add1_out").data);
  CHECK_FALSE(a.value("where_out").data);
  CHECK(a.value("neg_out").shape.str() == "3");
  CHECK_FALSE(a.value("neg_out").data);
  CHECK_FALSE(a.value("neg2_out").data);
  // [1,2,3] + [1,2,3] = [2,4,6]
  REQUIRE(a.value("ok_out").data);
  CHECK(a.value("ok_out").data->ints == std::vector<flopwise::Dim>{2, 4, 6});
}

TEST_CASE(
    "hostile: every registered op's shape and cost rules with 0 to 4 inputs, shaped, valued or extreme") {
  // A node may carry fewer inputs than its op needs, omitted ones (-1), or small known contents where a
  // tensor is expected: every rule must read through the checked accessors and end in a shape, a
  // ShapeError (a warning) or unknown, never an out-of-range read or a non-flopwise exception.
  size_t runs = 0;
  for (const auto& rec : flopwise::OpRegistry::instance().records()) {
    for (int variant = 0; variant < 4; ++variant)
      for (size_t k = 0; k <= 4; ++k) {
        CAPTURE(std::string(rec.name));
        CAPTURE(k);
        CAPTURE(variant);
        flopwise::Model m;
        m.format = flopwise::ModelFormat::Onnx;
        flopwise::Graph& g = m.graph;
        flopwise::Node n;
        n.name = "n";
        n.op = std::string(rec.name);
        n.domain = std::string(rec.domain);
        n.opset = rec.since_version;
        for (size_t i = 0; i < k; ++i) {
          const int vi = g.add_value("x" + std::to_string(i));
          flopwise::Value& v = g.values[static_cast<size_t>(vi)];
          v.is_input = true;
          if (variant == 0) {  // float [2, 3]
            v.dtype = flopwise::DType::Float32;
            v.shape = flopwise::Shape({2, 3});
          } else if (variant == 1) {  // int64 [2] = {2, 3}: a shape-like operand
            v.dtype = flopwise::DType::Int64;
            v.shape = flopwise::Shape({2});
            flopwise::ConstData d;
            d.ints = {2, 3};
            v.data = d;
          } else if (variant == 2) {  // every other input omitted, the rest of unknown rank
            v.dtype = flopwise::DType::Float32;
          } else {  // int64 [2] = {INT64_MIN, INT64_MAX}: extremes as axes, pads, shapes, steps
            v.dtype = flopwise::DType::Int64;
            v.shape = flopwise::Shape({2});
            flopwise::ConstData d;
            d.ints = {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
            v.data = d;
          }
          g.inputs.push_back(vi);
          n.inputs.push_back(variant == 2 && i % 2 == 1 ? -1 : vi);
        }
        for (int o = 0; o < 3; ++o) {
          const int vo = g.add_value("y" + std::to_string(o));
          g.values[static_cast<size_t>(vo)].producer = 0;
          n.outputs.push_back(vo);
          g.outputs.push_back(vo);
        }
        g.nodes.push_back(std::move(n));
        CHECK_NOTHROW({
          flopwise::InferResult inf = flopwise::infer_shapes(m);
          flopwise::build_report(m, inf);
        });
        ++runs;
      }
  }
  CHECK(runs ==
        20 * flopwise::OpRegistry::instance().records().size());  // 4 variants x 5 input counts per op
}

TEST_CASE("hostile: graph structure: one definition per value, self-loops, cycles, dangling inputs") {
  SUBCASE("a node whose output is its own input (the 94-byte Gather) is refused, exit 2") {
    auto m = tiny_model(13);
    auto* g = m.mutable_graph();
    tiny_input(g, "x", onnx::TensorProto::FLOAT, {"3", "4"});
    tiny_input(g, "i", onnx::TensorProto::INT64, {"2"});
    tiny_node(g, "gather", "Gather", {"x", "i"}, {"x"});
    tiny_output(g, "x");
    auto r = cli(m);
    CHECK(r.code == 2);
    CHECK(contains(r.err, "value 'x' is written by node 'gather' and by a graph input"));
  }
  SUBCASE("two nodes writing one value: exit 2, one line naming both") {
    auto m = tiny_model(13);
    auto* g = m.mutable_graph();
    tiny_input(g, "x", onnx::TensorProto::FLOAT, {"3"});
    tiny_node(g, "a", "Relu", {"x"}, {"y"});
    tiny_node(g, "b", "Relu", {"x"}, {"y"});
    tiny_output(g, "y");
    auto r = cli(m);
    CHECK(r.code == 2);
    CHECK(r.err == "flopwise: error: " + (scratch() / "model.onnx").string() +
                       ": value 'y' is written by node 'b' and by node 'a' (a value has one definition)\n");
  }
  SUBCASE("a cycle between two nodes: exit 2 naming them") {
    auto m = tiny_model(13);
    auto* g = m.mutable_graph();
    tiny_input(g, "x", onnx::TensorProto::FLOAT, {"3"});
    tiny_node(g, "a", "Add", {"x", "q"}, {"p"});
    tiny_node(g, "b", "Relu", {"p"}, {"q"});
    tiny_output(g, "q");
    auto r = cli(m);
    CHECK(r.code == 2);
    CHECK(contains(r.err, "the graph has a cycle: 2 nodes wait on each other ('a', 'b')"));
  }
  SUBCASE("dangling inputs: a warning listing them, the rest counted (exit 0)") {
    auto m = tiny_model(13);
    auto* g = m.mutable_graph();
    tiny_input(g, "x", onnx::TensorProto::FLOAT, {"2", "3"});
    tiny_node(g, "a", "Add", {"x", "nowhere1"}, {"p"});
    tiny_node(g, "b", "Add", {"p", "nowhere2"}, {"q"});
    tiny_node(g, "c", "Relu", {"x"}, {"r"});
    tiny_output(g, "q");
    tiny_output(g, "r");
    Analysed a = analyse_bytes(m);
    bool listed = false;
    for (const auto& w : a.m.warnings)
      listed = listed ||
               w == "2 values are used but never defined ('nowhere1', 'nowhere2'); their shapes are unknown";
    CHECK(listed);
    // Relu over 2x3 = 6 FLOPs, counted; the Adds' broadcast is unknown (a dangling operand of any shape).
    CHECK(a.r.nodes[2].cost.flops == flopwise::Count{6});
  }
}

TEST_CASE("hostile: dim products and costs overflow into unknown, never UB or an internal error") {
  // Relu over an n x n float input: 1 FLOP per element, so FLOPs = n^2.
  auto relu_of = [](const std::string& n) {
    auto m = tiny_model(13);
    auto* g = m.mutable_graph();
    tiny_input(g, "x", onnx::TensorProto::FLOAT, {n, n});
    tiny_node(g, "r", "Relu", {"x"}, {"y"});
    tiny_output(g, "y");
    return m;
  };
  {
    // 3037000499^2 = 9,223,372,030,926,249,001 <= 2^63 - 1 = 9,223,372,036,854,775,807: exact.
    Analysed a = analyse_bytes(relu_of("3037000499"));
    CHECK(a.r.nodes[0].cost.flops == flopwise::Count{9223372030926249001});
    // Its memory bytes, 4 * 2 * n^2, overflow: unknown, and the warning says where.
    CHECK_FALSE(a.r.nodes[0].cost.memory_bytes.known);
  }
  {
    // 3037000500^2 = 9,223,372,037,000,250,000 > 2^63 - 1: the element count itself overflows.
    Analysed a = analyse_bytes(relu_of("3037000500"));
    CHECK_FALSE(a.r.nodes[0].cost.flops.known);
    CHECK(a.r.nodes[0].cost.flops.overflowed);
    bool warned = false;
    for (const auto& w : a.r.warnings) warned = warned || contains(w, "count overflows 64 bits in: r");
    CHECK(warned);
  }
  // The bundled models with dims past int64 when multiplied: exit 0 and unknown counts, not exit 2/70.
  // resnet18: 1,814,073,344 MACs per image (README, torchvision convention) x 2^62 images > 2^63.
  auto r = fwtest::run_cli(
      "\"" + fwtest::model_path("resnet18.onnx") + "\" --dim batch=4611686018427387904 -f json", scratch());
  REQUIRE(r.code == 0);
  json j = json::parse(r.out);
  CHECK(j["nodes"][0]["macs"].is_null());  // the first Conv: 118,013,952 MACs per image (x 2^62)
  CHECK(j["totals"]["uncounted_nodes"].get<int64_t>() > 0);
  bool overflow_warned = false;
  for (const auto& w : j["warnings"])
    overflow_warned = overflow_warned || contains(w.get<std::string>(), "overflows 64 bits");
  CHECK(overflow_warned);
  // gpt2: batch x seq = 3037000500^2 > 2^63 - 1 (the Reshape that once asked an unknown dim its value).
  r = fwtest::run_cli(
      "\"" + fwtest::model_path("gpt2.onnx") + "\" --dim batch=3037000500 --dim seq=3037000500", scratch());
  CHECK(r.code == 0);
  CHECK_FALSE(contains(r.err, "internal error"));
}

TEST_CASE("hostile: floats become integers only when finite, integral and in range") {
  using flopwise::exact_int64;
  using flopwise::trunc_int64;
  CHECK(exact_int64(3.0) == 3);
  CHECK(exact_int64(-9223372036854775808.0) == std::numeric_limits<int64_t>::min());  // -2^63 is exact
  CHECK_FALSE(exact_int64(9223372036854775808.0));  // 2^63: one past the range
  CHECK_FALSE(exact_int64(2.5));
  CHECK_FALSE(exact_int64(std::nan("")));
  CHECK_FALSE(exact_int64(INFINITY));
  CHECK_FALSE(exact_int64(1e300));
  CHECK(trunc_int64(-2.7) == -2);  // Cast's rule: toward zero
  CHECK_FALSE(trunc_int64(-INFINITY));
  // A Reshape target cast from floats NaN and 1e30: its dims are unknown, not garbage (UB before).
  auto m = tiny_model(13);
  auto* g = m.mutable_graph();
  tiny_input(g, "x", onnx::TensorProto::FLOAT, {"2", "3"});
  tiny_const(g, "f", {2}, {}, {std::nanf(""), 1e30f});
  auto* cast = tiny_node(g, "cast", "Cast", {"f"}, {"shape"});
  auto* to = cast->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::INT64);
  tiny_node(g, "reshape", "Reshape", {"x", "shape"}, {"y"});
  tiny_output(g, "y");
  Analysed a = analyse_bytes(m);
  CHECK(a.value("y").shape.str() == "?x?");
  // Range over float bounds 0 .. 1e30 step 1: a length past int64's range is unknown.
  auto m2 = tiny_model(13);
  auto* g2 = m2.mutable_graph();
  tiny_const(g2, "s", {}, {}, {0.f});
  tiny_const(g2, "l", {}, {}, {1e30f});
  tiny_const(g2, "d", {}, {}, {1.f});
  tiny_node(g2, "range", "Range", {"s", "l", "d"}, {"y"});
  tiny_output(g2, "y");
  Analysed b = analyse_bytes(m2);
  CHECK(b.value("y").shape.str() == "?");
}

TEST_CASE("hostile: reports stay valid and safe whatever the names hold") {
  // Node names with an invalid UTF-8 byte, a terminal escape (ESC [31m) and 10,000 scope levels.
  auto m = tiny_model(13);
  auto* g = m.mutable_graph();
  tiny_input(g, "x", onnx::TensorProto::FLOAT, {"2"});
  tiny_node(g, std::string("bad\xff") + "name", "Relu", {"x"}, {"a"});
  tiny_node(g, "/red\x1b[31mscope/Relu", "Relu", {"a"}, {"b"});
  std::string deep;
  for (int i = 0; i < 10000; ++i) deep += "/s";
  tiny_node(g, deep + "/Relu", "Relu", {"b"}, {"c"});
  tiny_output(g, "c");
  const auto t0 = std::chrono::steady_clock::now();
  auto r = cli(m, "-f json");
  REQUIRE(r.code == 0);
  json j = json::parse(r.out);                               // throws on invalid UTF-8
  CHECK(j["nodes"][0]["name"] == "bad\xEF\xBF\xBDname");     // the byte 0xFF became U+FFFD
  CHECK(j["nodes"][1]["name"] == "/red\x1b[31mscope/Relu");  // escaped as \u001b in the JSON text
  CHECK_FALSE(contains(r.out, "\x1b"));
  // The scope path is cut at limits().max_scope_depth = 256 levels: the JSON is small (10,000 levels
  // would be 10,000 * 10,000 / 2 bytes of names, 50 MB, per scope list), and says so.
  size_t depth = 0;
  for (const json* s = &j["scopes"]; !(*s)["children"].empty(); s = &(*s)["children"].back()) ++depth;
  CHECK(depth == 256);
  CHECK(r.out.size() < 2500000);
  bool cut = false;
  for (const auto& w : j["warnings"])
    cut = cut || contains(w.get<std::string>(), "deeper than 256 levels are cut");
  CHECK(cut);
  for (const char* fmt : {"text", "csv", "markdown"}) {
    CAPTURE(fmt);
    auto t = cli(m, std::string("-f ") + fmt);
    CHECK(t.code == 0);
    CHECK_FALSE(contains(t.out, "\x1b"));         // no raw ESC reaches a terminal
    CHECK(contains(t.out, "red\\x1b[31mscope"));  // the scope, in every format, as the text \x1b
  }
  for (const char* fmt : {"html", "netron"}) {  // their JSON too: U+FFFD, not an internal error
    CAPTURE(fmt);
    auto t = cli(m, std::string("-f ") + fmt);
    CHECK(t.code == 0);
    if (std::string(fmt) == "netron")
      CHECK(contains(t.out, "bad\xEF\xBF\xBDname"));  // html shows scopes only
  }
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20 * kSlow));  // 6 runs
}

TEST_CASE("hostile: names holding DEL and control bytes stay valid JSON in every JSON document") {
  // Issue 31: a warning quoting a name with DEL (0x7F) was written \x7f (the terminal escaping) inside a JSON
  // string, which no parser accepts. A node and its output named with DEL, US (0x1F) and an invalid byte; an
  // element count 2^62 * 2^62 overflows, so a warning quotes the names.
  auto m = tiny_model(13);
  auto* g = m.mutable_graph();
  tiny_input(g, "x", onnx::TensorProto::FLOAT, {"N", "N"});
  const std::string name =
                        "/encoder/layers.2/s\x7f\x1f\x7f\x7f"
                        "attn/Mul",
                    out = "s\x7f\xfe";
  tiny_node(g, name, "Mul", {"x", "x"}, {out});
  tiny_output(g, out);
  const std::string del_name =
      "/encoder/layers.2/s\x7f\x1f\x7f\x7f"
      "attn/Mul";
  // `names`: the document quotes the node's name (a sweep's rows are totals only).
  auto strings_ok = [&](const std::string& text, bool names = true) {
    json j = json::parse(text);  // nlohmann's parser: strict UTF-8, rejects \x escapes and raw controls
    const std::string dumped = j.dump();
    if (names) CHECK(contains(dumped, "attn"));
    return j;
  };
  for (const char* extra :
       {"-f json", "-f json --dim N=4611686018427387904", "-f json --peak-memory --dim N=2",
        "-f json --sweep N=1,2", "-f netron --dim N=2"}) {
    CAPTURE(extra);
    auto r = cli(m, extra);
    REQUIRE(r.code == 0);
    CHECK_FALSE(contains(r.out, "\\x7f"));
    json j = strings_ok(r.out, !contains(extra, "--sweep"));
    if (contains(extra, "4611686018427387904")) {
      bool quoted = false;  // the overflow warning names the node, DEL and all
      for (const auto& w : j["warnings"]) quoted = quoted || contains(w.get<std::string>(), del_name);
      CHECK(quoted);
    }
    if (std::string(extra) == "-f json") CHECK(j["nodes"][0]["name"] == del_name);
  }
  // diff of a model with itself, as JSON
  const fs::path a = scratch() / "del_a.onnx";
  {
    std::ofstream o(a, std::ios::binary);
    o << m.SerializeAsString();
  }
  auto d = fwtest::run_cli("diff \"" + a.string() + "\" \"" + a.string() + "\" --format json --dim N=2",
                           scratch());
  REQUIRE_MESSAGE(d.code == 0, d.err);
  strings_ok(d.out);
  // html embeds its data as JSON in a script: still the \u007f escape, never \x7f
  auto h = cli(m, "-f html --dim N=2");
  REQUIRE(h.code == 0);
  CHECK_FALSE(contains(h.out, "\\x7f"));
}

TEST_CASE("hostile: resource bounds (README: Limits) stop small files that would blow up") {
  SUBCASE("functions calling each other twice per level, 30 levels: 2^30 nodes refused, exit 2, fast") {
    auto m = tiny_model(13);
    m.add_opset_import()->set_domain("local");
    m.mutable_opset_import(1)->set_version(1);
    for (int k = 0; k < 30; ++k) {
      auto* f = m.add_functions();
      f->set_name("f" + std::to_string(k));
      f->set_domain("local");
      f->add_input("x");
      f->add_output("y");
      f->add_opset_import()->set_version(13);
      auto* ld = f->add_opset_import();
      ld->set_domain("local");
      ld->set_version(1);
      auto add = [&](const std::string& op, const std::string& dom, const std::string& in,
                     const std::string& out) {
        auto* n = f->add_node();
        n->set_op_type(op);
        n->set_domain(dom);
        n->add_input(in);
        n->add_output(out);
      };
      if (k == 0) {
        add("Relu", "", "x", "y");
      } else {
        add("f" + std::to_string(k - 1), "local", "x", "t");
        add("f" + std::to_string(k - 1), "local", "t", "y");
      }
    }
    auto* g = m.mutable_graph();
    tiny_input(g, "x", onnx::TensorProto::FLOAT, {"2"});
    tiny_node(g, "call", "f29", {"x"}, {"y"}, "local");
    tiny_output(g, "y");
    const auto t0 = std::chrono::steady_clock::now();
    auto r = cli(m);
    CHECK(r.code == 2);
    CHECK(contains(r.err, "gives more than 1000000 nodes"));
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10 * kSlow));
  }
  SUBCASE("a symbolic dim squared 24 times ((a+b)^(2^24)): unknown with a warning, fast") {
    // s = a + b from the input's shape; s_k = s_(k-1)^2 has 2^k + 1 terms; a tensor of s_24 elements.
    auto m = tiny_model(13);
    auto* g = m.mutable_graph();
    tiny_input(g, "x", onnx::TensorProto::FLOAT, {"a", "b"});
    tiny_node(g, "shape", "Shape", {"x"}, {"sh"});
    tiny_const(g, "i0", {}, {0});
    tiny_const(g, "i1", {}, {1});
    tiny_const(g, "ax", {1}, {0});
    tiny_node(g, "ga", "Gather", {"sh", "i0"}, {"da"});
    tiny_node(g, "gb", "Gather", {"sh", "i1"}, {"db"});
    tiny_node(g, "sum", "Add", {"da", "db"}, {"s0"});
    for (int k = 1; k <= 24; ++k) {
      const std::string p = "s" + std::to_string(k - 1), s = "s" + std::to_string(k);
      tiny_node(g, "sq" + std::to_string(k), "Mul", {p, p}, {s});
    }
    tiny_node(g, "unsq", "Unsqueeze", {"s24", "ax"}, {"len"});
    tiny_node(g, "fill", "ConstantOfShape", {"len"}, {"big"});
    tiny_node(g, "relu", "Relu", {"big"}, {"y"});
    tiny_output(g, "y");
    const auto t0 = std::chrono::steady_clock::now();
    auto r = cli(m, "-f json");
    REQUIRE(r.code == 0);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10 * kSlow));
    json j = json::parse(r.out);
    const json& relu = j["nodes"][j["nodes"].size() - 1];
    CHECK(relu["name"] == "relu");
    CHECK(relu["flops"].is_null());  // Relu's s_24 FLOPs: unknown
    bool warned = false;
    for (const auto& w : j["warnings"])
      warned = warned || contains(w.get<std::string>(), "grew past 4096 terms");
    CHECK(warned);
  }
  SUBCASE("a Reshape whose rank comes from a shape tensor of 20 M elements: unknown rank") {
    auto m = tiny_model(13);
    auto* g = m.mutable_graph();
    tiny_input(g, "x", onnx::TensorProto::FLOAT, {"4"});
    tiny_const(g, "n", {1}, {20000000});
    auto* fill = tiny_node(g, "fill", "ConstantOfShape", {"n"}, {"target"});
    auto* v = fill->add_attribute();
    v->set_name("value");
    v->set_type(onnx::AttributeProto::TENSOR);
    v->mutable_t()->set_data_type(onnx::TensorProto::INT64);
    v->mutable_t()->add_dims(1);
    v->mutable_t()->add_int64_data(1);
    tiny_node(g, "reshape", "Reshape", {"x", "target"}, {"y"});
    tiny_output(g, "y");
    Analysed a = analyse_bytes(m);
    CHECK(a.value("target").shape.str() == "20000000");
    CHECK_FALSE(a.value("y").shape.rank_known);  // rank 20,000,000 > limits().max_rank = 64
  }
  SUBCASE("a declared input of rank 100: unknown rank") {
    auto m = tiny_model(13);
    auto* g = m.mutable_graph();
    tiny_input(g, "x", onnx::TensorProto::FLOAT, std::vector<std::string>(100, "1"));
    tiny_node(g, "r", "Relu", {"x"}, {"y"});
    tiny_output(g, "y");
    Analysed a = analyse_bytes(m);
    CHECK_FALSE(a.value("x").shape.rank_known);
  }
}

TEST_CASE("hostile: exit codes: non-regular files at once (exit 2); 70 is only for bugs") {
  const fs::path fifo = scratch() / "model_fifo.onnx";
  fs::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = fwtest::run_cli("\"" + fifo.string() + "\"", scratch());  // blocked forever before
  CHECK(r.code == 2);
  CHECK(contains(r.err, "not a regular file"));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5 * kSlow));
  r = fwtest::run_cli("\"" + scratch().string() + "\"", scratch());
  CHECK(r.code == 2);
  CHECK(contains(r.err, "a directory, not a regular file"));
  r = fwtest::run_cli("diff \"" + fifo.string() + "\" \"" + fifo.string() + "\"", scratch());
  CHECK(r.code == 2);
  fs::remove(fifo);
  CHECK(flopwise::kExitInternal == 70);  // EX_SOFTWARE (sysexits.h); the README's table lists it
  CHECK(flopwise::kExitBadInput == 2);
}
