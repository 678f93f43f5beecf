// tests/test_verify.cc — flopwise run --verify's comparison (flopwise/verify.h) on hand-built inputs: a
// static model whose values carry shapes, and executed ops as flopwise-runtime reports them. The expected
// outcomes follow from the shapes written here, not from the tool. The end-to-end runs on the bundled .pt
// files are in test_run.cc.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "flopwise/verify.h"

using json = nlohmann::json;
using namespace flopwise;

namespace {

int add(Model& m, const std::string& name, std::vector<Dim> dims) {
  int v = m.graph.add_value(name);
  m.graph.values[v].shape = Shape(std::move(dims));
  return v;
}

SourceOp op(const std::string& kind, const std::string& scope, std::vector<std::vector<int>> ins,
            std::vector<std::vector<int>> outs) {
  return SourceOp{kind, scope, std::move(ins), std::move(outs)};
}

}  // namespace

TEST_CASE("verify: equal shapes agree, a differing one is reported with both shapes") {
  Model m;
  int x = add(m, "x", {1, 8}), y = add(m, "y", {1, 8}), z = add(m, "z", {1, 4});
  m.source_ops = {op("aten::relu", "fc", {{x}}, {{y}}), op("aten::narrow", "fc", {{y}, {}, {}, {}}, {{z}})};
  json ran = json::parse(R"([
    {"iter": 0, "name": "aten::relu", "scope": "fc", "input_shapes": [[1, 8]], "output_shapes": [[1, 8]]},
    {"iter": 0, "name": "aten::narrow", "scope": "fc", "input_shapes": [[1, 8], null, null, null],
     "output_shapes": [[1, 5]]},
    {"iter": 1, "name": "aten::relu", "scope": "fc", "input_shapes": [[9, 9]], "output_shapes": [[9, 9]]}])");
  VerifyResult r = verify_shapes(m, ran);
  CHECK(r.executed == 2);  // the first iteration only
  CHECK(r.matched == 2);
  CHECK(r.shapes_checked == 3);  // relu in, relu out, narrow in
  REQUIRE(r.disagreements.size() == 1);
  CHECK(r.disagreements[0].find("fc: aten::narrow #1 output 0: ran [1,5]") == 0);
  CHECK(r.disagreements[0].find("1x4") != std::string::npos);
  CHECK_FALSE(r.ok());
}

TEST_CASE(
    "verify: an op that never ran does not shift the pairing; extra executed ops are listed, not failed") {
  Model m;
  int x = add(m, "x", {2, 8}), a = add(m, "a", {2, 4}), b = add(m, "b", {2, 2});
  // Two slices of x statically; the executor ran only the second (the first was dead).
  m.source_ops = {op("aten::slice", "", {{x}, {}, {}, {}, {}}, {{a}}),
                  op("aten::slice", "", {{x}, {}, {}, {}, {}}, {{b}})};
  json ran = json::parse(R"([
    {"iter": 0, "name": "aten::slice", "scope": "", "input_shapes": [[2, 8], null, null, null, null],
     "output_shapes": [[2, 2]]},
    {"iter": 0, "name": "aten::item", "scope": "", "input_shapes": [[]], "output_shapes": [null]},
    {"iter": 0, "name": "aten::size", "scope": "", "input_shapes": [null, null], "output_shapes": [null]}])");
  VerifyResult r = verify_shapes(m, ran);
  CHECK(r.executed == 2);  // aten::size had no tensor
  CHECK(r.matched == 1);
  CHECK(r.disagreements.empty());  // paired with the [2,2] slice, not the first of the name
  CHECK(r.shapes_checked == 2);
  REQUIRE(r.unmatched.size() == 1);
  CHECK(r.unmatched[0].find("(model): aten::item #1") == 0);
  CHECK(r.ok());
}

TEST_CASE("verify: tensor lists, unknown static dims, vararg stacks") {
  Model m;
  int p = add(m, "p", {1, 2}), q = add(m, "q", {1, 3}), c = add(m, "c", {1, Dim()});
  int u = m.graph.add_value("u");  // rank unknown
  m.source_ops = {op("aten::cat", "blk", {{p, q}, {}}, {{c}}), op("aten::cat", "blk", {{p, q}, {}}, {{u}}),
                  op("aten::einsum", "blk", {{}, {p, q}}, {{u}})};
  json ran = json::parse(R"([
    {"iter": 0, "name": "aten::cat", "scope": "blk", "input_shapes": [{"list": [[1, 2], [1, 3]]}, null],
     "output_shapes": [[1, 5]]},
    {"iter": 0, "name": "aten::cat", "scope": "blk", "input_shapes": [{"list": [[1, 2], [1, 3], [1, 1]]}, null],
     "output_shapes": [[1, 6]]},
    {"iter": 0, "name": "aten::einsum", "scope": "blk", "input_shapes": [null, null, null, [7]],
     "output_shapes": [[1, 6]]}])");
  VerifyResult r = verify_shapes(m, ran);
  CHECK(r.matched == 3);
  // cat #1: both list items agree; its output 1x? is unknown statically (not compared, not a failure).
  // cat #2: a list of 3 against 2 is a disagreement; its output's rank is unknown statically.
  // einsum: 4 stack entries against 2 arguments: not compared at all; its output is unknown statically.
  CHECK(r.shapes_checked == 2);
  CHECK(r.unknown_static == 3);
  REQUIRE(r.disagreements.size() == 1);
  CHECK(r.disagreements[0].find("blk: aten::cat #2 input 0: ran a list of 3 tensors") == 0);
}
