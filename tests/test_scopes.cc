// tests/test_scopes.cc — module scopes recovered from exporter node names (torch.onnx naming, checked on
// models/ exports).
#include <doctest/doctest.h>

#include "flopwise/onnx_import.h"

using Scope = std::vector<std::string>;

TEST_CASE("scope paths from exporter node names") {
  struct Case {
    const char* name;
    Scope expect;
  } cases[] = {
      {"/layer1/layer1.0/conv1/Conv", {"layer1", "layer1.0", "layer1.0.conv1"}},
      {"/conv1/Conv", {"conv1"}},
      {"/Shape", {}},       // the root module's own op
      {"Constant_40", {}},  // no path: root
      {"", {}},
      // Sequential inside a module: "conv" under features.5, then "conv.0" repeats "conv".
      {"/features/features.5/conv/conv.0/conv.0.2/Clip",
       {"features", "features.5", "features.5.conv", "features.5.conv.0", "features.5.conv.0.2"}},
      // ModuleList items carry the list's name: "layer.0" under "encoder".
      {"/encoder/layer.0/attention/self/MatMul",
       {"encoder", "encoder.layer.0", "encoder.layer.0.attention", "encoder.layer.0.attention.self"}},
      {"/h.0/attn/Reshape", {"h.0", "h.0.attn"}},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.name));
    CHECK(flopwise::scope_from_node_name(c.name) == c.expect);
  }
}
