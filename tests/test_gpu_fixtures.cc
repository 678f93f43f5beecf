// tests/test_gpu_fixtures.cc — files only a modern PyTorch writes (issue 32; ../shared/GPU.md item 3), made
// on the GPU machine's torch 2.11 by models/gpu_fixtures.py and committed under models/gpu/. Here, without a
// GPU and without that torch:
// - the dynamo exporter's ONNX (torch.onnx.export(..., dynamo=True), graph-only): MACs against the eager
//   dispatch count the generator took from the very module it exported (models/gpu/**/NAME.expect.json,
//   models/torch_zoo.py's TorchDispatchMode counter), every node counted;
// - torch.export archives (.pt2) of torch 2.11, read natively: params and MACs against the same eager counts
//   (models/gpu/NAME.expect.json), at each batch the generator ran, the other dims bound by --dim;
// - a gzipped profiler trace (.pt.trace.json.gz) given as a model is refused with a line that says what
//   it is.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "flopwise/analyse.h"
#include "flopwise/convention.h"
#include "flopwise/errors.h"

namespace {

namespace fs = std::filesystem;

nlohmann::json load_json(const std::string& rel) {
  return nlohmann::json::parse(fwtest::slurp(fwtest::model_path(rel)));
}

}  // namespace

TEST_CASE("dynamo ONNX exports of torch 2.11: MACs equal the eager dispatch count, every node counted") {
  auto manifest = load_json("gpu/manifest.exports.json");
  int files = 0;
  for (const auto& step : manifest["steps"]) {
    if (step.value("kind", "") != "onnx" || !step.value("ok", false)) continue;
    const std::string name = step["what"];
    const std::string file = "gpu/onnx/" + step["file"].get<std::string>();
    if (!fs::exists(fwtest::model_path(file))) continue;  // the largest exports are not committed
    CAPTURE(file);
    // The three fixtures' models keep their counts beside the traces; the other zoo entries beside the file.
    std::string expect_file = fs::exists(fwtest::model_path("gpu/onnx/" + name + ".expect.json"))
                                  ? "gpu/onnx/" + name + ".expect.json"
                                  : "gpu/" + name + ".expect.json";
    auto expect = load_json(expect_file);
    // Exported at batch 2 (torch.export specialises a size-1 dim), so a file holds the batch-2 program: its
    // count there, pinned to the batch-2 example inputs when dynamic. A dynamic export is also pinned to the
    // batch-1 inputs, except the seq-first RNNs: their dim 0 is time, which the exporter unrolled at the
    // example's 10 steps while naming it dynamic, so no other length is the same program.
    bool dynamic = !step["dynamic"].empty();
    std::vector<std::string> batches{"batch_2"};
    if (dynamic && name != "lstm" && name != "gru") batches.push_back("batch_1");
    for (const std::string& b : batches) {
      CAPTURE(b);
      const auto& counts = expect[b];
      flopwise::Pins pins;
      if (dynamic)
        for (const auto& in : counts["inputs"]) {
          std::vector<flopwise::Dim> dims;
          for (const auto& d : in["shape"]) dims.push_back(flopwise::Dim(d.get<int64_t>()));
          pins.inputs.push_back({in["name"].get<std::string>(), flopwise::Shape(dims), std::nullopt});
        }
      auto a = flopwise::analyse(fwtest::model_path(file), pins, flopwise::default_convention());
      const auto& rep = a.report;
      CHECK(rep.unsupported.empty());
      CHECK(rep.totals.uncounted == 0);
      REQUIRE(rep.totals.macs.known);
      CHECK(rep.totals.macs.v == counts["macs"].get<int64_t>());
    }
    ++files;
  }
  MESSAGE(files << " dynamo exports analysed");
  CHECK(files >= 15);
}

TEST_CASE("torch 2.11's .pt2 archives: params and MACs equal the eager counts at every batch") {
  for (const char* name : {"bert", "gpt2", "resnet18"}) {
    auto expect = load_json(std::string("gpu/") + name + ".expect.json");
    for (const auto& [key, run] : expect.items()) {
      if (key.rfind("batch_", 0) != 0) continue;
      CAPTURE(name);
      const auto& key_ = key;  // clang 14 cannot capture a structured binding
      CAPTURE(key_);
      const auto& in = run["inputs"][0];
      flopwise::Pins pins;
      for (size_t d = 0; d < in["shape"].size(); ++d)
        pins.dims.push_back(
            {in["name"].get<std::string>() + "." + std::to_string(d), in["shape"][d].get<int64_t>()});
      auto r = flopwise::analyse(fwtest::model_path(std::string("gpu/pt2/") + name + ".pt2"), pins,
                                 flopwise::find_convention("default"))
                   .report;
      CHECK(r.unsupported.empty());
      REQUIRE(r.totals.params.known);
      CHECK(r.totals.params.v == run["params"].get<int64_t>());
      REQUIRE(r.totals.macs.known);
      CHECK(r.totals.macs.v == run["macs"].get<int64_t>());
    }
  }
}

TEST_CASE("a profiler trace given as a model is refused with what it is") {
  fs::path dir = fwtest::scratch_dir("gpu_fixtures");
  auto trace = fwtest::run_cli(fwtest::model_path("gpu/traces/bert.infer.eager.pt.trace.json.gz"), dir);
  CHECK(trace.code == 2);
  CHECK(trace.err.find("gzip-compressed") != std::string::npos);
}
