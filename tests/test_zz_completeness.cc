// tests/test_zz_completeness.cc — every registered op has a shape rule, a cost rule, a formula (enforced by
// OpRegistry::add) and at least one test against an independent expectation (a table row or a passing ONNX
// backend case). The file name sorts last so that the other test files have recorded their coverage first.
#include <doctest/doctest.h>

#include "coverage.h"
#include "flopwise/ops.h"

TEST_CASE("completeness: every registered op is tested") {
  const auto& covered = fwtest::covered_ops();
  if (covered.size() < 50) {
    MESSAGE("completeness check skipped: run the whole suite (only " << covered.size() << " ops exercised)");
    return;
  }
  std::string missing;
  int n = 0;
  for (const auto& r : flopwise::OpRegistry::instance().records()) {
    CHECK(static_cast<bool>(r.infer));
    CHECK(static_cast<bool>(r.cost));
    CHECK(!r.formula.empty());
    std::string key =
        r.domain.empty() ? std::string(r.name) : std::string(r.domain) + "::" + std::string(r.name);
    if (!covered.count(key)) {
      missing += " " + key;
      ++n;
    }
  }
  CHECK_MESSAGE(n == 0, n << " registered op(s) have no test row:" << missing);
}
