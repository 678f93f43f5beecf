// tests/test_pt2_read.cc — the .pt2 reader (src/pt2): layouts, schema versions, programs, the signature,
// arguments and metadata, tied weights, symbolic sizes. Bad archives and bad programs are in
// tests/test_pt2_bad.cc. Archives are zipped in the test (tests/pt2_util.h) from the JSON written here,
// in the shapes torch writes (torch/_export/serde/schema.py; torch 2.1's in kLegacy).
// To add a case: write the smallest program JSON that shows it, zip it with make_pt2, read, check.
#include <doctest/doctest.h>

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
   "x": {"dtype": 13, "sizes": [{"as_expr": {"expr_str": ")J" + sym("s0") + R"J(", "hint": {"as_int": 2}}}, {"as_int": 3}], "requires_grad": false, "device": {"type": "meta", "index": 0}, "strides": [], "storage_offset": {"as_int": 0}, "layout": 7},
   "linear": {"dtype": 7, "sizes": [{"as_expr": {"expr_str": ")J" + sym("s0") + R"J(", "hint": null}}, {"as_int": 4}], "requires_grad": true, "device": {"type": "cpu", "index": null}, "strides": [], "storage_offset": {"as_int": 0}, "layout": 7},
   "relu": {"dtype": 7, "sizes": [{"as_expr": {"expr_str": ")J" + sym("s0") + R"J("}}, {"as_int": 4}], "requires_grad": true, "device": {"type": "cpu", "index": null}, "strides": [], "storage_offset": {"as_int": 0}, "layout": 7}},
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
  CHECK(lin.stack_trace.find("self.fc(x)") != std::string_view::npos);
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
  Program p = read_pt2_bytes(make_zip({{"archive/archive_format", "pt2"}, {"archive/models/model.json", json, true}}),
                             "m.pt2");
  CHECK(p.graph.nodes.size() == 2);
  Program z = read_pt2_bytes(make_zip({{"archive/archive_format", "pt2"}, {"archive/models/model.json", json}}, true),
                             "zip64.pt2");
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
      read_pt2_bytes(make_zip({{"model/archive_format", "pt2"}, {"model/data/aotinductor/model/model.so", "ELF"}}),
                     "aoti.pt2"),
      "aoti.pt2: an AOTInductor package (compiled code), not an exported program", InputError);
  CHECK_THROWS_WITH_AS(read_pt2_bytes(make_zip({{"a/data.pkl", "x"}, {"a/version", "3"}}), "ts.pt"),
                       "ts.pt: a zip archive that is no torch.export archive (no archive_format or "
                       "serialized_exported_program.json)",
                       InputError);
}

TEST_CASE("pt2: schema versions: 5.x, 7.x and 8.x read; an unknown major is refused naming it") {
  for (const char* v : {R"({"major": 5, "minor": 1})", R"({"major": 7, "minor": 3})", R"({"major": 8, "minor": 17})"}) {
    CAPTURE(v);
    CHECK(read_program_json(linear_program(v), "p.json").graph.nodes.size() == 2);
  }
  CHECK_THROWS_WITH_AS(read_program_json(linear_program(R"({"major": 9, "minor": 0})"), "p.json"),
                       "p.json: schema version 9.0 is not one this reader knows (it reads the bare integer of torch "
                       "2.1 through 8.x)",
                       InputError);
}
