// tests/test_dim.cc — dims and counts (flopwise/dim.h): known, symbolic and unknown arithmetic, overflow to
// unknown, shape text round trips, polynomials accumulated in place.
#include <doctest/doctest.h>

#include "cost/count_interner.h"
#include "flopwise/dim.h"
#include "flopwise/errors.h"
#include "flopwise/ir.h"
#include "flopwise/pins.h"

using flopwise::Dim;

TEST_CASE("dim arithmetic: known, symbolic, unknown") {
  Dim b = Dim::symbol("batch"), s = Dim::symbol("seq");
  CHECK((Dim(3) * Dim(4)).value() == 12);
  CHECK((b * Dim(12) / Dim(12)).same_as(b));
  CHECK((b * s * Dim(768) / (b * s)).value() == 768);
  CHECK((b + b).str() == "2*batch");
  CHECK((b * Dim(3) + Dim(1)).str() == "3*batch + 1");
  CHECK((Dim(7) / Dim(2)).is_unknown());  // not exact
  CHECK(Dim::floor_div(Dim(-7), Dim(2)).value() == -4);
  CHECK(Dim::ceil_div(Dim(7), Dim(2)).value() == 4);
  CHECK((b + Dim::unknown()).is_unknown());
  CHECK(!Dim::unknown().same_as(Dim::unknown()));
  CHECK((b * Dim(2)).substitute({{"batch", 8}}).value() == 16);
}

TEST_CASE("dim arithmetic overflows to unknown") {
  Dim big(int64_t{1} << 40);
  CHECK((big * big).is_unknown());
  flopwise::Count c{int64_t{1} << 62};
  flopwise::Count d = c * flopwise::Count{4};
  CHECK(!d.known);
  CHECK(d.overflowed);
}

TEST_CASE("shape parsing round trip") {
  auto s = flopwise::parse_shape("1x3x224x224");
  REQUIRE(s);
  CHECK(s->str() == "1x3x224x224");
  auto t = flopwise::parse_shape("batchx128");
  REQUIRE(t);
  CHECK(t->dims[0].same_as(Dim::symbol("batch")));
  // Every 'x' separates in the x form (what a user means by 1x3xHxW); a name with an 'x' in it needs
  // commas, and the x form refuses a piece that is no name rather than reading other dims.
  auto hw = flopwise::parse_shape("1x3xHxW");
  REQUIRE(hw);
  REQUIRE(hw->rank() == 4);
  CHECK(hw->dims[2].same_as(Dim::symbol("H")));
  CHECK(hw->dims[3].same_as(Dim::symbol("W")));
  CHECK(!flopwise::parse_shape("max_lenx4"));
  auto ml = flopwise::parse_shape("max_len,4");
  REQUIRE(ml);
  CHECK(ml->dims[0].same_as(Dim::symbol("max_len")));
  CHECK(ml->dims[1].same_as(Dim(4)));
  CHECK(flopwise::parse_shape("1,3,H,W")->rank() == 4);
  CHECK(!flopwise::parse_shape("1xx3"));
}

TEST_CASE("counts: known, symbolic (polynomial in dynamic dims), unknown") {
  using flopwise::Count;
  Dim b = Dim::symbol("batch"), s = Dim::symbol("seq");
  Count macs = Count::of(b * s) * Count{768 * 768};  // a Linear 768->768 on [batch, seq, 768]
  CHECK(macs.symbolic());
  CHECK(macs.sym.str() == "589824*batch*seq");  // 768*768 = 589824
  Count total = macs + Count::of(b * s * s) * Count{64};
  CHECK(total.sym.str() == "64*batch*seq*seq + 589824*batch*seq");
  CHECK((total + Count{5}).sym.str() == "64*batch*seq*seq + 589824*batch*seq + 5");
  CHECK(!(total + Count::unknown()).exact());  // unknown is sticky
  CHECK((Count::of(b) * Count{0}).known);      // times zero is zero
  CHECK(total.sym.substitute({{"batch", 2}, {"seq", 10}}).value() == 2 * 64 * 100 + 589824 * 20);
}

TEST_CASE("dims: copies, moves and assignments keep unknown, known and symbolic apart; shape text") {
  Dim b = Dim::symbol("batch");
  Dim u, k(7), p = b * Dim(2) + Dim(1);
  Dim u2 = u, k2 = k, p2 = p;  // copies
  CHECK(u2.is_unknown());
  CHECK(k2.is_known());
  CHECK(k2.value() == 7);
  CHECK(p2.poly_id() == p.poly_id());  // a copy shares the polynomial
  Dim u3 = std::move(u2), p3 = std::move(p2);
  CHECK(u3.is_unknown());
  CHECK(p3.str() == "2*batch + 1");
  k2 = u3;  // known <- unknown
  CHECK(k2.is_unknown());
  u3 = p3;  // unknown <- symbolic
  CHECK(u3.is_symbolic());
  CHECK(!u3.is_unknown());
  p3 = Dim(0);  // symbolic <- known: p (the original) still holds the polynomial
  CHECK(p3.is_known());
  CHECK(p.str() == "2*batch + 1");
  // Shape::str by hand: a sum in parentheses, unknown dims as '?', "*" and "scalar".
  CHECK(flopwise::Shape({p, Dim(64), Dim(), b}).str() == "(2*batch + 1)x64x?xbatch");
  CHECK(flopwise::Shape::unknown_rank().str() == "*");
  CHECK(flopwise::Shape::scalar().str() == "scalar");
}

TEST_CASE("polynomials: accumulating in place never changes a copy; fast paths equal the general product") {
  using flopwise::Count;
  Dim b = Dim::symbol("batch"), s = Dim::symbol("seq");
  Dim three = Dim(3) * b * s;
  Dim shared = three;        // a copy shares the representation
  Dim acc = three + Dim(0);  // also shared (adding zero returns the operand)
  acc += b * s;              // must not write into `three`/`shared`
  CHECK(acc.str() == "4*batch*seq");
  CHECK(three.str() == "3*batch*seq");
  CHECK(shared.str() == "3*batch*seq");
  acc += b * s;  // now unshared: in place
  CHECK(acc.str() == "5*batch*seq");
  acc += Dim(-5) * b * s;  // a coefficient reaching zero: the term goes, the dim becomes known 0
  REQUIRE(acc.is_known());
  CHECK(acc.value() == 0);
  Dim mixed = Dim(2) * b * s;
  mixed += b * s * s;  // a new monomial: merged, in canonical order (higher degree first)
  CHECK(mixed.str() == "batch*seq*seq + 2*batch*seq");
  // Scaling and monomial products: the same canonical result as the general product.
  CHECK((Dim(2) * b) * (Dim(3) * s) == Dim(6) * s * b);
  CHECK(((b + Dim(1)) * Dim(-2)).str() == "-2*batch - 2");
  CHECK((b * s * Dim(0)).is_known());
  CHECK(!(Dim(INT64_MAX) * b * Dim(2)).is_symbolic());  // a coefficient overflowing: unknown, never wrapped
  // Shape element counts: known dims folded once, zero and unknown dims as before.
  CHECK(flopwise::Shape({b, s, Dim(4096)}).numel_count().sym.str() == "4096*batch*seq");
  Count zero = flopwise::Shape({b, Dim(0), Dim()}).numel_count();
  CHECK((zero.known && zero.v == 0));
  CHECK(!flopwise::Shape({b, Dim()}).numel_count().exact());
  CHECK(flopwise::Shape({Dim(2), Dim(3)}).numel_count().v == 6);
}

TEST_CASE("polynomials: adding a known value to an unshared polynomial changes only its constant term") {
  // Expected texts by hand: 3*batch + 7 - 7 = 3*batch; INT64_MAX + 1 overflows, so unknown, never wrapped.
  Dim b = Dim::symbol("batch");
  Dim acc = Dim(3) * b + Dim(0);
  Dim copy = acc;  // shared: the first addition must leave it alone
  acc += Dim(7);
  CHECK(acc.str() == "3*batch + 7");
  CHECK(copy.str() == "3*batch");
  acc += Dim(5);  // unshared now: in place
  CHECK(acc.str() == "3*batch + 12");
  acc += Dim(0);
  CHECK(acc.str() == "3*batch + 12");
  acc += Dim(-12);  // the constant reaches zero: the term goes, the symbolic one stays
  CHECK(acc.str() == "3*batch");
  CHECK(acc == Dim(3) * b);
  Dim near_max = Dim(3) * b + Dim(INT64_MAX);  // unshared: the in-place path sees the overflow
  near_max += Dim(1);
  CHECK(near_max.is_unknown());
  Dim big = Dim(3) * b + Dim(INT64_MAX);
  Dim held = big;  // shared: the general merge sees it, with the same answer, and leaves the copy alone
  big += Dim(1);
  CHECK(big.is_unknown());
  CHECK(held.str() == "3*batch + 9223372036854775807");
  acc += Dim();  // unknown is sticky
  CHECK(acc.is_unknown());
}
TEST_CASE("sums by the memo (cost_detail::SumMemo) equal Count's own sums, flags included, hit or miss") {
  // Each sum is made twice into fresh accumulators (a miss, then a hit on the same operands): both must equal
  // the plain a += b, which defines it, by value and by flags: known + known, symbolic + known (the constant
  // overflowing too), symbolic + symbolic (a coefficient overflowing; terms cancelling to a known value),
  // unknown and overflowed operands.
  using flopwise::Count;
  Dim b = Dim::symbol("batch");
  const std::vector<Count> counts = {
      Count{7},
      Count{INT64_MAX},
      Count::of(Dim(3) * b),
      Count::of(Dim(-3) * b),
      Count::of(Dim(INT64_MAX) * b + Dim(1)),
      Count::of(b + Dim(INT64_MAX)),
      Count::unknown(),
      Count{0, false, true},  // overflowed
      Count{5, true, true},   // known, its overflow flag carried
  };
  flopwise::cost_detail::SumMemo memo;
  for (const Count& x : counts)
    for (const Count& y : counts)
      for (int round = 0; round < 2; ++round) {
        Count plain = x, memoised = x;
        plain += y;
        memo.add(memoised, y);
        CHECK(memoised == plain);
        CHECK(memoised.known == plain.known);
        CHECK(memoised.overflowed == plain.overflowed);
        CHECK(memoised.as_dim().str() == plain.as_dim().str());
      }
}

TEST_CASE(
    "--input grammar: names with colons (tf2onnx input:0, PyTorch onnx::Flatten_0), read from the right") {
  using flopwise::parse_input_pin;
  auto p = parse_input_pin("onnx::Flatten_0:1x34x96");
  CHECK(p.name == "onnx::Flatten_0");
  CHECK(p.shape->str() == "1x34x96");
  auto q = parse_input_pin("input:0:1x128x128x3");
  CHECK(q.name == "input:0");
  CHECK(q.shape->str() == "1x128x128x3");
  auto r = parse_input_pin("input:0:1xHxW:float16");
  CHECK(r.name == "input:0");
  CHECK(r.shape->rank() == 3);
  CHECK(r.dtype == flopwise::DType::Float16);
  auto t = parse_input_pin("1x3x224x224:float32");  // inputs in order: no name
  CHECK(t.name.empty());
  CHECK(t.dtype == flopwise::DType::Float32);
  CHECK(parse_input_pin("ids:batch,max_len").shape->rank() == 2);
  CHECK_THROWS_WITH_AS(parse_input_pin("X:2x3:complex7"), doctest::Contains("unknown dtype"),
                       flopwise::UsageError);
  CHECK_THROWS_AS(parse_input_pin(":1x3"), flopwise::UsageError);
}
