#include <doctest/doctest.h>

#include "flopwise/dim.h"
#include "flopwise/ir.h"

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
  CHECK(flopwise::parse_shape("max_lenx4")->dims[0].same_as(Dim::symbol("max_len")));
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
