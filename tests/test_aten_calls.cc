// tests/test_aten_calls.cc — aten calls that stock models run and models/pt2/zoo_sweep.py found unpriced,
// each through the neutral aten table as a recorded call (cost_aten_calls: the path profiler traces and .pt2
// programs share), its expected figure written beside it.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "aten_call_util.h"
#include "flopwise/torch_trace.h"

using namespace flopwise;
using fwtest::recorded_call;

TEST_CASE("aten: random draws shaped as their input cost no FLOPs, and are priced") {
  // torchvision's StochasticDepth in train mode (every ConvNeXt, EfficientNet, Swin, MaxViT block):
  // noise.bernoulli_(survival_rate); FlopCounterMode counts 0 for it, so does flopwise; it is priced, not
  // left out. The in-place fills (uniform_, normal_...) likewise.
  const std::vector<AtenCall> calls = {
      recorded_call("aten::bernoulli_", {"float", "Scalar", ""}, {{{8, 1, 1, 1}}, {}, {}}, {"", "0.9", ""}),
      recorded_call("aten::bernoulli", {"float", ""}, {{{4, 16}}, {}}, {"", ""}),
      recorded_call("aten::uniform_", {"float", "Scalar", "Scalar", ""}, {{{4, 16}}, {}, {}, {}},
                    {"", "0", "1", ""}),
  };
  std::vector<AtenCost> c = cost_aten_calls(calls);
  REQUIRE(c.size() == calls.size());
  for (size_t i = 0; i < c.size(); ++i) {
    CAPTURE(calls[i].op);
    CHECK(c[i].costed);
    CHECK(c[i].why.empty());
    CHECK(c[i].macs == 0);
    CHECK(c[i].flops == 0);
  }
}

TEST_CASE("aten: index_copy and index_add, a static KV cache's update") {
  // transformers' StaticCache (the ExecuTorch export, convert_and_export_with_cache):
  // k_out.index_copy_(2, cache_position, k_new) with k_out (1, 2, 64, 16) and one new position: a copy, no
  // arithmetic. index_add of the same source adds each of its 1 * 2 * 1 * 16 = 32 elements: 32 FLOPs
  // (COUNTING.md: a scatter's reduction is 1 per update).
  const std::vector<AtenCall> calls = {
      recorded_call("aten::index_copy_", {"float", "Scalar", "long int", "float"},
                    {{{1, 2, 64, 16}}, {}, {{1}}, {{1, 2, 1, 16}}}, {"", "2", "", ""}),
      recorded_call("aten::index_add", {"float", "Scalar", "long int", "float", "Scalar"},
                    {{{1, 2, 64, 16}}, {}, {{1}}, {{1, 2, 1, 16}}, {}}, {"", "2", "", "", "1"}),
  };
  std::vector<AtenCost> c = cost_aten_calls(calls);
  REQUIRE(c.size() == 2);
  CHECK(c[0].costed);
  CHECK(c[0].flops == 0);
  CHECK(c[1].costed);
  CHECK(c[1].flops == 32);
}
