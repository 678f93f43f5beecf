// tests/test_ops_reduction.cc — reduction family: Reduce* with axes as input 1 (the importer moves the
// attribute there), keepdims, noop_with_empty_axes; ArgMax/ArgMin. Backend tests reduce a 3x2x2 tensor: e.g.
// test_reduce_sum_keepdims_example axes [1] -> 3x1x2, test_reduce_sum_do_not_keepdims_example -> 3x2,
// test_reduce_sum_empty_axes_input_noop_example -> 3x2x2, test_argmax_no_keepdims_example
// (2x2, axis 1) -> 2.
#include "op_test_util.h"

using namespace fwtest;

TEST_CASE("reduction ops") {
  const std::vector<OpCase> cases = {
      // label, op, inputs, attrs, expected shapes, MACs, FLOPs
      {"sum keepdims", "ReduceSum", {"3x4x5", "1:int64=1"}, {}, {"3x1x5"}, 0, 60},  // 3*4*5 = 60 reads
      {"sum no keepdims", "ReduceSum", {"3x4x5", "1:int64=1"}, {{"keepdims", A::i(0)}}, {"3x5"}, 0, 60},
      {"sum negative axis", "ReduceSum", {"3x4x5", "1:int64=-1"}, {}, {"3x4x1"}, 0, 60},
      {"sum two axes", "ReduceSum", {"3x4x5", "2:int64=0,2"}, {{"keepdims", A::i(0)}}, {"4"}, 0, 60},
      {"sum repeated axis", "ReduceSum", {"3x4x5", "2:int64=1,-2"}, {{"keepdims", A::i(0)}}, {"3x5"}},
      {"sum all (no axes)", "ReduceSum", {"3x4x5"}, {}, {"1x1x1"}, 0, 60},
      {"sum all no keepdims", "ReduceSum", {"3x4x5"}, {{"keepdims", A::i(0)}}, {"scalar"}, 0, 60},
      {"sum empty axes = all", "ReduceSum", {"3x2x2", "0:int64="}, {}, {"1x1x1"}, 0, 12},  // 3*2*2
      {"sum empty axes noop",
       "ReduceSum",
       {"3x2x2", "0:int64="},
       {{"noop_with_empty_axes", A::i(1)}},
       {"3x2x2"},
       0,
       0},
      {"sum axes unknown keepdims", "ReduceSum", {"3x4x5", "1:int64"}, {}, {"?x?x?"}},
      {"sum axes unknown no keepdims", "ReduceSum", {"3x4x5", "1:int64"}, {{"keepdims", A::i(0)}}, {"*"}},
      {"sum symbolic", "ReduceSum", {"batchx4x5", "1:int64=2"}, {}, {"batchx4x1"}, 0, kUnknown},
      {"sum unknown rank", "ReduceSum", {"*", "1:int64=1"}, {}, {"*"}, 0, kUnknown},
      {"sum unknown rank all", "ReduceSum", {"*"}, {{"keepdims", A::i(0)}}, {"scalar"}},
      {"sum axis out of range", "ReduceSum", {"3x4x5", "1:int64=3"}, {}, {"!"}},
      {"max", "ReduceMax", {"3x4x5", "1:int64=1"}, {}, {"3x1x5"}, 0, 60},
      {"min symbolic", "ReduceMin", {"nx4", "1:int64=0"}, {{"keepdims", A::i(0)}}, {"4"}, 0, kUnknown},
      {"prod", "ReduceProd", {"3x4x5", "1:int64=0"}, {}, {"1x4x5"}, 0, 60},
      {"mean", "ReduceMean", {"3x4x5", "1:int64=1"}, {}, {"3x1x5"}, 0, 75},  // 60 adds + 3*5 divides
      {"mean unknown rank", "ReduceMean", {"*", "1:int64=1"}, {}, {"*"}},
      {"mean bad axis", "ReduceMean", {"3x4", "1:int64=-3"}, {}, {"!"}},
      {"l1", "ReduceL1", {"3x4x5", "1:int64=1"}, {}, {"3x1x5"}, 0, 120},                // 2*60 (abs, add)
      {"sumsquare", "ReduceSumSquare", {"3x4x5", "1:int64=1"}, {}, {"3x1x5"}, 0, 120},  // 2*60 (square, add)
      {"l2", "ReduceL2", {"3x4x5", "1:int64=1"}, {}, {"3x1x5"}, 0, 135},                // 2*60 + 3*5 sqrt
      {"logsum", "ReduceLogSum", {"3x4x5", "1:int64=1"}, {}, {"3x1x5"}, 0, 75},         // 60 + 15 log
      {"logsumexp", "ReduceLogSumExp", {"3x4x5"}, {}, {"1x1x1"}, 0, 121},               // 2*60 + 1 log
      {"argmax", "ArgMax", {"3x4x5"}, {{"axis", A::i(1)}}, {"3x1x5"}, 0, 60},           // 60 compares
      {"argmax no keepdims", "ArgMax", {"2x2"}, {{"axis", A::i(1)}, {"keepdims", A::i(0)}}, {"2"}, 0, 4},
      {"argmax default axis", "ArgMax", {"2x2"}, {{"select_last_index", A::i(1)}}, {"1x2"}},
      {"argmin symbolic", "ArgMin", {"bx7"}, {{"axis", A::i(-1)}}, {"bx1"}, 0, kUnknown},
      {"argmin unknown rank", "ArgMin", {"*"}, {}, {"*"}},
      {"argmin bad axis", "ArgMin", {"2x3"}, {{"axis", A::i(2)}}, {"!"}},
  };
  for (const auto& tc : cases) check_case(tc);
  // Every Reduce op shares the shape rule: symbolic, unknown-rank and bad-axis rows for each.
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                         "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"}) {
    check_case({"symbolic", op, {"bx4", "1:int64=1"}, {}, {"bx1"}, 0, kUnknown});
    check_case({"unknown rank", op, {"*", "1:int64=1"}, {}, {"*"}, 0, kUnknown});
    check_case({"bad axis", op, {"bx4", "1:int64=2"}, {}, {"!"}});
  }
}

TEST_CASE("reduction dtypes and folding of shape values") {
  CHECK(run_op("ArgMax", {"2x3"}).out(0).dtype == DType::Int64);
  CHECK(run_op("ReduceSum", {"2x3:int32"}).out(0).dtype == DType::Int32);

  // numel of a shape: ReduceProd([2, 3, 4]) = 24.
  auto p = run_op("ReduceProd", {"3:int64=2,3,4"}, {{"keepdims", A::i(0)}});
  CHECK(p.out(0).shape.str() == "scalar");
  REQUIRE(p.out(0).data);
  CHECK(p.out(0).data->ints[0].value() == 24);

  // ReduceSum over axis 1 of [[1, 2], [3, 4]] = [3, 7].
  auto s = run_op("ReduceSum", {"2x2:int64=1,2,3,4", "1:int64=1"}, {{"keepdims", A::i(0)}});
  REQUIRE(s.out(0).data);
  CHECK(s.out(0).data->ints[0].value() == 3);
  CHECK(s.out(0).data->ints[1].value() == 7);

  // ReduceProd([batch, 4]) = 4*batch.
  auto sym = run_op("ReduceProd", {"2:int64=1,4"}, {{"keepdims", A::i(0)}});
  Graph& g = sym.model.graph;
  g.values[g.nodes[0].inputs[0]].data->ints = {Dim::symbol("batch"), Dim(4)};
  infer_graph(g, sym.result);
  REQUIRE(sym.out(0).data);
  CHECK(sym.out(0).data->ints[0].str() == (Dim::symbol("batch") * Dim(4)).str());

  // Float contents are not folded (only integer shape arithmetic is).
  CHECK(!run_op("ReduceMax", {"2=1.5,2.5"}).out(0).data);
}
