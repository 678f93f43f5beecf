// tests/test_datadep.cc — data-dependent sizes as named symbols (flopwise/infer.h, DataDepSymbol): NonZero,
// Compress, Unique and flopwise::UniqueConsecutive make a fresh symbol with bounds where the contents are not
// known, fold to the number where they are; the report lists the symbols, --dim binds them (within bounds),
// --sweep sweeps them, and a --value or --dim that binds nothing warns. Every expected number is a hand count
// (the arithmetic is beside it) or torch's own output (the .pt cases, from models/datadep_pt.py).
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "onnx_tiny.h"
#include "op_test_util.h"

using namespace fwtest;
using json = nlohmann::json;

namespace {

const DataDepSymbol* symbol_named(const InferResult& r, const std::string& name) {
  for (const auto& s : r.symbols)
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace

TEST_CASE("data-dependent sizes: each op makes a named symbol with its bounds, or counts known contents") {
  SUBCASE("NonZero: [rank, nonzero_1], 0 <= nonzero_1 <= numel") {
    OneNode r = run_op("NonZero", {"2x3"});
    CHECK(r.out(0).shape.str() == "2xnonzero_1");
    const DataDepSymbol* s = symbol_named(r.result, "nonzero_1");
    REQUIRE(s);
    CHECK(s->op == "NonZero");
    CHECK(s->node == "n0");
    CHECK(s->lo.str() == "0");
    CHECK(s->hi.str() == "6");  // 2*3 elements
    CHECK(s->bounds_text() == "0 <= nonzero_1 <= 6");
  }
  SUBCASE("NonZero of a symbolic input: the bound is a formula") {
    OneNode r = run_op("NonZero", {"batch,4"});
    CHECK(r.out(0).shape.str() == "2xnonzero_1");
    REQUIRE(r.result.symbols.size() == 1);
    CHECK(r.result.symbols[0].hi.str() == "4*batch");
  }
  SUBCASE("NonZero of no elements: 0, no symbol") {
    OneNode r = run_op("NonZero", {"2x0"});
    CHECK(r.out(0).shape.str() == "2x0");
    CHECK(r.result.symbols.empty());
  }
  SUBCASE("NonZero of known contents: the count, no symbol") {
    OneNode r = run_op("NonZero", {"2x2:int64=1,0,1,1"});
    CHECK(r.out(0).shape.str() == "2x3");
    CHECK(r.result.symbols.empty());
  }
  SUBCASE("Compress with an unknown condition: 0..min(extent, condition length)") {
    OneNode r = run_op("Compress", {"3x5", "4:bool"}, {{"axis", A::i(1)}});
    CHECK(r.out(0).shape.str() == "3xcompress_1");
    REQUIRE(r.result.symbols.size() == 1);
    CHECK(r.result.symbols[0].hi.str() == "4");  // min(5, 4)
    OneNode flat = run_op("Compress", {"batch,2", "?:bool"});
    CHECK(flat.out(0).shape.str() == "compress_1");
    CHECK(flat.result.symbols[0].hi.str() ==
          "2*batch");  // the condition's length unknown: the extent bounds it
  }
  SUBCASE("Compress with a known condition along a symbolic extent: counted, assuming it fits") {
    OneNode r = run_op("Compress", {"batch,3", "2:bool=1,1"}, {{"axis", A::i(0)}});
    CHECK(r.out(0).shape.str() == "2x3");  // both entries true
    REQUIRE(r.result.assumptions.size() == 1);
    CHECK(r.result.assumptions[0].text() == "2 <= batch");
  }
  SUBCASE("Unique: 1..N distinct values; inverse one per element") {
    OneNode r = run_op("Unique", {"6"}, {}, 4);
    CHECK(r.out(0).shape.str() == "unique_1");
    CHECK(r.out(1).shape.str() == "unique_1");
    CHECK(r.out(2).shape.str() == "6");
    CHECK(r.out(3).shape.str() == "unique_1");
    REQUIRE(r.result.symbols.size() == 1);
    CHECK(r.result.symbols[0].bounds_text() == "1 <= unique_1 <= 6");
    OneNode empty = run_op("Unique", {"0"}, {}, 4);
    CHECK(empty.out(0).shape.str() == "0");
    CHECK(empty.result.symbols.empty());
  }
  SUBCASE("Unique along an axis, and of known contents") {
    OneNode r = run_op("Unique", {"3x2"}, {{"axis", A::i(0)}}, 4);
    CHECK(r.out(0).shape.str() == "unique_1x2");
    CHECK(r.out(2).shape.str() == "3");
    // [3, 1, 3, 2, 1, 3]: distinct 1, 2, 3
    CHECK(run_op("Unique", {"6:int64=3,1,3,2,1,3"}, {}, 4).out(0).shape.str() == "3");
    // rows [1, 2], [1, 2], [2, 1]: two distinct rows
    CHECK(run_op("Unique", {"3x2:int64=1,2,1,2,2,1"}, {{"axis", A::i(0)}}, 4).out(0).shape.str() == "2x2");
    // columns of [[1, 1, 2], [3, 3, 3]]: (1,3), (1,3), (2,3): two distinct
    CHECK(run_op("Unique", {"2x3:float=1,1,2,3,3,3"}, {{"axis", A::i(1)}}, 4).out(0).shape.str() == "2x2");
  }
  SUBCASE("UniqueConsecutive (torch.unique_consecutive): runs of equal neighbours") {
    OneNode r = run_op("UniqueConsecutive", {"5"}, {}, 4, "flopwise", 1);
    CHECK(r.out(0).shape.str() == "uniqueconsecutive_1");
    // [1, 1, 2, 1, 1]: runs 1 | 2 | 1 = 3 (Unique would give 2)
    CHECK(run_op("UniqueConsecutive", {"5:int64=1,1,2,1,1"}, {}, 4, "flopwise", 1).out(0).shape.str() == "3");
  }
  SUBCASE("the importer's stem and source op name the symbol") {
    OneNode r = run_op(
        "Compress", {"8", "8:bool"},
        {{"flopwise_symbol", A::s("masked_select")}, {"flopwise_source", A::s("aten::masked_select")}});
    CHECK(r.out(0).shape.str() == "masked_select_1");
    CHECK(r.result.symbols[0].op == "aten::masked_select");
  }
}

TEST_CASE(
    "data-dependent sizes: numbered in node order, kept when a node is inferred again, bound by value") {
  Model m;
  Graph& g = m.graph;
  int x = g.add_value("x");
  set_value_from_spec(g.values[x], "4x4");
  g.values[x].is_input = true;
  g.inputs.push_back(x);
  for (int k = 0; k < 2; ++k) {
    Node n;
    n.name = "nz" + std::to_string(k);
    n.op = "NonZero";
    n.opset = 17;
    n.inputs = {x};
    int o = g.add_value("o" + std::to_string(k));
    g.values[o].producer = k;
    n.outputs = {o};
    g.nodes.push_back(std::move(n));
  }
  InferResult r;
  infer_graph(g, r);
  infer_graph(g, r);  // again, into the same result (an incremental pass, a loop body)
  REQUIRE(r.symbols.size() == 2);
  CHECK(r.symbols[0].name == "nonzero_1");
  CHECK(r.symbols[1].name == "nonzero_2");
  CHECK(g.values[g.nodes[1].outputs[0]].shape.str() == "2xnonzero_2");

  InferResult bound = infer_shapes_with_symbols(m, {{"nonzero_2", 5}});
  CHECK(g.values[g.nodes[0].outputs[0]].shape.str() == "2xnonzero_1");
  CHECK(g.values[g.nodes[1].outputs[0]].shape.str() == "2x5");
  REQUIRE(bound.symbols.size() == 2);
  CHECK(bound.symbols[1].value == std::optional<int64_t>(5));
}

namespace {

void add_ints(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v) t->add_int64_data(x);
}

// A BERT-style masked-LM head: the decoder runs on the masked positions only.
//   h = x.view(-1, H); idx = nonzero(labels.view(-1) != -1).view(-1); y = h[idx] @ W   (W: H x V)
// x: B x S x H float, labels: B x S int64. MACs = count * H * V.
std::string write_mlm_head(const fs::path& dir, const std::string& b, const std::string& s, int64_t h,
                           int64_t v) {
  onnx::ModelProto m = tiny_model();
  auto* g = m.mutable_graph();
  tiny_input(g, "x", onnx::TensorProto::FLOAT, {b, s, std::to_string(h)});
  tiny_input(g, "labels", onnx::TensorProto::INT64, {b, s});
  tiny_input(g, "extra", onnx::TensorProto::INT64,
             {"4"});  // read only by a Cast: its contents decide nothing
  add_ints(g, "rows", {-1, h});
  add_ints(g, "flat", {-1});
  add_ints(g, "minus_one", {-1});
  auto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(h);
  w->add_dims(v);
  for (int64_t i = 0; i < h * v; ++i) w->add_float_data(0.5f);
  tiny_node(g, "/head/Reshape", "Reshape", {"x", "rows"}, {"h"});
  tiny_node(g, "/head/Reshape_1", "Reshape", {"labels", "flat"}, {"lf"});
  tiny_node(g, "/head/Equal", "Equal", {"lf", "minus_one"}, {"eq"});
  tiny_node(g, "/head/Not", "Not", {"eq"}, {"mask"});
  tiny_node(g, "/head/NonZero", "NonZero", {"mask"}, {"nz"});
  tiny_node(g, "/head/Reshape_2", "Reshape", {"nz", "flat"}, {"idx"});
  tiny_node(g, "/head/Gather", "Gather", {"h", "idx"}, {"sel"});
  tiny_node(g, "/head/MatMul", "MatMul", {"sel", "W"}, {"y"});
  auto* to = tiny_node(g, "/Cast", "Cast", {"extra"}, {"extra_f"})->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::FLOAT);
  g->add_output()->set_name("y");
  g->add_output()->set_name("extra_f");
  std::string path = (dir / ("mlm_" + b + "_" + s + ".onnx")).string();
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  return path;
}

json report(const std::string& args, const fs::path& dir) {
  CliRun r = run_cli(args + " --format json", dir);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  return json::parse(r.out);
}

}  // namespace

TEST_CASE("masked-LM head (ONNX): MACs a formula in the NonZero's symbol; --dim binds it, --value folds it") {
  auto dir = scratch_dir("datadep");
  const int64_t H = 16, V = 32;
  const std::string path = write_mlm_head(dir, "2", "8", H, V);

  json j = report(path, dir);
  CHECK(j["totals"]["macs"] == "512*nonzero_1");  // count * H * V = count * 16 * 32
  REQUIRE(j["symbols"].size() == 1);
  const json& s = j["symbols"][0];
  CHECK(s["name"] == "nonzero_1");
  CHECK(s["op"] == "NonZero");
  CHECK(s["node"] == "/head/NonZero");
  CHECK(s["lo"] == 0);
  CHECK(s["hi"] == 16);  // 2 x 8 labels
  CHECK_FALSE(s.contains("value"));

  CliRun text = run_cli(path, dir);
  REQUIRE(text.code == 0);
  CHECK(text.out.find("0 <= nonzero_1 <= 16") != std::string::npos);

  // Bound: 5 masked positions: 5 * 16 * 32 = 2560 MACs.
  json b = report(path + " --dim nonzero_1=5", dir);
  CHECK(b["totals"]["macs"] == 2560);
  CHECK(b["symbols"][0]["value"] == 5);
  for (const auto& w : b["warnings"]) CHECK(w.get<std::string>().find("nonzero_1") == std::string::npos);

  // Out of its bounds: a usage error naming them.
  CliRun bad = run_cli(path + " --dim nonzero_1=17", dir);
  CHECK(bad.code == 2);
  CHECK(bad.err.find("0 <= nonzero_1 <= 16") != std::string::npos);

  // Known labels: 3 of the 16 are not -1, so 3 * 16 * 32 = 1536 MACs and no symbol.
  json k = report(path + " --value labels=-1,4,-1,-1,-1,-1,7,-1,-1,-1,-1,-1,-1,9,-1,-1", dir);
  CHECK(k["totals"]["macs"] == 1536);
  CHECK_FALSE(k.contains("symbols"));
  for (const auto& w : k["warnings"]) CHECK(w.get<std::string>().find("--value labels") == std::string::npos);

  // Symbolic batch and sequence: the bound is their product; binding all three gives the number.
  const std::string sym = write_mlm_head(dir, "B", "S", H, V);
  json f = report(sym, dir);
  CHECK(f["totals"]["macs"] == "512*nonzero_1");
  CHECK(f["symbols"][0]["hi"] == "B*S");
  CHECK(report(sym + " --dim B=4 --dim S=128 --dim nonzero_1=77", dir)["totals"]["macs"] == 77 * 512);
  CHECK(run_cli(sym + " --dim B=4 --dim S=128 --dim nonzero_1=513", dir).code == 2);  // 4 * 128 = 512 at most
}

TEST_CASE("masked-LM head (ONNX): --sweep sweeps the symbol; a point past its bounds is flagged") {
  auto dir = scratch_dir("datadep_sweep");
  const std::string path = write_mlm_head(dir, "2", "8", 16, 32);
  CliRun r = run_cli(path + " --sweep nonzero_1=0,4,16,20 --format json", dir);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  json sw = json::parse(r.out);
  REQUIRE(sw["rows"].size() == 4);
  CHECK(sw["rows"][0]["macs"] == 0);
  CHECK(sw["rows"][1]["macs"] == 4 * 512);
  CHECK(sw["rows"][2]["macs"] == 16 * 512);
  CHECK(sw["rows"][2]["violates"].empty());
  REQUIRE(sw["rows"][3]["violates"].size() == 1);
  CHECK(sw["rows"][3]["violates"][0] == "0 <= nonzero_1 <= 16");
  // Unbound, the sweep says what else to bind.
  CliRun left = run_cli(write_mlm_head(dir, "B", "S", 16, 32) + " --sweep B=1,2", dir);
  CHECK(left.code == 2);
  CHECK(left.err.find("nonzero_1") != std::string::npos);
}

TEST_CASE("a --value or --dim that binds nothing is a warning naming it") {
  auto dir = scratch_dir("datadep_unused");
  const std::string path = write_mlm_head(dir, "2", "8", 16, 32);
  json j = report(path + " --value extra=1,2,3,4 --dim nothing=3", dir);
  bool value_warned = false, dim_warned = false;
  for (const auto& w : j["warnings"]) {
    const std::string t = w.get<std::string>();
    value_warned = value_warned || t.find("--value extra") != std::string::npos;
    if (t.find("--dim nothing") != std::string::npos) {
      dim_warned = true;
      CHECK(t.find("nonzero_1") != std::string::npos);  // the names it could bind, the symbol among them
    }
  }
  CHECK(value_warned);
  CHECK(dim_warned);
}

// ---- TorchScript (.pt): models/datadep_pt.py, scripted and traced ---------------------------------------
namespace {

// BUILD/pt_datadep, generated on first use; "" when it cannot be made (no python3-torch): see its log.
std::string pt_datadep_dir() {
  static const std::string dir = fwtest::generated_dir("pt_datadep", "datadep_pt.py", "datadep.json");
  return dir;
}

}  // namespace

TEST_CASE(
    "data-dependent sizes in TorchScript: nonzero, x[mask], masked_select, where(cond), unique(_dim, "
    "_consecutive)") {
  const std::string dir = pt_datadep_dir();
  if (dir.empty() || !fs::exists(binary_dir() + "/libflopwise_torch.so")) {
    MESSAGE("skipped: no torch generator or no TorchScript plugin");
    return;
  }
  auto scratch = scratch_dir("datadep_pt");
  std::ifstream f(dir + "/datadep.json");
  json spec = json::parse(f);
  for (const auto& [name, m] : spec.items()) {
    for (const char* kind : {"script", "trace"}) {
      const std::string path = dir + "/" + name + "." + kind + ".pt";
      CAPTURE(path);
      std::string pins, values;
      for (const auto& in : m["inputs"]) {
        std::string shape;
        for (const auto& d : in["shape"])
          shape += (shape.empty() ? "" : "x") + std::to_string(d.get<int64_t>());
        pins +=
            " --input " + in["name"].get<std::string>() + ":" + shape + ":" + in["dtype"].get<std::string>();
        if (in["value"].is_null()) continue;
        std::string v;
        for (const auto& x : in["value"]) v += (v.empty() ? "" : ",") + std::to_string(x.get<int64_t>());
        values += " --value " + in["name"].get<std::string>() + "=" + v;
      }
      const std::string sym = m["symbol"];
      const int64_t per_unit = m["macs_per_unit"];
      // Unbound: MACs = per_unit * symbol (the Linear on `symbol` rows: in * out features each).
      json j = report(path + pins, scratch);
      CHECK(j["totals"]["macs"] == std::to_string(per_unit) + "*" + sym);
      REQUIRE(j.contains("symbols"));
      REQUIRE(j["symbols"].size() == 1);
      CHECK(j["symbols"][0]["name"] == sym);
      CHECK(j["symbols"][0]["op"].get<std::string>().rfind("aten::", 0) == 0);
      CHECK(j["symbols"][0]["hi"] == m["hi"]);
      // Bound by --dim: 2 rows.
      CHECK(report(path + pins + " --dim " + sym + "=2", scratch)["totals"]["macs"] == 2 * per_unit);
      CHECK(run_cli(path + pins + " --dim " + sym + "=" + std::to_string(m["hi"].get<int64_t>() + 1), scratch)
                .code == 2);
      // Known contents: torch's own count of rows.
      if (!values.empty()) {
        json k = report(path + pins + values, scratch);
        CHECK(k["totals"]["macs"] == m["rows"].get<int64_t>() * per_unit);
        CHECK_FALSE(k.contains("symbols"));
      }
    }
  }
}
