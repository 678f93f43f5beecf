// src/import/onnx_normalize.cc — opset normalisation: older ONNX op versions are rewritten into the newest
// layout at import, so shape and cost rules see one form per op (axes/splits/pads/scales as inputs, never
// attributes).
#include "onnx_normalize.h"

#include <algorithm>
#include <string_view>

namespace flopwise {

namespace {

// Adds a constant integer value (an attribute turned into an input) and returns its index.
int add_int_const(Graph& g, const Node& n, const std::string& what, const std::vector<int64_t>& vals) {
  int idx = g.add_value(n.name + "::" + what + "#" + std::to_string(g.values.size()));
  Value& v = g.values[idx];
  v.dtype = DType::Int64;
  v.shape = Shape({Dim(static_cast<int64_t>(vals.size()))});
  ConstData d;
  for (auto x : vals) d.ints.push_back(Dim(x));
  v.data = std::move(d);
  v.synthetic = true;
  return idx;
}

int add_float_const(Graph& g, const Node& n, const std::string& what, const std::vector<double>& vals,
                    bool scalar) {
  int idx = g.add_value(n.name + "::" + what + "#" + std::to_string(g.values.size()));
  Value& v = g.values[idx];
  v.dtype = DType::Float32;
  v.shape = scalar ? Shape::scalar() : Shape({Dim(static_cast<int64_t>(vals.size()))});
  ConstData d;
  d.is_float = true;
  d.floats = vals;
  v.data = std::move(d);
  v.synthetic = true;
  return idx;
}

void set_input(Node& n, size_t pos, int idx) {
  if (n.inputs.size() <= pos) n.inputs.resize(pos + 1, -1);
  n.inputs[pos] = idx;
}

// Moves an ints attribute into input `pos` when the node uses the attribute form.
void ints_attr_to_input(Node& n, Graph& g, const char* attr, size_t pos) {
  auto it = n.attrs.find(attr);
  if (it == n.attrs.end()) return;
  set_input(n, pos, add_int_const(g, n, attr, it->second.ints));
  n.attrs.erase(it);
}

bool is_reduce(std::string_view op) {
  static constexpr std::string_view kOps[] = {
      "ReduceMax", "ReduceMin",    "ReduceMean",      "ReduceProd",      "ReduceL1",
      "ReduceL2",  "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ReduceSum"};
  return op.substr(0, 6) == "Reduce" && std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

}  // namespace

void normalize_onnx_node(Node& n, Graph& g) {
  if (!n.domain.empty()) return;
  // Compared as a view: a length check and an inlined memcmp per literal (std::string == const char*
  // calls out to strlen and compare, and this runs once per node).
  const std::string_view op = n.op;
  if (op == "Squeeze" || op == "Unsqueeze" || is_reduce(op)) {
    ints_attr_to_input(n, g, "axes", 1);
  } else if (op == "Split") {
    ints_attr_to_input(n, g, "split", 1);
  } else if (op == "Clip") {
    // Clip < 11: min/max attributes; absent means unbounded.
    bool has_min = n.has_attr("min"), has_max = n.has_attr("max");
    if (has_min) set_input(n, 1, add_float_const(g, n, "min", {n.attr_f("min", 0)}, true));
    if (has_max) set_input(n, 2, add_float_const(g, n, "max", {n.attr_f("max", 0)}, true));
    n.attrs.erase("min");
    n.attrs.erase("max");
  } else if (op == "Pad") {
    // Pad-1 "paddings", Pad-2 "pads" and "value" attributes; Pad-11 takes them as inputs.
    if (n.has_attr("paddings")) ints_attr_to_input(n, g, "paddings", 1);
    ints_attr_to_input(n, g, "pads", 1);
    if (n.has_attr("value")) {
      set_input(n, 2, add_float_const(g, n, "value", {n.attr_f("value", 0)}, true));
      n.attrs.erase("value");
    }
  } else if (op == "Slice") {
    if (n.has_attr("starts")) {
      ints_attr_to_input(n, g, "starts", 1);
      ints_attr_to_input(n, g, "ends", 2);
      ints_attr_to_input(n, g, "axes", 3);
    }
  } else if (op == "Reshape") {
    ints_attr_to_input(n, g, "shape", 1);
  } else if (op == "TopK") {
    if (n.has_attr("k")) {
      set_input(n, 1, add_int_const(g, n, "k", {n.attr_i("k", 1)}));
      n.attrs.erase("k");
    }
  } else if (op == "Upsample") {
    // Upsample-7 (scales attribute) and -9 (scales input) become Resize-13: X, roi, scales, sizes.
    n.op = "Resize";
    if (n.has_attr("scales")) {
      auto s = n.attr_floats("scales");
      n.inputs.resize(1);
      set_input(n, 2, add_float_const(g, n, "scales", s, false));
      n.attrs.erase("scales");
    } else if (n.inputs.size() >= 2) {
      int scales = n.inputs[1];
      n.inputs = {n.inputs[0], -1, scales};
    }
    if (n.attr_s("mode", "nearest") == "linear" || n.attr_s("mode", "") == "bilinear")
      n.attrs["mode"].s = "linear";
  } else if (op == "Resize" && n.opset > 0 && n.opset < 11) {
    // Resize-10: X, scales.
    if (n.inputs.size() >= 2) n.inputs = {n.inputs[0], -1, n.inputs[1]};
  } else if (op == "Dropout" && n.has_attr("ratio")) {
    n.attrs.erase("ratio");  // Dropout < 12: ratio attribute; inference ignores it
  }
}

}  // namespace flopwise
