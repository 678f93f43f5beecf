// tests/test_pt2_read.cc — the .pt2 reader (src/pt2): layouts, schema versions, programs, the signature,
// arguments and metadata, tied weights, symbolic sizes; torch 2.14's own archives (models/pt2). Bad archives
// and bad programs are in tests/test_pt2_bad.cc. Archives are zipped in the test (tests/pt2_util.h) from the
// JSON written here, in the shapes torch writes (torch/_export/serde/schema.py; torch 2.1's in kLegacy). To
// add a case: write the smallest program JSON that shows it, zip it with make_pt2, read, check.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "flopwise/errors.h"
#include "pt2/program.h"
#include "pt2/sym_expr.h"
#include "pt2_util.h"

using namespace flopwise;
using namespace flopwise::pt2;
using pt2test::make_pt2;
using pt2test::make_zip;

namespace {
std::string sym(const std::string& s) { return "Symbol('" + s + "', integer=True, positive=True)"; }

// A Linear(3, 4) then ReLU, exported with a dynamic batch s0 (torch 2.14's shapes: srepr sizes, names,
// argument kinds). `version` is the schema_version value; `nodes_extra` more nodes after relu.
std::string linear_program(const std::string& version = R"({"major": 8, "minor": 20})",
                           const std::string& nodes_extra = "") {
  return R"J({"graph_module": {"graph": {
  "inputs": [{"as_tensor": {"name": "p_fc_weight"}}, {"as_tensor": {"name": "p_fc_bias"}}, {"as_tensor": {"name": "x"}}],
  "outputs": [{"as_tensor": {"name": "relu"}}],
  "nodes": [
   {"target": "torch.ops.aten.linear.default", "name": "linear",
    "inputs": [{"name": "input", "arg": {"as_tensor": {"name": "x"}}, "kind": 1},
               {"name": "weight", "arg": {"as_tensor": {"name": "p_fc_weight"}}, "kind": 1},
               {"name": "bias", "arg": {"as_tensor": {"name": "p_fc_bias"}}, "kind": 1}],
    "outputs": [{"as_tensor": {"name": "linear"}}],
    "metadata": {"stack_trace": "  File \"m.py\", line 9, in forward\n    return self.fc(x)",
                 "nn_module_stack": "L__self__,,__main__.M;L__self___fc,L['self'].fc,torch.nn.modules.linear.Linear",
                 "torch_fn": "linear_1;builtin_function_or_method.linear"},
    "is_hop_single_tensor_return": null},
   {"target": "torch.ops.aten.relu.default", "name": "relu",
    "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "linear"}}, "kind": 1}],
    "outputs": [{"as_tensor": {"name": "relu"}}], "metadata": {}})J" +
         nodes_extra + R"J(],
  "tensor_values": {
   "p_fc_weight": {"dtype": 7, "sizes": [{"as_int": 4}, {"as_int": 3}], "requires_grad": true, "device": {"type": "cpu", "index": null}, "strides": [{"as_int": 3}, {"as_int": 1}], "storage_offset": {"as_int": 0}, "layout": 7},
   "p_fc_bias": {"dtype": 7, "sizes": [{"as_int": 4}], "requires_grad": true, "device": {"type": "cpu", "index": null}, "strides": [{"as_int": 1}], "storage_offset": {"as_int": 0}, "layout": 7},
   "x": {"dtype": 13, "sizes": [{"as_expr": {"expr_str": ")J" +
         sym("s0") +
         R"J(", "hint": {"as_int": 2}}}, {"as_int": 3}], "requires_grad": false, "device": {"type": "meta", "index": 0}, "strides": [], "storage_offset": {"as_int": 0}, "layout": 7},
   "linear": {"dtype": 7, "sizes": [{"as_expr": {"expr_str": ")J" +
         sym("s0") +
         R"J(", "hint": null}}, {"as_int": 4}], "requires_grad": true, "device": {"type": "cpu", "index": null}, "strides": [], "storage_offset": {"as_int": 0}, "layout": 7},
   "relu": {"dtype": 7, "sizes": [{"as_expr": {"expr_str": ")J" +
         sym("s0") +
         R"J("}}, {"as_int": 4}], "requires_grad": true, "device": {"type": "cpu", "index": null}, "strides": [], "storage_offset": {"as_int": 0}, "layout": 7}},
  "sym_int_values": {}, "sym_bool_values": {}, "is_single_tensor_return": false, "custom_obj_values": {}, "sym_float_values": {}},
 "signature": {"input_specs": [
   {"parameter": {"arg": {"name": "p_fc_weight"}, "parameter_name": "fc.weight"}},
   {"parameter": {"arg": {"name": "p_fc_bias"}, "parameter_name": "fc.bias"}},
   {"user_input": {"arg": {"as_tensor": {"name": "x"}}}}],
  "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": "relu"}}}}]},
 "module_call_graph": [{"fqn": "", "signature": {"inputs": [], "outputs": [], "in_spec": "", "out_spec": "", "forward_arg_names": ["x"]}}, {"fqn": "fc", "signature": null}],
 "metadata": {}, "treespec_namedtuple_fields": {}},
 "opset_version": {"aten": 10},
 "range_constraints": {"s0": {"min_val": 2, "max_val": null}},
 "schema_version": )J" +
         version + R"J(, "verifiers": [], "torch_version": "2.14.1", "guards_code": []})J";
}
}  // namespace

TEST_CASE("pt2: the current layout, one program (torch 2.14's shapes)") {
  Program p = read_pt2_bytes(make_pt2({{"model", linear_program()}}), "m.pt2");
  CHECK(p.name == "model");
  CHECK(p.schema_major == 8);
  CHECK(p.schema_minor == 20);
  CHECK(p.torch_version == "2.14.1");
  REQUIRE(p.graph.nodes.size() == 2);
  const pt2::Node& lin = p.graph.nodes[0];
  CHECK(lin.target == "torch.ops.aten.linear.default");
  CHECK(lin.name == "linear");
  REQUIRE(lin.inputs.size() == 3);
  CHECK(lin.inputs[1].name == "weight");
  CHECK(lin.inputs[1].arg.kind == ArgKind::Tensor);
  CHECK(lin.inputs[1].arg.s == "p_fc_weight");
  CHECK(lin.inputs[1].kind == ArgumentKind::Positional);
  REQUIRE(lin.module_stack.size() == 2);
  CHECK(lin.module_stack[1].key == "L__self___fc");
  CHECK(lin.module_stack[1].path == "L['self'].fc");
  CHECK(lin.module_stack[1].type == "torch.nn.modules.linear.Linear");
  CHECK(lin.module_stack[0].path == "");
  CHECK(lin.torch_fn == "linear_1;builtin_function_or_method.linear");
  for (const auto& entry : lin.metadata) CHECK(entry.first != "stack_trace");  // skipped, never copied
  const TensorMeta& x = p.graph.tensor_values.at("x");
  CHECK(scalar_type_info(x.dtype_code)->type == ScalarType::BFloat16);
  CHECK(scalar_type_info(x.dtype_code)->ir == DType::BFloat16);
  CHECK(x.device == "meta");
  CHECK(x.device_index == 0);
  REQUIRE(x.sizes.size() == 2);
  CHECK(x.sizes[0].is_expr);
  CHECK(x.sizes[0].hint == 2);
  CHECK(x.sizes[1].value == 3);
  REQUIRE(p.inputs.size() == 3);
  CHECK(p.inputs[0].kind == InputKind::Parameter);
  CHECK(p.inputs[0].target == "fc.weight");
  CHECK(p.inputs[2].kind == InputKind::UserInput);
  CHECK(p.inputs[2].arg.s == "x");
  REQUIRE(p.outputs.size() == 1);
  CHECK(p.outputs[0].kind == OutputKind::UserOutput);
  REQUIRE(p.range_constraints.size() == 1);
  CHECK(p.range_constraints[0].first == "s0");
  CHECK(p.range_constraints[0].second.min == 2);
  CHECK(!p.range_constraints[0].second.max);
  REQUIRE(p.module_call_graph.size() == 2);
  CHECK(p.module_call_graph[1].fqn == "fc");
  CHECK(p.module_call_graph[0].forward_arg_names.at(0) == "x");
  CHECK(p.opset_version.at(0).second == 10);
}

TEST_CASE("pt2: the archive's folder is its own name; a deflated program reads the same") {
  std::string json = linear_program();
  Program p = read_pt2_bytes(
      make_zip({{"archive/archive_format", "pt2"}, {"archive/models/model.json", json, true}}), "m.pt2");
  CHECK(p.graph.nodes.size() == 2);
  Program z = read_pt2_bytes(
      make_zip({{"archive/archive_format", "pt2"}, {"archive/models/model.json", json}}, true), "zip64.pt2");
  CHECK(z.graph.nodes.size() == 2);
}

TEST_CASE("pt2: several programs in one archive, chosen by name") {
  std::string zip = make_pt2({{"encoder", linear_program()}, {"decoder", linear_program()}});
  CHECK_THROWS_WITH_AS(read_pt2_bytes(zip, "two.pt2"),
                       "two.pt2: holds 2 programs (decoder, encoder): name one (--program NAME)", InputError);
  CHECK(read_pt2_bytes(zip, "two.pt2", "decoder").name == "decoder");
  CHECK_THROWS_WITH_AS(read_pt2_bytes(zip, "two.pt2", "vae"),
                       "two.pt2: no program named 'vae' (it holds decoder, encoder)", InputError);
}

TEST_CASE("pt2: what is not an exported program is named") {
  CHECK_THROWS_WITH_AS(
      read_pt2_bytes(
          make_zip({{"model/archive_format", "pt2"}, {"model/data/aotinductor/model/model.so", "ELF"}}),
          "aoti.pt2"),
      "aoti.pt2: an AOTInductor package (compiled code), not an exported program", InputError);
  CHECK_THROWS_WITH_AS(read_pt2_bytes(make_zip({{"a/data.pkl", "x"}, {"a/version", "3"}}), "ts.pt"),
                       "ts.pt: a zip archive that is no torch.export archive (no archive_format or "
                       "serialized_exported_program.json)",
                       InputError);
}

TEST_CASE("pt2: schema versions: 5.x, 7.x and 8.x read; an unknown major is refused naming it") {
  for (const char* v :
       {R"({"major": 5, "minor": 1})", R"({"major": 7, "minor": 3})", R"({"major": 8, "minor": 17})"}) {
    CAPTURE(v);
    CHECK(read_program_json(linear_program(v), "p.json").graph.nodes.size() == 2);
  }
  CHECK_THROWS_WITH_AS(
      read_program_json(linear_program(R"({"major": 9, "minor": 0})"), "p.json"),
      "p.json: schema version 9.0 is not one this reader knows (it reads the bare integer of torch "
      "2.1 through 8.x)",
      InputError);
}

namespace {
// torch 2.1's program (schema_version 1, a bare integer): signature maps, {"meta": ...} tensor values,
// "as_none": [], no argument kinds, no node names; Python's json writes Infinity for an unbounded range.
const char* kLegacy = R"J({"graph_module": {"graph": {
  "inputs": [{"as_tensor": {"name": "arg1_1"}}, {"as_tensor": {"name": "arg0_1"}}],
  "outputs": [{"as_tensor": {"name": "add"}}, {"as_tensor": {"name": "mul"}}],
  "nodes": [
   {"target": "torch.ops.aten.add.Tensor", "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "arg1_1"}}},
     {"name": "other", "arg": {"as_tensor": {"name": "arg0_1"}}}, {"name": "alpha", "arg": {"as_none": []}}],
    "outputs": [{"as_tensor": {"name": "add"}}], "metadata": {"nn_module_stack": "L__self__,,__main__.M"}},
   {"target": "torch.ops.aten.mul.Tensor", "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "add"}}},
     {"name": "other", "arg": {"as_tensor": {"name": "add"}}}], "outputs": [{"as_tensor": {"name": "mul"}}], "metadata": {}}],
  "tensor_values": {
   "arg0_1": {"meta": {"dtype": 7, "sizes": [{"as_int": 3}], "requires_grad": false, "device": {"type": "cpu", "index": null}, "strides": [{"as_int": 1}], "storage_offset": 0, "layout": 7}},
   "arg1_1": {"meta": {"dtype": 7, "sizes": [{"as_expr": {"expr_str": "s0", "hint": 3}}], "requires_grad": false, "device": {"type": "cpu", "index": null}, "strides": [{"as_int": 1}], "storage_offset": 0, "layout": 7}},
   "add": {"meta": {"dtype": 7, "sizes": [{"as_int": 3}], "requires_grad": false, "device": {"type": "cpu", "index": null}, "strides": [{"as_int": 1}], "storage_offset": 0, "layout": 7}},
   "mul": {"meta": {"dtype": 7, "sizes": [{"as_int": 3}], "requires_grad": false, "device": {"type": "cpu", "index": null}, "strides": [{"as_int": 1}], "storage_offset": 0, "layout": 7}}},
  "sym_int_values": {}, "sym_bool_values": {}},
 "signature": {"inputs_to_parameters": {}, "inputs_to_buffers": {"arg0_1": "buf"}, "user_inputs": ["arg1_1"],
  "user_outputs": ["mul"], "buffers_to_mutate": {"add": "buf"}, "backward_signature": null},
 "call_spec": {"in_spec": "", "out_spec": ""}},
 "opset_version": {"aten": 10},
 "range_constraints": {"s0": {"min_val": 2, "max_val": Infinity}},
 "equality_constraints": [],
 "schema_version": 1})J";
}  // namespace

TEST_CASE("pt2: the legacy layout (torch 2.1-2.6): serialized_exported_program.json at the root") {
  std::string zip = make_zip({{"serialized_exported_program.json", kLegacy},
                              {"serialized_state_dict.pt", "PK-not-read"},
                              {"serialized_constants.pt", ""},
                              {"version", "1"}});
  Program p = read_pt2_bytes(zip, "old.pt2");
  CHECK(p.name == "");
  CHECK(p.schema_major == 0);
  CHECK(p.schema_minor == 1);
  REQUIRE(p.graph.nodes.size() == 2);
  CHECK(p.graph.nodes[0].inputs[2].arg.kind == ArgKind::None);
  CHECK(p.graph.nodes[0].inputs[2].kind == ArgumentKind::Unrecorded);
  CHECK(p.graph.tensor_values.at("arg1_1").sizes[0].expr == "s0");
  // The signature's maps as specs in the order of the graph's inputs and outputs.
  REQUIRE(p.inputs.size() == 2);
  CHECK(p.inputs[0].kind == InputKind::UserInput);
  CHECK(p.inputs[0].arg.s == "arg1_1");
  CHECK(p.inputs[1].kind == InputKind::Buffer);
  CHECK(p.inputs[1].target == "buf");
  REQUIRE(p.outputs.size() == 2);
  CHECK(p.outputs[0].kind == OutputKind::BufferMutation);
  CHECK(p.outputs[1].kind == OutputKind::UserOutput);
  CHECK(p.range_constraints.at(0).second.min == 2);
  CHECK(!p.range_constraints.at(0).second.max);
  // torch 2.2-2.6 wrote the same entries under a folder of the archive's name.
  Program q = read_pt2_bytes(make_zip({{"archive/serialized_exported_program.json", kLegacy}}), "old2.pt2");
  CHECK(q.graph.nodes.size() == 2);
}

TEST_CASE("pt2: tied weights: two parameter names, one payload (data/weights/<model>_weights_config.json)") {
  // Non-strict export keeps one placeholder per name; the payload config stores a tied tensor once.
  const char* config = R"J({"config": {
    "fc.weight": {"path_name": "weight_0", "is_param": true, "use_pickle": false, "tensor_meta": {"dtype": 7, "sizes": [{"as_int": 4}, {"as_int": 3}], "requires_grad": true, "device": {"type": "cpu", "index": null}, "strides": [{"as_int": 3}, {"as_int": 1}], "storage_offset": {"as_int": 0}, "layout": 7}},
    "head.weight": {"path_name": "weight_0", "is_param": true, "use_pickle": false, "tensor_meta": {"dtype": 7, "sizes": [{"as_int": 4}, {"as_int": 3}], "requires_grad": true, "device": {"type": "cpu", "index": null}, "strides": [{"as_int": 3}, {"as_int": 1}], "storage_offset": {"as_int": 0}, "layout": 7}},
    "fc.bias": {"path_name": "weight_1", "is_param": true, "use_pickle": false, "tensor_meta": {"dtype": 7, "sizes": [{"as_int": 4}], "requires_grad": true, "device": {"type": "cpu", "index": null}, "strides": [{"as_int": 1}], "storage_offset": {"as_int": 0}, "layout": 7}}}})J";
  Program p = read_pt2_bytes(
      make_pt2({{"model", linear_program()}}, "model",
               {{"data/weights/model_weights_config.json", config}, {"data/weights/weight_0", "not read"}}),
      "tied.pt2");
  REQUIRE(p.payloads.size() == 3);
  CHECK(p.canonical_payload("head.weight") == "fc.weight");
  CHECK(p.canonical_payload("fc.weight") == "fc.weight");
  CHECK(p.canonical_payload("fc.bias") == "fc.bias");
  CHECK(p.canonical_payload("not.there") == "not.there");
}

TEST_CASE("pt2: every Argument member, an unknown one kept, a higher-order op's subgraph") {
  std::string node = R"J(,
   {"target": "torch.ops.mylib.everything.default", "name": "every",
    "inputs": [
     {"name": "ints", "arg": {"as_ints": [1, -2]}, "kind": 2},
     {"name": "floats", "arg": {"as_floats": [0.5, NaN]}},
     {"name": "strings", "arg": {"as_strings": ["a", "b"]}},
     {"name": "sym_ints", "arg": {"as_sym_ints": [{"as_name": "sym_size_int"}, {"as_int": 8}]}},
     {"name": "opt", "arg": {"as_optional_tensors": [{"as_tensor": {"name": "x"}}, {"as_none": true}]}},
     {"name": "dtype", "arg": {"as_scalar_type": 29}},
     {"name": "device", "arg": {"as_device": {"type": "cuda", "index": 1}}},
     {"name": "memory_format", "arg": {"as_memory_format": 2}},
     {"name": "bools", "arg": {"as_bools": [true, false]}},
     {"name": "complex", "arg": {"as_complex": {"real": 1.5, "imag": -2}}},
     {"name": "int_lists", "arg": {"as_int_lists": [[1, 2], []]}},
     {"name": "nested", "arg": {"as_nested_tensors": [[{"name": "x"}], []]}},
     {"name": "map", "arg": {"as_string_to_argument": {"k": {"as_int": 3}, "t": {"as_tensor": {"name": "relu"}}}}},
     {"name": "op", "arg": {"as_operator": "torch.ops.aten.add.Tensor"}},
     {"name": "obj", "arg": {"as_custom_obj": {"name": "obj_0", "class_fqn": "__torch__.torch.classes.m.Foo"}}},
     {"name": "future", "arg": {"as_something_new": {"x": [1, {"y": 2}]}}},
     {"name": "body", "arg": {"as_graph": {"name": "true_graph_0", "graph": {
        "inputs": [{"as_tensor": {"name": "a"}}], "outputs": [{"as_tensor": {"name": "cos"}}],
        "nodes": [{"target": "torch.ops.aten.cos.default", "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "a"}}}],
                   "outputs": [{"as_tensor": {"name": "cos"}}], "metadata": {}}],
        "tensor_values": {"a": {"dtype": 7, "sizes": [], "requires_grad": false, "device": {"type": "cpu"}},
                          "cos": {"dtype": 7, "sizes": [], "requires_grad": false, "device": {"type": "cpu"}}},
        "sym_int_values": {}, "sym_bool_values": {}}}}}],
    "outputs": [{"as_tensors": [{"name": "every_0"}, {"name": "every_1"}]}], "metadata": {}},
   {"target": "torch.ops.aten.sym_size.int", "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "x"}}}, {"name": "dim", "arg": {"as_int": 0}}],
    "outputs": [{"as_sym_int": {"as_name": "sym_size_int"}}], "metadata": {}})J";
  // sym_size_int is read before it is defined: this program is refused (test_pt2_bad.cc); moved first it
  // reads.
  std::string json = linear_program(R"({"major": 8, "minor": 20})", node);
  std::string sym_node = json.substr(json.find(R"J({"target": "torch.ops.aten.sym_size.int")J"));
  sym_node = sym_node.substr(0, sym_node.find(R"J("metadata": {}})J") + 15);
  json.erase(json.find(sym_node) - 5, sym_node.size() + 5);
  json.insert(json.find(R"J("nodes": [)J") + 10, sym_node + ",\n");
  size_t tv = json.find(R"J("tensor_values": {)J", json.find("every_0"));
  json.insert(
      tv + 18,
      R"J("every_0": {"dtype": 7, "sizes": [], "requires_grad": false, "device": {"type": "cpu"}}, "every_1": {"dtype": 7, "sizes": [], "requires_grad": false, "device": {"type": "cpu"}},)J");
  size_t si = json.find(R"J("sym_int_values": {})J", tv);
  json.replace(
      si, 20,
      R"J("sym_int_values": {"sym_size_int": {"as_expr": {"expr_str": "Symbol('s0', integer=True, positive=True)"}}})J");
  Program p = read_program_json(json, "every.json");
  REQUIRE(p.graph.nodes.size() == 4);
  const pt2::Node& n = p.graph.nodes[3];
  REQUIRE(n.inputs.size() == 17);
  auto arg = [&](size_t i) -> const Argument& { return n.inputs[i].arg; };
  CHECK(n.inputs[0].kind == ArgumentKind::Keyword);
  CHECK(arg(0).kind == ArgKind::Ints);
  CHECK(arg(0).items.at(1).i == -2);
  CHECK(std::isnan(arg(1).items.at(1).f));
  CHECK(arg(2).items.at(1).s == "b");
  CHECK(arg(3).items.at(0).kind == ArgKind::SymInt);
  CHECK(arg(3).items.at(0).s == "sym_size_int");
  CHECK(arg(3).items.at(1).s.empty());
  CHECK(arg(3).items.at(1).i == 8);
  CHECK(arg(4).items.at(0).kind == ArgKind::Tensor);
  CHECK(arg(4).items.at(1).kind == ArgKind::None);
  CHECK(arg(5).kind == ArgKind::ScalarType);
  CHECK(scalar_type_info(arg(5).i)->type == ScalarType::Float8E4M3FN);
  CHECK(scalar_type_info(arg(5).i)->ir == DType::Float8E4M3FN);
  CHECK(arg(6).s == "cuda");
  CHECK(arg(6).i == 1);
  CHECK(arg(7).i == 2);
  CHECK(arg(8).items.at(0).b);
  CHECK(arg(9).f == 1.5);
  CHECK(arg(9).imag == -2);
  CHECK(arg(10).items.at(0).items.at(1).i == 2);
  CHECK(arg(10).items.at(1).items.empty());
  CHECK(arg(11).items.at(0).items.at(0).s == "x");
  CHECK(arg(12).keys.at(1) == "t");
  CHECK(arg(12).items.at(1).s == "relu");
  CHECK(arg(13).s == "torch.ops.aten.add.Tensor");
  CHECK(arg(14).s2 == "__torch__.torch.classes.m.Foo");
  CHECK(arg(15).kind == ArgKind::Unknown);
  CHECK(arg(15).s == "as_something_new");
  REQUIRE(arg(16).graph.get() != nullptr);
  CHECK(arg(16).s == "true_graph_0");
  CHECK(arg(16).graph->nodes.at(0).target == "torch.ops.aten.cos.default");
  CHECK(std::string(arg_kind_name(arg(12).kind)) == "as_string_to_argument");
  CHECK(n.outputs.at(0).items.at(1).s == "every_1");
}

TEST_CASE("pt2: symbolic sizes: sympy's srepr (torch >= 2.6) and str (older) text as Dims") {
  struct Row {
    const char* text;
    const char* dim;  // Dim::str(), "?" when unknown
  };
  const Row rows[] = {
      {"Symbol('s0', integer=True, positive=True)", "s0"},
      {"s77", "s77"},
      {"Integer(7)", "7"},
      {"Mul(Integer(2), Symbol('s0', integer=True, positive=True))", "2*s0"},
      {"Add(Symbol('s0', integer=True, positive=True), Integer(1))", "s0 + 1"},
      {"Add(Mul(Integer(-1), Symbol('s0', integer=True, positive=True)), Integer(8))", "-s0 + 8"},
      {"FloorDiv(Symbol('s0', integer=True, positive=True), Integer(2))", "floor(s0/2)"},
      {"Max(Integer(1), Symbol('s0', integer=True, positive=True))", "max(s0, 1)"},
      {"Pow(Symbol('s1', integer=True, positive=True), Integer(2))", "s1*s1"},
      {"2*s0", "2*s0"},
      {"s0 + 1", "s0 + 1"},
      {"s0*s1", "s0*s1"},
      {"(s0//2)", "floor(s0/2)"},
      {"-s0 + 8", "-s0 + 8"},
      {"Min(s0, 512)", "min(s0, 512)"},
      {"floor(s0/2)", "floor(s0/2)"},
      {"CeilToInt(s0/2)", "floor((s0 + 1)/2)"},
      {"Mod(7, 3)", "1"},
      {"PythonMod(Integer(-7), Integer(3))", "2"},
      {"s0**2", "s0*s0"},
      {"CleanDiv(4*s0, 4)", "s0"},
      // unknown, with a warning: overflow, division by zero, unparseable, infinite, not integral
      {"9223372036854775807*s0*s0 + 9223372036854775807*s0*s0", "?"},
      {"Integer(99999999999999999999)", "?"},
      {"FloorDiv(s0, 0)", "?"},
      {"s0 +", "?"},
      {"Foo(s0)", "?"},
      {"int_oo", "?"},
      {"IntInfinity()", "?"},
      {"s0/3", "?"},
      {"Float(0.5)", "?"},
      {"Mod(6*s0, 3)", "?"},  // a symbolic remainder is not kept
  };
  for (const Row& r : rows) {
    CAPTURE(r.text);
    std::string why;
    Dim d = parse_sym_expr(r.text, nullptr, &why);
    CHECK(d.str() == r.dim);
    CHECK(why.empty() == (std::string(r.dim) != "?"));
  }
  // Deep nesting and long chains are refused, not recursed into.
  std::string deep(10000, '('), chain = "s0";
  for (int i = 0; i < 5000; ++i) chain += " + 1";
  CHECK(parse_sym_expr(deep + "s0" + std::string(10000, ')'), nullptr, nullptr).is_unknown());
  CHECK(parse_sym_expr(chain, nullptr, nullptr).is_unknown());
}

TEST_CASE("pt2: symbols named after the input dims they stand for; torch's names are aliases") {
  Program p = read_pt2_bytes(make_pt2({{"model", linear_program()}}), "m.pt2");
  SymbolNames names = SymbolNames::from_program(p);
  CHECK(names.name_of("s0") == "x.0");
  CHECK(names.name_of("s9") == "s9");
  CHECK(names.resolve("s0") == "x.0");
  CHECK(names.resolve("x.0") == "x.0");
  CHECK(names.resolve("y") == "");
  SymDims dims(names);
  const TensorMeta& relu = p.graph.tensor_values.at("relu");
  CHECK(dims.dim(relu.sizes[0]).str() == "x.0");
  CHECK(dims.dim(relu.sizes[1]).str() == "4");
  CHECK(dims.expr("Mul(Integer(2), Symbol('s0', integer=True, positive=True))").str() == "2*x.0");
  CHECK(dims.warnings.empty());
  CHECK(dims.expr("FloorDiv(s0, 0)").is_unknown());
  REQUIRE(dims.warnings.size() == 1);
  CHECK(dims.warnings[0] == "symbolic size 'FloorDiv(s0, 0)' is unknown: divides by zero");
}

TEST_CASE("pt2: torch 2.14's archives (models/pt2/*.pt2) read, with the facts Python reads from them") {
  // Each row: file, program, then what Python's zipfile + json alone read from the archive (the table was
  // written by that check, models/pt2 as committed with c02ebf4 / f67a075): the program JSON's node count
  // and tensor_values, its parameter and buffer input specs and output specs, the entries of its weights
  // and constants configs, its schema_version. For each archive in models/pt2:
  //   j = json.loads(z.read(f"{folder}/models/{model}.json")); g = j["graph_module"]["graph"]
  //   len(g["nodes"]), len(g["tensor_values"]), kinds of j["graph_module"]["signature"]["input_specs"], ...
  struct Row {
    const char* file;
    const char* program;
    size_t nodes, values, parameters, buffers, outputs, payloads;
    int major, minor;
  };
  const Row rows[] = {
      {"bert.pt2", "model", 80, 120, 39, 2, 2, 41, 8, 20},
      {"cnn.pt2", "model", 11, 27, 12, 3, 1, 15, 8, 20},
      {"cnn_core_aten.pt2", "model", 13, 31, 12, 3, 1, 15, 8, 20},
      // the joint training step: 12 gradients, 3 buffer mutations, the loss (written by the same check)
      {"cnn_joint.pt2", "model", 106, 129, 12, 3, 16, 15, 8, 20},
      {"cnn_train.pt2", "model", 12, 28, 12, 3, 1, 15, 8, 20},
      // transformers' Falcon: numpy_T and torch.vmap's pre-dispatch batch dims (written by the same check)
      {"falcon.pt2", "model", 140, 149, 16, 2, 1, 23, 8, 20},
      {"gpt2.pt2", "model", 124, 153, 29, 0, 1, 29, 8, 20},
      {"hop_auto_functionalized.pt2", "model", 5, 8, 2, 0, 1, 2, 8, 20},
      {"hop_autocast.pt2", "model", 4, 8, 4, 0, 1, 4, 8, 20},
      {"hop_cond.pt2", "model", 3, 8, 4, 0, 1, 4, 8, 20},
      {"hop_custom_ops.pt2", "model", 4, 6, 2, 0, 1, 2, 8, 20},
      {"hop_effect_print.pt2", "model", 2, 4, 2, 0, 1, 2, 8, 20},
      {"hop_invoke_subgraph.pt2", "model", 2, 5, 2, 0, 1, 2, 8, 20},
      {"hop_map.pt2", "model", 1, 4, 2, 0, 1, 2, 8, 20},
      {"hop_no_grad.pt2", "model", 2, 7, 4, 0, 1, 4, 8, 20},
      {"hop_scan.pt2", "model", 3, 6, 2, 0, 2, 2, 8, 20},
      {"hop_while_loop.pt2", "model", 2, 6, 2, 0, 1, 2, 8, 20},
      {"hop_with_effects.pt2", "model", 3, 7, 2, 0, 2, 2, 8, 20},
      {"llama.pt2", "model", 179, 190, 21, 2, 1, 23, 8, 20},
      // a decoder's joint training step: 21 gradients, the loss (written by the same check)
      {"llama_joint.pt2", "model", 681, 684, 21, 2, 22, 23, 8, 20},
      // one decode step with transformers' StaticCache as 4 mutated buffers (written by the same check)
      {"llama_static_cache.pt2", "model", 177, 204, 21, 8, 1, 35, 8, 20},
      // issue 53's fixtures (models/parallel_oracle.py), by the same check
      {"parallel_gpt.pt2", "model", 57, 91, 29, 0, 1, 29, 8, 20},
      {"parallel_gpt_nodrop.pt2", "model", 57, 91, 29, 0, 1, 29, 8, 20},
      {"parallel_moe.pt2", "model", 139, 193, 55, 0, 1, 55, 8, 20},
      {"lraspp_mobilenet_v3_large.pt2", "model", 193, 513, 178, 141, 1, 319, 8, 20},
      {"mixtral.pt2", "model", 256, 264, 21, 2, 1, 23, 8, 20},
      {"mixtral_batched_mm.pt2", "model", 232, 242, 21, 2, 1, 23, 8, 20},
      {"mlp.pt2", "model", 5, 12, 6, 0, 1, 6, 8, 20},
      {"mobilenet_v3_small.pt2", "model", 157, 402, 142, 102, 1, 244, 8, 20},
      {"multi_program.pt2", "cnn", 11, 27, 12, 3, 1, 15, 8, 20},
      {"multi_program.pt2", "mlp", 5, 12, 6, 0, 1, 6, 8, 20},
      {"r3d_18.pt2", "model", 68, 191, 62, 60, 1, 122, 8, 20},
      {"resnet18.pt2", "model", 69, 192, 62, 60, 1, 122, 8, 20},
      {"t5.pt2", "model", 408, 437, 50, 0, 2, 53, 8, 20},
      {"vit.pt2", "model", 76, 116, 40, 0, 2, 40, 8, 20},
      {"whisper.pt2", "model", 213, 300, 90, 0, 2, 90, 8, 20},
  };
  size_t files = 0;
  for (const auto& f : std::filesystem::directory_iterator(std::string(FLOPWISE_SOURCE_DIR) + "/models/pt2"))
    files += f.path().extension() == ".pt2";
  CHECK(files == 35);  // every archive is in the table (multi_program twice)
  for (const Row& r : rows) {
    std::string file = r.file, program = r.program;
    CAPTURE(file);
    CAPTURE(program);
    std::string path = std::string(FLOPWISE_SOURCE_DIR) + "/models/pt2/" + file;
    Program p = read_pt2_file(path, file == "multi_program.pt2" ? program : "");
    CHECK(p.name == program);
    CHECK(p.graph.nodes.size() == r.nodes);
    CHECK(p.graph.tensor_values.size() == r.values);
    auto count = [&](InputKind k) {
      return static_cast<size_t>(
          std::count_if(p.inputs.begin(), p.inputs.end(), [&](const InputSpec& s) { return s.kind == k; }));
    };
    CHECK(count(InputKind::Parameter) == r.parameters);
    CHECK(count(InputKind::Buffer) == r.buffers);
    CHECK(p.outputs.size() == r.outputs);
    CHECK(p.payloads.size() == r.payloads);
    CHECK(p.schema_major == r.major);
    CHECK(p.schema_minor == r.minor);
    CHECK(p.torch_version.rfind("2.14", 0) == 0);
    SymDims dims(SymbolNames::from_program(p));
    for (const auto& [name, meta] : p.graph.tensor_values)
      for (const SymInt& s : meta.sizes) CHECK_FALSE(dims.dim(s).is_unknown());
    CHECK(dims.warnings.empty());
  }
}
