// tests/op_test_util.h — build a one-node graph from a compact spec, infer it, cost it.
//
// How to add an op test (the pattern every family test follows):
//   1. Add a row to the family's table in tests/test_ops_<family>.cc:
//        {"label", "Op", {"1x3x224x224", "64x3x7x7"}, {{"strides", A::ints({2, 2})}}, {"1x64x112x112"},
//         /*macs*/ 118013952, /*flops*/ 236027904},  // 64*112*112 * 3*7*7 = 118013952
//   2. Input specs: "SHAPE[:dtype][=v1,v2,...]". SHAPE as parse_shape reads it ("1x3", "batchx5", "?x5",
//      "*" for unknown rank, "scalar"); dtype defaults to float32; "=..." gives known contents
//      (integers, or floats when the dtype is float). "" is an omitted optional input.
//   3. Expected shapes use the same SHAPE syntax; "-" skips an output. Costs: -1 = don't check,
//      kUnknown = must be unknown.
//   Each op covers a static, a symbolic, an unknown-rank and (where one exists) a bad-input row.
#pragma once

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "coverage.h"
#include "flopwise/errors.h"
#include "flopwise/infer.h"
#include "flopwise/ir.h"
#include "flopwise/ops.h"
#include "infer_graph.h"

namespace fwtest {

using namespace flopwise;

constexpr int64_t kUnknown = -2;

struct A {
  static Attribute i(int64_t v) { return Attribute::of_int(v); }
  static Attribute f(double v) { return Attribute::of_float(v); }
  static Attribute s(const std::string& v) { return Attribute::of_string(v); }
  static Attribute ints(std::vector<int64_t> v) { return Attribute::of_ints(std::move(v)); }
  static Attribute floats(std::vector<double> v) { return Attribute::of_floats(std::move(v)); }
  // A tensor attribute (Constant value, ConstantOfShape value): dims and optional contents.
  static Attribute tensor(DType t, std::vector<int64_t> dims, std::vector<double> vals = {}) {
    Attribute a;
    a.kind = Attribute::Kind::Tensor;
    a.tensor.dtype = t;
    a.tensor.dims = std::move(dims);
    if (!vals.empty() || a.tensor.dims.empty() || a.tensor.dims == std::vector<int64_t>{0}) {
      ConstData d;
      d.is_float = is_float(t);
      for (double v : vals) {
        if (d.is_float)
          d.floats.push_back(v);
        else
          d.ints.push_back(Dim(static_cast<int64_t>(v)));
      }
      a.tensor.data = d;
    }
    return a;
  }
};

// Parses "SHAPE[:dtype][=v1,v2]" into a value of graph `g`.
inline void set_value_from_spec(Value& v, const std::string& spec) {
  std::string s = spec, vals;
  auto eq = s.find('=');
  if (eq != std::string::npos) {
    vals = s.substr(eq + 1);
    s = s.substr(0, eq);
  }
  v.dtype = DType::Float32;
  auto colon = s.find(':');
  if (colon != std::string::npos) {
    auto t = parse_dtype(s.substr(colon + 1));
    REQUIRE_MESSAGE(t, "bad dtype in spec " << spec);
    v.dtype = *t;
    s = s.substr(0, colon);
  }
  auto shape = parse_shape(s);
  REQUIRE_MESSAGE(shape, "bad shape in spec " << spec);
  v.shape = *shape;
  if (eq != std::string::npos) {
    ConstData d;
    d.is_float = is_float(v.dtype);
    size_t pos = 0;
    while (pos <= vals.size() && !vals.empty()) {
      size_t c = vals.find(',', pos);
      std::string tok = vals.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
      if (d.is_float)
        d.floats.push_back(std::stod(tok));
      else
        d.ints.push_back(Dim(static_cast<int64_t>(std::stoll(tok))));
      if (c == std::string::npos) break;
      pos = c + 1;
    }
    v.data = d;
  }
}

struct OneNode {
  Model model;
  InferResult result;
  bool contradiction = false;  // inference reported a provable shape error

  Node& node() { return model.graph.nodes[0]; }
  const Value& out(size_t i) { return model.graph.values[model.graph.nodes[0].outputs[i]]; }
  OpCost cost() {
    const OpRecord* rec = OpRegistry::instance().find(node().domain, node().op, node().opset);
    REQUIRE_MESSAGE(rec, "no record for " << node().op);
    CostContext ctx{model.graph, node(), nullptr};
    return rec->cost(ctx);
  }
};

// Builds and infers one node. Input values are graph inputs (or initializers when they carry data).
inline OneNode run_op(const std::string& op, const std::vector<std::string>& inputs,
                      const std::map<std::string, Attribute>& attrs = {}, size_t n_outputs = 1,
                      const std::string& domain = "", int opset = 17) {
  OneNode r;
  record_covered(domain, op);
  Graph& g = r.model.graph;
  Node n;
  n.name = "n0";
  n.op = op;
  n.domain = domain;
  n.opset = opset;
  n.attrs = attrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].empty()) {
      n.inputs.push_back(-1);
      continue;
    }
    int idx = g.add_value("in" + std::to_string(i));
    set_value_from_spec(g.values[idx], inputs[i]);
    g.values[idx].is_input = true;
    g.inputs.push_back(idx);
    n.inputs.push_back(idx);
  }
  for (size_t i = 0; i < n_outputs; ++i) {
    int idx = g.add_value("out" + std::to_string(i));
    g.values[idx].producer = 0;
    n.outputs.push_back(idx);
  }
  g.nodes.push_back(std::move(n));
  infer_graph(g, r.result);
  for (const auto& w : r.result.warnings)
    if (w.rfind("shape contradiction", 0) == 0) r.contradiction = true;
  return r;
}

struct OpCase {
  const char* label;
  const char* op;
  std::vector<std::string> inputs;
  std::map<std::string, Attribute> attrs;
  std::vector<std::string> expect;  // shapes per output; "-" skips; "!" expects a contradiction
  int64_t macs = -1;
  int64_t flops = -1;
  const char* domain = "";
  int opset = 17;
};

inline void check_count(const Count& c, int64_t expect, const char* what) {
  if (expect == -1) return;
  if (expect == kUnknown) {
    CHECK_MESSAGE(!c.known, what << " should be unknown");
  } else {
    CHECK_MESSAGE(c.known, what << " should be known");
    if (c.known) CHECK_MESSAGE(c.v == expect, what << ": got " << c.v << ", expected " << expect);
  }
}

inline void check_case(const OpCase& tc) {
  std::string label = tc.label;
  CAPTURE(label);
  size_t n_out = std::max<size_t>(tc.expect.size(), 1);
  OneNode r = run_op(tc.op, tc.inputs, tc.attrs, n_out, tc.domain, tc.opset);
  CHECK_MESSAGE(r.result.unsupported.empty(), tc.op << " is not registered");
  if (!tc.expect.empty() && tc.expect[0] == "!") {
    CHECK_MESSAGE(r.contradiction, "expected a shape contradiction");
    return;
  }
  CHECK_MESSAGE(!r.contradiction,
                "unexpected contradiction: " << (r.result.warnings.empty() ? "" : r.result.warnings[0]));
  for (size_t i = 0; i < tc.expect.size(); ++i) {
    if (tc.expect[i] == "-") continue;
    // An expectation with floor/min/max terms is compared as printed (parse_shape reads plain dims only).
    auto parsed = parse_shape(tc.expect[i]);
    CHECK_MESSAGE(r.out(i).shape.str() == (parsed ? parsed->str() : tc.expect[i]),
                  "output " << i << " shape " << r.out(i).shape.str() << ", expected " << tc.expect[i]);
  }
  if (tc.macs != -1 || tc.flops != -1) {
    OpCost c = r.cost();
    check_count(c.macs, tc.macs, "MACs");
    check_count(c.flops, tc.flops, "FLOPs");
  }
}

}  // namespace fwtest
