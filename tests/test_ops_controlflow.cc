// tests/test_ops_controlflow.cc — control-flow family (If, Loop, Scan) on hand-built graphs and on ONNX
// backend models checked against their reference outputs; sequence/optional ops (no sequence type in the IR)
// at the end.
#include <onnx/onnx_pb.h>

#include <fstream>

#include "flopwise/cost.h"
#include "flopwise/onnx_import.h"
#include "op_test_util.h"

using namespace fwtest;

namespace {

// Builds graphs by hand: values by spec (op_test_util syntax), nodes, subgraphs.
struct Builder {
  Graph& g;
  int input(const std::string& name, const std::string& spec) {
    int i = g.add_value(name);
    set_value_from_spec(g.values[i], spec);
    g.values[i].is_input = true;
    g.inputs.push_back(i);
    return i;
  }
  int outer(const std::string& name) {  // reference to a value of an enclosing graph
    int i = g.add_value(name);
    g.values[i].is_outer = true;
    return i;
  }
  Node& node(const std::string& op, const std::vector<std::string>& ins, const std::vector<std::string>& outs,
             std::map<std::string, Attribute> attrs = {}) {
    Node n;
    n.name = op + std::to_string(g.nodes.size());
    n.op = op;
    n.opset = 17;
    n.attrs = std::move(attrs);
    for (const auto& s : ins) n.inputs.push_back(s.empty() ? -1 : g.find(s));
    for (const auto& s : outs) {
      int i = g.add_value(s);
      g.values[i].producer = static_cast<int>(g.nodes.size());
      n.outputs.push_back(i);
    }
    g.nodes.push_back(std::move(n));
    return g.nodes.back();
  }
  void outputs(const std::vector<std::string>& names) {
    for (const auto& s : names) g.outputs.push_back(g.find(s));
  }
};

// Attaches `sub` to `n` under attribute `attr`; returns the subgraph.
Graph& attach(Node& n, Graph& parent, const std::string& attr) {
  auto sg = std::make_unique<Graph>();
  sg->parent = &parent;
  sg->name = attr;
  n.subgraphs.push_back(std::move(sg));
  Attribute a;
  a.kind = Attribute::Kind::Graph;
  a.graphs = {static_cast<int>(n.subgraphs.size()) - 1};
  n.attrs[attr] = a;
  return *n.subgraphs.back();
}

const Value& val(const Graph& g, const std::string& name) { return g.values[g.find(name)]; }

// Infers the whole model and reports node `i`'s cost through the real roll-up (subgraph costs included).
Totals infer_and_cost(Model& m, size_t node_index, InferResult* out = nullptr) {
  InferResult res = infer_shapes(m, InferOptions{});
  if (out) *out = res;
  Report r = build_report(m, res);
  REQUIRE(node_index < r.nodes.size());
  return r.nodes[node_index].cost;
}

// ---- backend-model oracle ----
std::string node_dir(const std::string& test) { return "/usr/share/libonnx-testdata/data/node/" + test; }

bool read_tensor(const std::string& path, onnx::TensorProto* t) {
  std::ifstream f(path, std::ios::binary);
  return f && t->ParseFromIstream(&f);
}

std::vector<int64_t> ints_of(const onnx::TensorProto& t) {
  std::vector<int64_t> v;
  const std::string& raw = t.raw_data();
  switch (t.data_type()) {
    case onnx::TensorProto::INT64:
      if (!raw.empty())
        for (size_t i = 0; i + 8 <= raw.size(); i += 8)
          v.push_back(*reinterpret_cast<const int64_t*>(raw.data() + i));
      else
        v.assign(t.int64_data().begin(), t.int64_data().end());
      break;
    case onnx::TensorProto::INT32:
      if (!raw.empty())
        for (size_t i = 0; i + 4 <= raw.size(); i += 4)
          v.push_back(*reinterpret_cast<const int32_t*>(raw.data() + i));
      else
        v.assign(t.int32_data().begin(), t.int32_data().end());
      break;
    case onnx::TensorProto::BOOL:
      if (!raw.empty())
        for (char c : raw) v.push_back(c != 0);
      else
        v.assign(t.int32_data().begin(), t.int32_data().end());
      break;
    case onnx::TensorProto::FLOAT: {  // pinned only when every value is integral (Range's 1, 5, 2)
      std::vector<float> f;
      if (!raw.empty())
        for (size_t i = 0; i + 4 <= raw.size(); i += 4)
          f.push_back(*reinterpret_cast<const float*>(raw.data() + i));
      else
        f.assign(t.float_data().begin(), t.float_data().end());
      if (f.size() > 16) break;
      for (float x : f) {
        if (x != static_cast<float>(static_cast<int64_t>(x))) return {};
        v.push_back(static_cast<int64_t>(x));
      }
      break;
    }
    default:
      break;
  }
  return v;
}

// The main graph's declared types go (outputs, value_info); a subgraph's declared inputs and outputs
// are part of its op's contract and stay.
void strip_declared(Graph& g) {
  for (auto& v : g.values) v.declared.reset();
}

// Loads a backend test, strips the main graph's declared types, pins integer/bool inputs by value (as a user
// would with --value), infers, and checks each output's shape against the reference output's dims.
Model check_backend_model(const std::string& test) {
  Model m = import_onnx_file(node_dir(test) + "/model.onnx");
  strip_declared(m.graph);
  InferOptions opts;
  for (size_t k = 0; k < m.graph.inputs.size(); ++k) {
    onnx::TensorProto t;
    REQUIRE(read_tensor(node_dir(test) + "/test_data_set_0/input_" + std::to_string(k) + ".pb", &t));
    Value& v = m.graph.values[m.graph.inputs[k]];
    auto ints = ints_of(t);
    if (!ints.empty()) opts.values[v.name] = ints;
  }
  InferResult res = infer_shapes(m, opts);
  CHECK_MESSAGE(res.unsupported.empty(), test << ": unsupported ops");
  for (size_t k = 0; k < m.graph.outputs.size(); ++k) {
    onnx::TensorProto t;
    REQUIRE(read_tensor(node_dir(test) + "/test_data_set_0/output_" + std::to_string(k) + ".pb", &t));
    std::vector<Dim> dims(t.dims().begin(), t.dims().end());
    const Value& o = m.graph.values[m.graph.outputs[k]];
    CHECK_MESSAGE(o.shape.str() == Shape(dims).str(),
                  test << " output " << k << ": got " << o.shape.str() << ", want " << Shape(dims).str());
  }
  return m;
}

}  // namespace

// ---- If ----
// then: Relu(X) (1 FLOP per element); else: Add(X, X) then Mul (2 FLOPs per element).
Model if_model(const std::string& x_spec, const std::string& cond_spec, bool else_changes_rank = false) {
  Model m;
  Builder b{m.graph};
  b.input("X", x_spec);
  b.input("cond", cond_spec);
  Node& n = b.node("If", {"cond"}, {"Y"});
  Graph& then_g = attach(n, m.graph, "then_branch");
  Graph& else_g = attach(n, m.graph, "else_branch");
  Builder t{then_g};
  t.outer("X");
  t.node("Relu", {"X"}, {"t_out"});
  t.outputs({"t_out"});
  Builder e{else_g};
  e.outer("X");
  e.node("Add", {"X", "X"}, {"e_sum"});
  if (else_changes_rank) {
    e.node("ReduceSum", {"e_sum"}, {"e_out"}, {{"keepdims", A::i(0)}});
  } else {
    e.node("Mul", {"e_sum", "X"}, {"e_out"});
  }
  e.outputs({"e_out"});
  m.graph.outputs = {m.graph.find("Y")};
  return m;
}

TEST_CASE("If merges branches or takes the known one") {
  {  // static, cond unknown: both branches 3x4; cost = the larger branch, 2*12 = 24.
    Model m = if_model("3x4", "scalar:bool");
    Totals c = infer_and_cost(m, 0);
    CHECK(val(m.graph, "Y").shape.str() == "3x4");
    CHECK(val(m.graph, "Y").dtype == DType::Float32);
    CHECK(c.flops.known);
    CHECK(c.flops.v == 24);  // else: Add 12 + Mul 12
  }
  {  // cond known true: the then branch only, 3*4 = 12 FLOPs; else is not inferred.
    Model m = if_model("3x4", "scalar:bool=1");
    Totals c = infer_and_cost(m, 0);
    CHECK(val(m.graph, "Y").shape.str() == "3x4");
    CHECK(c.flops.v == 12);
    CHECK(!val(*m.graph.nodes[0].subgraphs[1], "e_out").shape.rank_known);
  }
  {  // cond known false: else, 24.
    Model m = if_model("3x4", "scalar:bool=0");
    CHECK(infer_and_cost(m, 0).flops.v == 24);
  }
  {  // symbolic: shapes flow; cost unknown.
    Model m = if_model("batchx4", "scalar:bool");
    Totals c = infer_and_cost(m, 0);
    CHECK(val(m.graph, "Y").shape.str() == "batchx4");
    CHECK(!c.flops.known);
  }
  {  // branches of different rank: unknown rank.
    Model m = if_model("3x4", "scalar:bool", true);
    infer_and_cost(m, 0);
    CHECK(val(m.graph, "Y").shape.str() == "*");
  }
  {  // unknown-rank input.
    Model m = if_model("*", "scalar:bool");
    infer_and_cost(m, 0);
    CHECK(val(m.graph, "Y").shape.str() == "*");
  }
}

TEST_CASE("If: branches with different dims join to unknown dims; dtype clash is an error") {
  Model m;
  Builder b{m.graph};
  b.input("cond", "scalar:bool");
  Node& n = b.node("If", {"cond"}, {"Y"});
  Graph& tg = attach(n, m.graph, "then_branch");
  Graph& eg = attach(n, m.graph, "else_branch");
  Builder{tg}.node("Constant", {}, {"a"}, {{"value", A::tensor(DType::Float32, {2, 5})}});
  tg.outputs = {tg.find("a")};
  Builder{eg}.node("Constant", {}, {"b"}, {{"value", A::tensor(DType::Float32, {3, 5})}});
  eg.outputs = {eg.find("b")};
  InferResult res = infer_shapes(m, InferOptions{});
  CHECK(val(m.graph, "Y").shape.str() == "?x5");

  m.graph.nodes[0].subgraphs[1]->nodes[0].attrs["value"] = A::tensor(DType::Int64, {3, 5});
  InferResult res2 = infer_shapes(m, InferOptions{});
  bool clash = false;
  for (const auto& w : res2.warnings) clash = clash || w.find("int64 in else_branch") != std::string::npos;
  CHECK(clash);
}

// ---- Loop ----
// Loop(M, cond, y): body cond_out = cond_in; y_out = Add(y_in, one); scan = y_out.
// `reduce_state` makes y_out = ReduceSum(y_in, axes=[0], keepdims=1) instead (a state that changes shape).
Model loop_model(const std::string& m_spec, const std::string& cond_spec, const std::string& y_spec,
                 bool reduce_state = false) {
  Model m;
  Builder b{m.graph};
  if (!m_spec.empty()) b.input("M", m_spec);
  if (!cond_spec.empty()) b.input("cond", cond_spec);
  b.input("y", y_spec);
  Node& n = b.node("Loop", {m_spec.empty() ? "" : "M", cond_spec.empty() ? "" : "cond", "y"},
                   {"res_y", "res_scan"});
  Graph& body = attach(n, m.graph, "body");
  Builder bb{body};
  bb.input("iter", "scalar:int64");
  bb.input("cond_in", "scalar:bool");
  bb.input("y_in", "*");
  if (reduce_state) {
    bb.node("ReduceSum", {"y_in"}, {"y_out"}, {{"keepdims", A::i(1)}});
    // axes input: reduce axis 0 only
    int ax = body.add_value("axes0");
    set_value_from_spec(body.values[ax], "1:int64=0");
    body.values[ax].is_initializer = true;
    body.nodes.back().inputs.push_back(ax);
  } else {
    bb.node("Constant", {}, {"one"}, {{"value", A::tensor(DType::Float32, {}, {1.0})}});
    bb.node("Add", {"y_in", "one"}, {"y_out"});
  }
  bb.outputs({"cond_in", "y_out", "y_out"});
  m.graph.outputs = {m.graph.find("res_y"), m.graph.find("res_scan")};
  return m;
}

TEST_CASE("Loop: trip count, carried state, scan outputs, cost") {
  {  // M = 5, cond true: scan output 5x1; cost 5 * 1 Add of one element = 5.
    Model m = loop_model("scalar:int64=5", "scalar:bool=1", "1");
    Totals c = infer_and_cost(m, 0);
    CHECK(val(m.graph, "res_y").shape.str() == "1");
    CHECK(val(m.graph, "res_scan").shape.str() == "5x1");
    CHECK(val(m.graph, "res_scan").dtype == DType::Float32);
    REQUIRE(c.flops.known);
    CHECK(c.flops.v == 5);
  }
  {  // static 2x3 state: 4 iterations * 6 adds = 24.
    Model m = loop_model("scalar:int64=4", "", "2x3");
    Totals c = infer_and_cost(m, 0);
    CHECK(val(m.graph, "res_scan").shape.str() == "4x2x3");
    CHECK(c.flops.v == 24);
  }
  {  // M unknown: leading dim unknown, cost unknown.
    Model m = loop_model("scalar:int64", "scalar:bool=1", "1");
    Totals c = infer_and_cost(m, 0);
    CHECK(val(m.graph, "res_scan").shape.str() == "?x1");
    CHECK(!c.flops.known);
  }
  {  // cond not known: the loop may stop early, so M is not the trip count.
    Model m = loop_model("scalar:int64=5", "scalar:bool", "1");
    CHECK(!infer_and_cost(m, 0).flops.known);
    CHECK(val(m.graph, "res_scan").shape.str() == "?x1");
  }
  {  // cond known false: no iteration.
    Model m = loop_model("scalar:int64=5", "scalar:bool=0", "1");
    Totals c = infer_and_cost(m, 0);
    CHECK(val(m.graph, "res_scan").shape.str() == "0x1");
    CHECK(c.flops.v == 0);
  }
  {  // symbolic state.
    Model m = loop_model("scalar:int64=3", "", "bx8");
    infer_and_cost(m, 0);
    CHECK(val(m.graph, "res_y").shape.str() == "bx8");
    CHECK(val(m.graph, "res_scan").shape.str() == "3xbx8");
  }
  {  // unknown-rank state.
    Model m = loop_model("scalar:int64=3", "", "*");
    infer_and_cost(m, 0);
    CHECK(val(m.graph, "res_y").shape.str() == "*");
    CHECK(val(m.graph, "res_scan").shape.str() == "*");
  }
  {  // a state whose shape the body changes (2x3 -> 1x3): that dim becomes unknown.
    Model m = loop_model("scalar:int64=3", "", "2x3", true);
    infer_and_cost(m, 0);
    CHECK(val(m.graph, "res_y").shape.str() == "?x3");
    CHECK(val(m.graph, "res_scan").shape.str() == "3x1x3");
  }
  {  // bad input: M not a scalar.
    Model m = loop_model("2:int64=5,5", "", "1");
    InferResult res;
    infer_and_cost(m, 0, &res);
    bool clash = false;
    for (const auto& w : res.warnings) clash = clash || w.find("must be a scalar") != std::string::npos;
    CHECK(clash);
  }
}

// ---- Scan ----
// Scan(initial, x): body sum_out = Add(sum_in, next), scan_out = sum_out.
Model scan_model(const std::string& init_spec, const std::string& x_spec,
                 std::map<std::string, Attribute> attrs = {}) {
  Model m;
  Builder b{m.graph};
  b.input("init", init_spec);
  b.input("x", x_spec);
  attrs["num_scan_inputs"] = A::i(1);
  Node& n = b.node("Scan", {"init", "x"}, {"y", "z"}, attrs);
  Graph& body = attach(n, m.graph, "body");
  Builder bb{body};
  bb.input("sum_in", "*");
  bb.input("next", "*");
  bb.node("Add", {"sum_in", "next"}, {"sum_out"});
  bb.outputs({"sum_out", "sum_out"});
  m.graph.outputs = {m.graph.find("y"), m.graph.find("z")};
  return m;
}

TEST_CASE("Scan: sequence axis, output axes, cost") {
  {  // test_scan9_sum: initial 2, x 3x2 -> y 2, z 3x2; cost 3 steps * 2 adds = 6.
    Model m = scan_model("2", "3x2");
    Totals c = infer_and_cost(m, 0);
    CHECK(val(m.graph, "y").shape.str() == "2");
    CHECK(val(m.graph, "z").shape.str() == "3x2");
    CHECK(c.flops.v == 6);
  }
  {  // scan along axis 1 and stack along axis 1: x 2x5 -> slices 2, z 2x5; 5 * 2 = 10.
    Model m =
        scan_model("2", "2x5", {{"scan_input_axes", A::ints({1})}, {"scan_output_axes", A::ints({-1})}});
    Totals c = infer_and_cost(m, 0);
    CHECK(val(m.graph, "z").shape.str() == "2x5");
    CHECK(c.flops.v == 10);
  }
  {  // symbolic sequence length.
    Model m = scan_model("4", "seqx4");
    Totals c = infer_and_cost(m, 0);
    CHECK(val(m.graph, "z").shape.str() == "seqx4");
    CHECK(!c.flops.known);
  }
  {  // unknown-rank scan input: the sequence length and slices are unknown.
    Model m = scan_model("4", "*");
    Totals c = infer_and_cost(m, 0);
    CHECK(!c.flops.known);
    CHECK(!val(m.graph, "z").shape.rank_known);
  }
  {  // bad input: scan axis out of range.
    Model m = scan_model("2", "3x2", {{"scan_input_axes", A::ints({2})}});
    InferResult res;
    infer_and_cost(m, 0, &res);
    bool clash = false;
    for (const auto& w : res.warnings) clash = clash || w.find("out of range") != std::string::npos;
    CHECK(clash);
  }
}

// ---- backend models against their reference outputs ----
TEST_CASE("control flow: ONNX backend models match reference output dims") {
  if (!std::ifstream(node_dir("test_if") + "/model.onnx")) {
    MESSAGE("libonnx-testdata not installed; skipped");
    return;
  }
  {  // test_if: cond = true, then_out is a 5-element constant.
    Model m = check_backend_model("test_if");
    CHECK(infer_and_cost(m, 0).flops.v == 0);  // a Constant in either branch
  }
  {  // test_loop11: 5 iterations of Add(iter, one) + Add(y_in, slice) = 2 FLOPs each: 10.
    Model m = check_backend_model("test_loop11");
    InferOptions opts;
    opts.values["trip_count"] = {5};
    opts.values["cond"] = {1};
    Report r = build_report(m, infer_shapes(m, opts));
    REQUIRE(r.nodes[0].cost.flops.known);
    CHECK(r.nodes[0].cost.flops.v == 10);
  }
  {  // test_scan9_sum (opset 9): 3 steps * 2 adds = 6.
    Model m = check_backend_model("test_scan9_sum");
    CHECK(infer_and_cost(m, 0).flops.v == 6);
  }
  {  // test_scan_sum (opset 8, batch axis): batch 1 * 3 steps * 2 adds = 6.
    Model m = check_backend_model("test_scan_sum");
    CHECK(infer_and_cost(m, 0).flops.v == 6);
  }
  for (const char* t :
       {"test_range_int32_type_negative_delta", "test_range_float_type_positive_delta",
        "test_constantofshape_int_zeros", "test_constantofshape_int_shape_zero",
        "test_constantofshape_float_ones", "test_eyelike_with_dtype", "test_constant",
        "test_reduce_sum_empty_axes_input_noop_example", "test_reduce_sum_keepdims_example",
        "test_reduce_log_sum_exp_negative_axes_keepdims_example",
        "test_reduce_mean_default_axes_keepdims_example", "test_reduce_l2_do_not_keepdims_example",
        "test_argmax_negative_axis_keepdims_example", "test_argmin_no_keepdims_example_select_last_index"}) {
    CAPTURE(t);
    check_backend_model(t);
  }
}

// ---- sequences and optionals ----
TEST_CASE("sequence and optional ops") {
  const std::vector<OpCase> cases = {
      // Sequences carry their element dtype; element shapes are not tracked (unknown rank).
      {"sequence construct", "SequenceConstruct", {"2x3", "4x3"}, {}, {"*"}, 0, 0},
      {"sequence construct mixed dtypes", "SequenceConstruct", {"2:int64", "2"}, {}, {"!"}},
      {"sequence empty", "SequenceEmpty", {}, {{"dtype", A::i(7)}}, {"*"}, 0, 0},
      {"sequence insert", "SequenceInsert", {"*", "2x3"}, {}, {"*"}, 0, 0},
      {"sequence erase", "SequenceErase", {"*", "scalar:int64=0"}, {}, {"*"}, 0, 0},
      {"sequence at", "SequenceAt", {"*", "scalar:int64=0"}, {}, {"*"}, 0, 0},
      {"sequence length", "SequenceLength", {"*"}, {}, {"scalar"}, 0, 0},
      {"split to sequence", "SplitToSequence", {"6x4", "scalar:int64=2"}, {}, {"*"}, 0, 0},
      {"concat from sequence", "ConcatFromSequence", {"*"}, {{"axis", A::i(0)}}, {"*"}, 0, 0},
      {"optional", "Optional", {"3x4"}, {}, {"3x4"}, 0, 0},
      {"optional symbolic", "Optional", {"nx4"}, {}, {"nx4"}},
      {"optional empty", "Optional", {}, {}, {"*"}},
      {"optional has element", "OptionalHasElement", {"3x4"}, {}, {"scalar"}, 0, 0},
      {"optional get element", "OptionalGetElement", {"nx4"}, {}, {"nx4"}, 0, 0},
      {"optional get element unknown rank", "OptionalGetElement", {"*"}, {}, {"*"}},
  };
  for (const auto& tc : cases) check_case(tc);
  CHECK(run_op("SequenceConstruct", {"2:int64", "3:int64"}).out(0).dtype == DType::Int64);
  CHECK(run_op("SequenceAt", {"*:int32", "scalar:int64=0"}).out(0).dtype == DType::Int32);
  CHECK(run_op("SequenceEmpty", {}).out(0).dtype == DType::Float32);
  CHECK(run_op("SequenceLength", {"*"}).out(0).dtype == DType::Int64);
  CHECK(run_op("OptionalHasElement", {"3"}).out(0).dtype == DType::Bool);
  // An omitted input is an empty optional (opset 18): known false.
  auto empty = run_op("OptionalHasElement", {""});
  REQUIRE(empty.out(0).data);
  CHECK(empty.out(0).data->ints[0].value() == 0);
}
