// tests/test_ml_real.cc — ai.onnx.ml files as the converters wrote them (skl2onnx 1.11, onnxmltools 1.3
// and 1.6: scikit-learn pipelines, SVMs, a random forest, XGBoost and LightGBM ensembles; models/exported,
// credited in models/README.md), issue 55 item 3. Every figure expected here is
// models/exported/ml_real.expect.json's: ml_real_expect.py computes it from each file's own attributes with
// the onnx library, by the rules the ai.onnx.ml records state (shape_inference/ops/ml.cc, ml_trees.cc): never
// flopwise's output.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "cli_util.h"
#include "flopwise/analyse.h"
#include "flopwise/convention.h"
#include "flopwise/cost.h"

namespace {

nlohmann::json expectations() {
  return nlohmann::json::parse(fwtest::slurp(fwtest::model_path("exported/ml_real.expect.json")));
}

flopwise::Analysis analyse_ml(const std::string& name, const flopwise::Pins& pins = {}) {
  return flopwise::analyse(fwtest::model_path("exported/" + name + ".onnx"), pins,
                           flopwise::default_convention());
}

// The symbols of the main graph's input dims: skl2onnx's `dim {}` batch dims, named <input>.<axis>.
std::set<std::string> input_symbols(const flopwise::Analysis& a) {
  std::set<std::string> out;
  const flopwise::Graph& g = a.model->graph;
  for (int idx : g.inputs)
    for (const flopwise::Dim& d : g.values[static_cast<size_t>(idx)].shape.dims)
      for (const std::string& s : d.symbols()) out.insert(s);
  return out;
}

}  // namespace

TEST_CASE("converter-written ai.onnx.ml files: every node counted, as their attributes give") {
  // Per file (ml_real.expect.json, per row), e.g.:
  // skl2onnx_titanic: LinearClassifier 2 labels x 11 features = 22 MACs, 2*22 + 2 + 2*(LOGISTIC 1 + 1) = 50;
  //   Imputer 2, Scaler 2*2, Normalizer(L1) 3*2: 62 FLOPs; params 22 + 2 + 2 + 2*2 = 30.
  // skl2onnx_rf_iris: 100 trees whose depths (the script walks the 1244 nodes) sum to 435, 3 weights per
  //   leaf, 3 classes * (label 1): 435 + 300 + 3 = 738 FLOPs; params 572 thresholds + 2016 weights = 2588.
  // skl2onnx_xgboost: 9 trees (3 classes x 3 rounds), depths 46, 9 leaf weights, 3 * (base 1 + SOFTMAX 5 +
  //   label 1) = 76, and the Scaler 2*2.
  // onnxmltools_nusvc_rbf: 77 RBF vectors of 3: 77*3 + 77 = 308 MACs, 2*308 + 77*(3 + 2) + 2 + 2 = 1005.
  // Rows: the files with a dynamic batch (skl2onnx's `dim {}`) are pinned to 3 rows through the symbols
  // the import names them by; onnxmltools 1.3's are [1, C].
  const auto expect = expectations();
  REQUIRE(expect.size() == 12);
  for (const auto& item : expect.items()) {  // not a structured binding: CAPTURE's lambda reads `name`
    const std::string name = item.key();
    const auto& want = item.value();
    CAPTURE(name);
    const flopwise::Analysis open = analyse_ml(name);
    CHECK(open.report.unsupported.empty());
    CHECK(open.report.totals.params.v == want["params"].get<int64_t>());
    CHECK(open.report.totals.macs.exact());
    CHECK(open.report.totals.flops.exact());
    flopwise::Pins pins;
    for (const std::string& s : input_symbols(open)) pins.dims.emplace_back(s, 3);
    const int64_t rows = pins.dims.empty() ? 1 : 3;
    const flopwise::Analysis a = analyse_ml(name, pins);
    const flopwise::Report& r = a.report;
    CHECK(r.totals.macs.known);
    CHECK(r.totals.flops.known);
    CHECK(r.totals.macs.v == rows * want["per_row"]["macs"].get<int64_t>());
    CHECK(r.totals.flops.v == rows * want["per_row"]["flops"].get<int64_t>());
    for (const auto& node : want["nodes"]) {
      const std::string node_name = node["name"].get<std::string>();
      CAPTURE(node_name);
      const auto it = std::find_if(r.nodes.begin(), r.nodes.end(),
                                   [&](const flopwise::NodeReport& n) { return n.name == node_name; });
      REQUIRE(it != r.nodes.end());
      CHECK(it->supported);
      CHECK(it->cost.macs.v == rows * node["macs"].get<int64_t>());
      CHECK(it->cost.flops.v == rows * node["flops"].get<int64_t>());
      CHECK(it->cost.params.v == node["params"].get<int64_t>());
    }
  }
}

TEST_CASE("converter-written files: producer, opset and tree depths as the script read them") {
  const auto expect = expectations();
  for (const auto& item : expect.items()) {  // not a structured binding: CAPTURE's lambda reads `name`
    const std::string name = item.key();
    const auto& want = item.value();
    CAPTURE(name);
    const flopwise::Report& r = analyse_ml(name).report;
    const std::string producer = want["producer"].get<std::string>();
    CHECK((producer == "skl2onnx" || producer == "OnnxMLTools"));
    CHECK(r.producer.rfind(producer, 0) == 0);
    CHECK(r.opsets.at("ai.onnx.ml") == want["ml_opset"].get<int64_t>());
  }
  // The RandomForest's 100 trees and XGBoost's ensembles: comparisons = the sum of the trees' depths,
  // an upper bound (the row's path decides); the script found the depths by walking each tree.
  CHECK(expect["skl2onnx_rf_iris"]["nodes"][0]["trees"] == 100);
  CHECK(expect["onnxmltools_xgb_regressor"]["nodes"][0]["trees"] == 100);
}

TEST_CASE("an input dim with neither value nor name (skl2onnx's batch) is a symbol named by input and axis") {
  // skl2onnx_titanic's five inputs are [dim {}, 1]: pclass.0 ... embarked.0; costs are formulas in them
  // and --dim binds them. The figures per row: ml_real.expect.json (62 FLOPs, 22 MACs).
  const flopwise::Analysis a = analyse_ml("skl2onnx_titanic");
  const flopwise::Report& r = a.report;
  REQUIRE(r.inputs.size() == 5);
  CHECK(r.inputs[0].first == "pclass");
  CHECK(r.inputs[0].second.second.str() == "pclass.0x1");
  CHECK(input_symbols(a) == std::set<std::string>{"age.0", "embarked.0", "fare.0", "pclass.0", "sex.0"});
  CHECK(r.totals.uncounted == 0);
  CHECK(r.totals.macs.symbolic());
  // onnxmltools 1.6's XGBoost regressor: X [dim {}, 4].
  const flopwise::Report& x = analyse_ml("onnxmltools_xgb_regressor").report;
  CHECK(x.inputs[0].second.second.str() == "X.0x4");
  CHECK(x.totals.flops.as_dim().str() == "313*X.0");
}
