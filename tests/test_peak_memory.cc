// tests/test_peak_memory.cc — peak activation memory by liveness (issue 13): the tool's sweep against a
// brute-force count done here (for every step t, the bytes of every activation written at or before t and
// read at or after t), on a chain and on a U-Net-shaped graph with skip connections; weights apart; a
// symbolic peak is exact.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <functional>
#include <map>

#include "flopwise/infer.h"
#include "flopwise/onnx_import.h"
#include "flopwise/peak_memory.h"
#include "onnx_tiny.h"

namespace {

struct Built {
  onnx::ModelProto m;
  std::vector<std::pair<std::string, int64_t>> weights;  // name, elements
};

onnx::GraphProto* graph_of(Built& b, const std::vector<std::string>& in_dims) {
  b.m = fwtest::tiny_model();
  auto* g = b.m.mutable_graph();
  fwtest::tiny_input(g, "x", onnx::TensorProto::FLOAT, in_dims);
  return g;
}

void conv(Built& b, const std::string& name, const std::string& in, const std::string& out, int64_t cin,
          int64_t cout, int64_t stride = 1) {
  auto* g = b.m.mutable_graph();
  auto* w = g->add_initializer();
  w->set_name(name + "_w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {cout, cin, int64_t{3}, int64_t{3}}) w->add_dims(d);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = w->add_external_data();
  e->set_key("location");
  e->set_value("absent.bin");
  b.weights.push_back({name + "_w", cout * cin * 9});
  auto* n = fwtest::tiny_node(g, name, "Conv", {in, name + "_w"}, {out});
  auto* p = n->add_attribute();
  p->set_name("pads");
  p->set_type(onnx::AttributeProto::INTS);
  for (int k = 0; k < 4; ++k) p->add_ints(1);
  auto* s = n->add_attribute();
  s->set_name("strides");
  s->set_type(onnx::AttributeProto::INTS);
  s->add_ints(stride);
  s->add_ints(stride);
}

// Brute force over the inferred graph: activations are graph inputs and node outputs (not Constant); each
// lives from its writer (-1 for an input) to its last reader (the end for a graph output).
int64_t brute_force_peak(const flopwise::Model& model) {
  const auto& g = model.graph;
  const int64_t n = static_cast<int64_t>(g.nodes.size());
  std::map<int, std::pair<int64_t, int64_t>> span;  // value -> (first, last)
  for (int i : g.inputs) span[i] = {-1, -1};
  for (int64_t t = 0; t < n; ++t) {
    for (int v : g.nodes[t].inputs)
      if (span.count(v)) span[v].second = t;
    for (int v : g.nodes[t].outputs) span[v] = {t, t};
  }
  for (int o : g.outputs) span[o].second = n;
  int64_t best = 0;
  for (int64_t t = 0; t < n; ++t) {
    int64_t sum = 0;
    for (const auto& [v, s] : span)
      if (s.first <= t && t <= s.second) {
        const auto& val = g.values[v];
        sum += val.shape.numel_count().v * flopwise::dtype_size(val.dtype);
      }
    best = std::max(best, sum);
  }
  return best;
}

flopwise::Model inferred(const Built& b) {
  flopwise::Model m = flopwise::import_onnx_bytes(b.m.SerializeAsString(), "tiny.onnx");
  flopwise::infer_shapes(m);
  return m;
}

}  // namespace

TEST_CASE("peak activation memory: a chain and a U-Net against a brute-force liveness count") {
  SUBCASE("chain") {
    // x -> c1 (16 ch) -> relu -> c2 (32 ch) -> relu -> c3 (8 ch): each step holds its input and output.
    Built b;
    auto* g = graph_of(b, {"1", "3", "32", "32"});
    conv(b, "c1", "x", "a1", 3, 16);
    fwtest::tiny_node(g, "r1", "Relu", {"a1"}, {"b1"});
    conv(b, "c2", "b1", "a2", 16, 32);
    fwtest::tiny_node(g, "r2", "Relu", {"a2"}, {"b2"});
    conv(b, "c3", "b2", "y", 32, 8);
    g->add_output()->set_name("y");
    flopwise::Model m = inferred(b);
    flopwise::PeakMemory pm = flopwise::peak_memory(m, std::nullopt);
    // By hand: at r2, a2 and b2 live (32x32x32 floats each) = 2 * 131072 B = 262144 B, the largest pair.
    CHECK(pm.peak.v == 2 * 32 * 32 * 32 * 4);
    CHECK(pm.peak.v == brute_force_peak(m));
    int64_t w = 0;
    for (const auto& [name, k] : b.weights) w += k * 4;
    CHECK(pm.weights.v == w);
    CHECK(pm.unknown_tensors == 0);
  }
  SUBCASE("U-Net: skip connections keep encoder outputs alive") {
    Built b;
    auto* g = graph_of(b, {"1", "3", "64", "64"});
    conv(b, "e1", "x", "s1", 3, 8);        // 8x64x64, kept for the last concat
    conv(b, "e2", "s1", "s2", 8, 16, 2);   // 16x32x32, kept
    conv(b, "mid", "s2", "m", 16, 32, 2);  // 32x16x16
    auto* up1 = fwtest::tiny_node(g, "up1", "Resize", {"m", "", "up_scales"}, {"u1"});
    up1->add_attribute()->set_name("mode");
    up1->mutable_attribute(0)->set_type(onnx::AttributeProto::STRING);
    up1->mutable_attribute(0)->set_s("nearest");
    auto* sc = g->add_initializer();
    sc->set_name("up_scales");
    sc->set_data_type(onnx::TensorProto::FLOAT);
    sc->add_dims(4);
    for (float f : {1.f, 1.f, 2.f, 2.f}) sc->add_float_data(f);
    auto* c1 = fwtest::tiny_node(g, "cat1", "Concat", {"u1", "s2"}, {"k1"});  // 48x32x32
    c1->add_attribute()->set_name("axis");
    c1->mutable_attribute(0)->set_type(onnx::AttributeProto::INT);
    c1->mutable_attribute(0)->set_i(1);
    conv(b, "d1", "k1", "d1o", 48, 16);
    auto* up2 = fwtest::tiny_node(g, "up2", "Resize", {"d1o", "", "up_scales"}, {"u2"});
    up2->add_attribute()->CopyFrom(up1->attribute(0));
    auto* c2 = fwtest::tiny_node(g, "cat2", "Concat", {"u2", "s1"}, {"k2"});  // 24x64x64
    c2->add_attribute()->CopyFrom(c1->attribute(0));
    conv(b, "out", "k2", "y", 24, 2);
    g->add_output()->set_name("y");
    flopwise::Model m = inferred(b);
    flopwise::PeakMemory pm = flopwise::peak_memory(m, std::nullopt);
    CHECK(pm.unknown_tensors == 0);
    CHECK(pm.peak.v == brute_force_peak(m));
    // At cat2: s1 (8x64x64), u2 (16x64x64), k2 (24x64x64) live: 48 * 4096 * 4 B.
    CHECK(pm.peak.v == 48 * 64 * 64 * 4);
    REQUIRE(pm.at.size() == 1);
    CHECK(pm.at[0].find("cat2") != std::string::npos);
  }
}

TEST_CASE("peak activation memory is exact in the dynamic dims") {
  Built b;
  auto* g = graph_of(b, {"N", "3", "16", "16"});
  conv(b, "c1", "x", "a", 3, 8);
  fwtest::tiny_node(g, "r", "Relu", {"a"}, {"y"});
  g->add_output()->set_name("y");
  flopwise::Model m = inferred(b);
  flopwise::PeakMemory pm = flopwise::peak_memory(m, std::nullopt);
  // At r: a and y, 8x16x16 floats each per sample; at c1: x (3x16x16) and a: smaller for every N.
  REQUIRE(pm.peak.symbolic());
  CHECK(pm.peak.sym.same_as(flopwise::Dim(2 * 8 * 16 * 16 * 4) * flopwise::Dim::symbol("N")));
}

TEST_CASE("peak activation memory does not depend on the order the file stores its nodes in") {
  // Two branches from x (8 and 16 channels, each conv then relu) joined by a Concat. Stored branch by branch,
  // interleaved, the other branch first, or unsorted: the same graph, so the same peak at the same node.
  // The order of the first file is the depth-first one from the output, so the brute force over that file's
  // order is the figure for all four.
  using Step = std::function<void(Built&, onnx::GraphProto*)>;
  const std::map<std::string, Step> steps = {
      {"p1", [](Built& b, onnx::GraphProto*) { conv(b, "p1", "x", "pa", 3, 8); }},
      {"rp", [](Built&, onnx::GraphProto* g) { fwtest::tiny_node(g, "rp", "Relu", {"pa"}, {"pb"}); }},
      {"q1", [](Built& b, onnx::GraphProto*) { conv(b, "q1", "x", "qa", 3, 16); }},
      {"rq", [](Built&, onnx::GraphProto* g) { fwtest::tiny_node(g, "rq", "Relu", {"qa"}, {"qb"}); }},
      {"cat",
       [](Built&, onnx::GraphProto* g) {
         auto* c = fwtest::tiny_node(g, "cat", "Concat", {"pb", "qb"}, {"k"});
         c->add_attribute()->set_name("axis");
         c->mutable_attribute(0)->set_type(onnx::AttributeProto::INT);
         c->mutable_attribute(0)->set_i(1);
       }},
      {"out", [](Built& b, onnx::GraphProto*) { conv(b, "out", "k", "y", 24, 4); }},
  };
  std::vector<int64_t> peaks;
  std::vector<std::string> where;
  for (const std::vector<std::string>& order :
       {std::vector<std::string>{"p1", "rp", "q1", "rq", "cat", "out"},
        {"p1", "q1", "rp", "rq", "cat", "out"},
        {"q1", "rq", "p1", "rp", "cat", "out"},
        {"out", "cat", "rq", "q1", "rp", "p1"}}) {
    Built b;
    auto* g = graph_of(b, {"1", "3", "32", "32"});
    for (const auto& s : order) steps.at(s)(b, g);
    g->add_output()->set_name("y");
    flopwise::Model m = inferred(b);
    flopwise::PeakMemory pm = flopwise::peak_memory(m, std::nullopt);
    if (peaks.empty()) CHECK(pm.peak.v == brute_force_peak(m));
    peaks.push_back(pm.peak.v);
    REQUIRE(pm.at.size() == 1);
    where.push_back(pm.at[0]);
  }
  // By hand: at cat, pb (8x32x32), qb (16x32x32) and k (24x32x32) live: 48 * 1024 * 4 B, whatever the order.
  for (size_t i = 0; i < peaks.size(); ++i) {
    CAPTURE(i);
    CHECK(peaks[i] == 48 * 32 * 32 * 4);
    CHECK(where[i] == where[0]);
  }
}
