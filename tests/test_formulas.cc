// tests/test_formulas.cc — exact formulas in image sizes: floor/ceil/min/max terms in dims (flopwise/dim.h),
// checked by brute force against integer arithmetic, and whole models analysed with symbolic H and W checked
// against a concrete re-analysis at each point, node by node.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>

#include "../shape_inference/helpers.h"
#include "cli_util.h"
#include "flopwise/analyse.h"
#include "flopwise/dim.h"
#include "flopwise/sweep.h"

using flopwise::Count;
using flopwise::Dim;

namespace {

// Python's floor division, by hand.
int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t eval(const Dim& d, int64_t x, int64_t y = 0) {
  Dim v = d.substitute({{"x", x}, {"y", y}});
  REQUIRE_MESSAGE(v.is_known(), d.str() << " at x=" << x << " y=" << y << " is " << v.str());
  return v.value();
}

}  // namespace

TEST_CASE("dims: floor, ceil, min, max of polynomials are exact for every integer (brute force)") {
  const Dim x = Dim::symbol("x"), y = Dim::symbol("y");
  for (int64_t a : {-7, -3, -1, 1, 2, 3, 5})
    for (int64_t c : {-9, -4, -1, 0, 1, 2, 6, 11})
      for (int64_t d : {-4, -3, -2, 1, 2, 3, 4, 7, 16}) {
        Dim p = Dim(a) * x + Dim(c);
        Dim f = Dim::floor_div(p, Dim(d)), g = Dim::ceil_div(p, Dim(d));
        for (int64_t v = -40; v <= 40; ++v) {
          CAPTURE(f.str());
          CHECK(eval(f, v) == floordiv(a * v + c, d));
          CHECK(eval(g, v) == -floordiv(-(a * v + c), d));  // ceil(n/d) = -floor(-n/d)
        }
      }
  // Nested floors, as strided layers stack: floor((floor((x + c)/a) + e)/b).
  for (int64_t a : {2, 3, 4})
    for (int64_t b : {2, 3, 5})
      for (int64_t c : {-3, 0, 1, 5})
        for (int64_t e : {-2, 0, 1, 3}) {
          Dim f = Dim::floor_div(Dim::floor_div(x + Dim(c), Dim(a)) + Dim(e), Dim(b));
          for (int64_t v = -60; v <= 60; ++v) CHECK(eval(f, v) == floordiv(floordiv(v + c, a) + e, b));
        }
  // Simplifications that hold for all integers: floor(floor(x/a)/b) = floor(x/(a*b)); the gcd; whole parts
  // out.
  CHECK(Dim::floor_div(Dim::floor_div(x, Dim(2)), Dim(3)).str() == Dim::floor_div(x, Dim(6)).str());
  CHECK(Dim::floor_div(Dim(4) * x + Dim(2), Dim(6)).str() ==
        Dim::floor_div(Dim(2) * x + Dim(1), Dim(3)).str());
  CHECK(Dim::floor_div(Dim(6) * x + Dim(5), Dim(3)).str() == "2*x + 1");
  CHECK(Dim::floor_div(x * y + Dim(2) * x, Dim(1)).str() == (x * y + Dim(2) * x).str());
  // Two variables and a product.
  Dim f = Dim::floor_div(Dim(3) * x * y + y - Dim(1), Dim(4));
  for (int64_t u = -9; u <= 9; ++u)
    for (int64_t v = -9; v <= 9; ++v) CHECK(eval(f, u, v) == floordiv(3 * u * v + v - 1, 4));
  // min and max: decided when the difference is a constant, an exact term otherwise.
  CHECK(Dim::min(x + Dim(3), x).str() == "x");
  CHECK(Dim::max(x + Dim(3), x).str() == "x + 3");
  Dim m = Dim::min(x, Dim(512)), M = Dim::max(Dim(2) * x, y + Dim(1));
  CHECK(m.str() == "min(x, 512)");
  CHECK(Dim::min(Dim(512), x).str() == m.str());  // commutative
  for (int64_t u = -3; u <= 700; u += 7) {
    CHECK(eval(m, u) == std::min<int64_t>(u, 512));
    for (int64_t v = -5; v <= 5; ++v) CHECK(eval(M, u, v) == std::max<int64_t>(2 * u, v + 1));
  }
  // The symbols a formula depends on are the model's, not the derived terms.
  std::vector<std::string> syms = (Dim::floor_div(x + Dim(1), Dim(2)) * Dim::min(y, Dim(5))).symbols();
  std::sort(syms.begin(), syms.end());
  CHECK(syms == std::vector<std::string>{"x", "y"});
}

TEST_CASE("dims: a conv or pool output size with symbolic input equals the concrete rule at every size") {
  const Dim h = Dim::symbol("x");
  for (int64_t k : {1, 2, 3, 5, 7})
    for (int64_t s : {1, 2, 3, 4})
      for (int64_t dil : {1, 2})
        for (int64_t pb : {0, 1, 2})
          for (int64_t pe : {0, 1, 3})
            for (bool ceil_mode : {false, true}) {
              Dim sym = flopwise::conv_out_dim(h, k, s, dil, pb, pe, ceil_mode);
              if (sym.is_unknown()) {  // only a ceil-mode case with padding wider than the window
                CHECK((ceil_mode && pe >= dil * (k - 1) + 1));
                continue;
              }
              for (int64_t v = dil * (k - 1) + 1; v <= 80; ++v) {
                Dim known = flopwise::conv_out_dim(Dim(v), k, s, dil, pb, pe, ceil_mode);
                CAPTURE(sym.str());
                CHECK(eval(sym, v) == known.value());
              }
            }
}

namespace {

// A model analysed with a symbolic input shape, then its formulas evaluated at (h, w) and compared with
// the model analysed at that shape: every node's params, MACs, FLOPs and memory bytes, and the totals.
void check_formulas(const std::string& path, const std::string& input, const std::string& sym_shape,
                    const std::vector<std::pair<int64_t, int64_t>>& points) {
  auto pins_of = [&](const std::string& shape) {
    flopwise::Pins p;
    p.inputs.push_back(flopwise::parse_input_pin(input + ":" + shape));
    return p;
  };
  const auto& conv = flopwise::find_convention("default");
  flopwise::Analysis sym = flopwise::analyse(path, pins_of(sym_shape), conv);
  CHECK(sym.report.totals.macs.symbolic());  // the formulas are there to test
  for (const auto& [h, w] : points) {
    CAPTURE(path);
    const auto& h_ = h;  // clang 14 cannot capture a structured binding
    CAPTURE(h_);
    const auto& w_ = w;  // clang 14 cannot capture a structured binding
    CAPTURE(w_);
    std::string shape = sym_shape;
    shape.replace(shape.find('H'), 1, std::to_string(h));
    shape.replace(shape.find('W'), 1, std::to_string(w));
    flopwise::Analysis conc = flopwise::analyse(path, pins_of(shape), conv);
    std::vector<std::pair<std::string, int64_t>> bind{{"H", h}, {"W", w}};
    auto same = [&](const Count& f, const Count& c, const std::string& what) {
      CAPTURE(what);
      REQUIRE(c.known);
      Dim v = f.as_dim().substitute(bind);
      REQUIRE_MESSAGE(v.is_known(), f.as_dim().str());
      CHECK(v.value() == c.v);
    };
    REQUIRE(sym.report.nodes.size() == conc.report.nodes.size());
    for (size_t i = 0; i < sym.report.nodes.size(); ++i) {
      const auto &a = sym.report.nodes[i].cost, &b = conc.report.nodes[i].cost;
      const std::string n(sym.report.nodes[i].name);
      same(a.params, b.params, n + " params");
      same(a.macs, b.macs, n + " macs");
      same(a.flops, b.flops, n + " flops");
      same(a.memory_bytes, b.memory_bytes, n + " memory_bytes");
    }
    same(sym.report.totals.macs, conc.report.totals.macs, "total macs");
    same(sym.report.totals.flops, conc.report.totals.flops, "total flops");
    same(sym.report.totals.memory_bytes, conc.report.totals.memory_bytes, "total memory_bytes");
  }
}

}  // namespace

TEST_CASE("formulas in H and W equal a concrete re-analysis at every point, per node (every bundled CNN)") {
  // Odd sizes, primes, 225, tiny and very large: every strided layer's rounding is exercised.
  std::vector<std::pair<int64_t, int64_t>> points{{224, 224}, {225, 225}, {7, 7},     {1, 1},
                                                  {97, 131},  {33, 4097}, {1000, 17}, {2, 3}};
  check_formulas(fwtest::model_path("resnet18.onnx"), "input", "1x3xHxW", points);
  check_formulas(fwtest::model_path("mobilenet_v2.onnx"), "input", "1x3xHxW", points);
  check_formulas(fwtest::model_path("resnet34.onnx"), "input", "1x3xHxW", points);
}

TEST_CASE("formulas in H and W: a UNet (max-pool down, ConvTranspose up, concatenated skips)") {
  const std::string plugin = fwtest::binary_dir() + "/libflopwise_torch.so";  // beside the CLI, not this test
  if (fwtest::fs::exists(plugin)) setenv("FLOPWISE_TORCH_PLUGIN", plugin.c_str(), 0);
  std::string zoo = fwtest::pt_zoo_dir();
  if (zoo.empty() || flopwise::find_torch_plugin().empty()) {
    MESSAGE("skipped: no TorchScript zoo or plugin (python3-torch, LibTorch)");
    return;
  }
  const std::string unet = zoo + "/unet.trace.pt";
  // The skips concatenate the up-sampled map with the encoder's: sizes where both agree (multiples of 4).
  check_formulas(unet, "x", "1x3xHxW", {{32, 32}, {4, 4}, {64, 96}, {1024, 12}, {228, 4}});
}

TEST_CASE("dims: derived terms stay bounded: a min of mins beyond a readable size is unknown, not huge") {
  Dim a = Dim::symbol("a"), b = Dim::symbol("b");
  Dim m = Dim::min(a, b);
  for (int i = 0; i < 40; ++i) m = Dim::min(m + Dim(1), Dim::max(m, a) + b);  // each name holds two copies
  CHECK(m.is_unknown());
  CHECK(Dim::floor_div(Dim::floor_div(Dim::floor_div(a + Dim(1), Dim(2)), Dim(2)), Dim(2)).str() ==
        "floor((a + 1)/8)");  // stacked strides: one term however deep
}

TEST_CASE(
    "formulas in batch and seq equal a concrete re-analysis at every point, per node (every bundled "
    "transformer)") {
  const auto& conv = flopwise::find_convention("default");
  struct Case {
    const char* model;
    int64_t max_seq;  // the position table's rows: the model runs up to there (the recorded assumption)
  };
  for (const Case& c : {Case{"bert.onnx", 128}, Case{"bert6.onnx", 128}, Case{"gpt2.onnx", 64}}) {
    CAPTURE(c.model);
    std::string path = fwtest::model_path(c.model);
    flopwise::Analysis sym = flopwise::analyse(path, flopwise::Pins{}, conv);
    REQUIRE(sym.report.totals.flops.symbolic());
    REQUIRE(sym.report.assumptions.size() == 1);
    CHECK(sym.report.assumptions[0].text() == "seq <= " + std::to_string(c.max_seq));
    for (auto [b, q] :
         std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 7}, {3, 13}, {2, c.max_seq}, {17, 31}}) {
      const auto& b_ = b;  // clang 14 cannot capture a structured binding
      CAPTURE(b_);
      const auto& q_ = q;  // clang 14 cannot capture a structured binding
      CAPTURE(q_);
      flopwise::Pins pins;
      pins.dims = {{"batch", b}, {"seq", q}};
      flopwise::Analysis conc = flopwise::analyse(path, pins, conv);
      flopwise::Bindings bind{{"batch", b}, {"seq", q}};
      REQUIRE(sym.report.nodes.size() == conc.report.nodes.size());
      for (size_t i = 0; i < sym.report.nodes.size(); ++i) {
        const auto &x = sym.report.nodes[i].cost, &y = conc.report.nodes[i].cost;
        CAPTURE(sym.report.nodes[i].name);
        for (auto [f, g] : {std::pair{&x.macs, &y.macs},
                            {&x.flops, &y.flops},
                            {&x.memory_bytes, &y.memory_bytes},
                            {&x.params, &y.params}}) {
          REQUIRE(g->known);
          Dim v = f->as_dim().substitute(bind);
          REQUIRE(v.is_known());
          CHECK(v.value() == g->v);
        }
      }
    }
  }
}
