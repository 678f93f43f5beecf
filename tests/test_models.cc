// tests/test_models.cc — whole-model checks on the bundled exports in models/ against what torch said.
//
// Each models/<name>.onnx was exported by models/generate.py, which also wrote models/<name>.expect.json
// from the torch module structure (never from the ONNX file):
//   expected_onnx_params  torch's unique parameter count, adjusted for what the exporter folds
//                         (BatchNorm into Conv: -gamma-beta, +a conv bias of out_channels);
//   macs                  forward hooks on Conv2d/Linear (out_elems*in_ch/groups*kh*kw,
//   out_elems*in_features)
//                         + by formula the products that are no module (attention QK^T and probs*V,
//                         batch*heads*seq*seq*head_dim each per layer; gpt2's tied LM head
//                         batch*seq*vocab*hidden), for the `dims` binding in the JSON (batch=1, seq=64).
// flopwise's MACs count exactly the contraction ops (Conv, Gemm, MatMul), which are those same products,
// so the totals must agree to the unit. The weights file (<name>.onnx.data) is not committed and never
// read: a model copied alone into a temp directory must give the identical report.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"
#include "flopwise/analyse.h"
#include "flopwise/cost.h"
#include "flopwise/errors.h"
#include "flopwise/infer.h"
#include "flopwise/onnx_import.h"

namespace fs = std::filesystem;
using namespace flopwise;

namespace {

const char* const kModels[] = {"resnet18", "resnet34", "mobilenet_v2", "bert", "bert6", "gpt2"};

fs::path models_dir() { return fs::path(FLOPWISE_SOURCE_DIR) / "models"; }

nlohmann::json load_expect(const std::string& name) {
  std::ifstream f(models_dir() / (name + ".expect.json"));
  REQUIRE_MESSAGE(f.good(), "missing models/" << name << ".expect.json (run models/generate.py)");
  return nlohmann::json::parse(f);
}

InferOptions dims_from(const nlohmann::json& expect, int64_t batch_override = 0) {
  InferOptions opts;
  for (const auto& [k, v] : expect.at("dims").items())
    opts.dims.push_back({k, k == "batch" && batch_override ? batch_override : v.get<int64_t>()});
  return opts;
}

Report analyse(const fs::path& path, const InferOptions& opts) {
  return flopwise::analyse(path.string(), opts, find_convention("default")).report;
}

std::string unsupported_list(const Report& r) {
  std::string s;
  for (const auto& [op, nodes] : r.unsupported) s += op + " (" + std::to_string(nodes.size()) + ") ";
  return s;
}

// Nodes whose cost stayed unknown, for a readable failure message.
std::string uncounted_nodes(const Report& r) {
  std::string s;
  int shown = 0;
  for (const auto& n : r.nodes) {
    const Totals& c = n.cost;
    if (c.macs.known && c.flops.known && c.params.known && c.memory_bytes.known) continue;
    if (shown++ < 8) s += std::string(n.op) + ":" + std::string(n.name) + " ";
  }
  return s;
}

// A compact fingerprint of everything a report says, to compare two runs.
std::string fingerprint(const Report& r) {
  std::ostringstream o;
  auto put = [&](const Totals& t) {
    o << t.params.v << '/' << t.params.known << ' ' << t.buffers.v << ' ' << t.macs.v << '/' << t.macs.known
      << ' ' << t.flops.v << '/' << t.flops.known << ' ' << t.memory_bytes.v << '/' << t.memory_bytes.known
      << ' ' << t.uncounted << '\n';
  };
  put(r.totals);
  for (const auto& n : r.nodes) {
    o << n.name << ' ' << n.op << ' ' << n.scope << ' ';
    for (const auto& [name, shape] : n.outputs) o << name << '=' << shape.str() << ' ';
    put(n.cost);
  }
  for (const auto& [op, nodes] : r.unsupported) o << "unsupported " << op << ' ' << nodes.size() << '\n';
  return o.str();
}

}  // namespace

TEST_CASE("models: bundled exports match torch's params and hook-derived MACs") {
  for (const char* name : kModels) {
    SUBCASE(name) {
      const std::string nm = name;
      const nlohmann::json expect = load_expect(name);
      const fs::path path = models_dir() / (std::string(name) + ".onnx");
      Report r = analyse(path, dims_from(expect));

      CHECK_MESSAGE(r.unsupported.empty(), nm << ": unsupported ops: " << unsupported_list(r));
      CHECK_MESSAGE(r.totals.complete(),
                    nm << ": " << r.totals.uncounted << " nodes not counted, e.g. " << uncounted_nodes(r));

      // Params: torch's unique parameters minus what the exporter folds (see expect.param_notes).
      // e.g. resnet18: its 20 BNs have 64 + 4*64 + (4*128+128) + 5*256 + 5*512 = 4800 channels, so
      // 11689512 - 2*4800 (gamma+beta) + 4800 (new conv biases) = 11684712, computed in generate.py
      // from the module structure. gpt2's tied wte counts once (one initializer, two users).
      REQUIRE(r.totals.params.known);
      CHECK_MESSAGE(r.totals.params.v == expect.at("expected_onnx_params").get<int64_t>(),
                    nm << ": params " << r.totals.params.v << " vs torch-derived "
                       << expect.at("expected_onnx_params") << " (torch_params " << expect.at("torch_params")
                       << ")");
      // BatchNorm running stats are folded away by the exporter: no buffers left in the graph.
      CHECK(r.totals.buffers.v == expect.at("expected_onnx_buffers").get<int64_t>());

      // MACs: hooks on Conv2d/Linear + attention products (and gpt2's LM head) by formula.
      REQUIRE(r.totals.macs.known);
      CHECK_MESSAGE(r.totals.macs.v == expect.at("macs").get<int64_t>(),
                    nm << ": MACs " << r.totals.macs.v << " vs torch hooks+formula " << expect.at("macs")
                       << " (hooks " << expect.at("macs_from_hooks") << ")");
      // FLOPs are at least 2 per MAC (docs/COUNTING.md: 2*MACs for contractions, plus elementwise work).
      REQUIRE(r.totals.flops.known);
      CHECK(r.totals.flops.v >= 2 * r.totals.macs.v);
    }
  }
}

TEST_CASE("models: MACs scale with the bound batch; unbound batch stays symbolic") {
  for (const char* name : kModels) {
    SUBCASE(name) {
      const std::string nm = name;
      const nlohmann::json expect = load_expect(name);
      const fs::path path = models_dir() / (std::string(name) + ".onnx");
      // Every contraction here is linear in batch (attention is per sample): batch=2 doubles MACs.
      Report r2 = analyse(path, dims_from(expect, 2));
      REQUIRE(r2.totals.macs.known);
      CHECK(r2.totals.macs.v == 2 * expect.at("macs").get<int64_t>());

      // No binding: the outputs keep the exporter's symbolic batch dim (never guessed to 1).
      Report rs = analyse(path, InferOptions{});
      REQUIRE(!rs.outputs.empty());
      const Shape& out = rs.outputs[0].second.second;
      REQUIRE(out.rank_known);
      CHECK_MESSAGE(out.dims[0].same_as(Dim::symbol("batch")), nm << ": output " << out.str());
    }
  }
}

TEST_CASE("models: the graph alone (no .onnx.data) analyses exactly like graph + weights") {
  const fs::path tmp = fwtest::scratch_dir("models");
  for (const char* name : kModels) {
    SUBCASE(name) {
      const std::string nm = name;
      const nlohmann::json expect = load_expect(name);
      const std::string file = std::string(name) + ".onnx";
      const fs::path alone = tmp / file;
      fs::copy_file(models_dir() / file, alone, fs::copy_options::overwrite_existing);
      REQUIRE(!fs::exists(tmp / (file + ".data")));
      Report with_dir = analyse(models_dir() / file, dims_from(expect));
      Report without = analyse(alone, dims_from(expect));
      CHECK(fingerprint(with_dir) == fingerprint(without));
      CHECK(without.totals.params.v == expect.at("expected_onnx_params").get<int64_t>());
    }
  }
}

TEST_CASE("models: analyse() is load, pins, shape pass and report, with the pins applied once") {
  const fs::path path = models_dir() / "resnet18.onnx";
  Pins pins;
  pins.inputs.push_back(parse_input_pin("2x3x64x64"));  // positional: the model's one input
  Analysis a = flopwise::analyse(path.string(), pins, find_convention("default"));
  REQUIRE(a.model);
  REQUIRE(a.report.inputs.size() == 1);
  CHECK(a.report.inputs[0].second.second.str() == "2x3x64x64");
  // The same steps by hand give the same report.
  Model m = import_onnx_file(path.string());
  std::vector<std::string> pin_warnings = apply_pins(m, pins);
  CHECK(pin_warnings.empty());
  InferResult ir = infer_shapes(m);
  CHECK(fingerprint(build_report(m, std::move(ir))) == fingerprint(a.report));
  // A pin naming no input is a usage error with the model's inputs listed.
  Pins bad;
  bad.inputs.push_back(parse_input_pin("nosuch:1x3x8x8"));
  CHECK_THROWS_WITH_AS(flopwise::analyse(path.string(), bad, find_convention("default")),
                       doctest::Contains("not an input of the model"), UsageError);
  // So is a file that is a saved report, not a model.
  CHECK_THROWS_AS(flopwise::load_model((models_dir() / "bert.expect.json").string(), Pins{}), InputError);
}

TEST_CASE("models: a model loaded once analyses at any pins as a fresh load does, and stays as loaded") {
  const std::string path = (models_dir() / "shipped" / "llama_gqa.onnx").string();
  const Convention& conv = find_convention("default");
  const LoadedModel loaded = flopwise::load(path, Pins{});
  REQUIRE(loaded.model);
  CHECK(loaded.inputs.empty());  // ONNX: input pins apply to the IR, not at load
  auto input_shapes = [](const Model& m) {
    std::string s;
    for (int i : m.graph.inputs) s += m.graph.values[static_cast<size_t>(i)].shape.str() + " ";
    return s;
  };
  const std::string as_loaded = input_shapes(*loaded.model);
  // Unbound, a prefill, a decode step, an input pin, and a --value pin (a second pass, without it).
  for (const char* args : {"", "batch=8 past=0 seq=512", "batch=8 seq=1", "input_ids:2x5", "value"}) {
    CAPTURE(args);
    Pins pins;
    std::istringstream words(args);
    for (std::string w; words >> w;)
      if (w == "value")
        pins.values.insert(parse_value_pin("input_ids=1,2,3"));
      else if (w.find(':') != std::string::npos)
        pins.inputs.push_back(parse_input_pin(w));
      else
        pins.dims.push_back(parse_dim_pin(w));
    CHECK(accepts(loaded, pins));
    const Analysis a = flopwise::analyse(loaded, pins, conv);
    CHECK(a.model.get() != loaded.model.get());
    CHECK(fingerprint(a.report) == fingerprint(flopwise::analyse(path, pins, conv).report));
    CHECK(input_shapes(*loaded.model) == as_loaded);
  }
}
