// shape_inference/ops/sequence.cc — sequence and optional family. The IR has no sequence type: a sequence
// value carries its element dtype and an unknown-rank shape, so tensors taken out of a sequence keep their
// dtype but not their shape. An optional value carries its element's dtype and shape. No arithmetic: layout
// only.
#include "../helpers.h"

namespace flopwise {

namespace {

void set_sequence(InferContext& c, size_t i, DType elem) { c.set_output(i, elem, Shape::unknown_rank()); }

DType sequence_attr_dtype(const Node& n, DType dflt) {
  return n.has_attr("dtype") ? static_cast<DType>(n.attr_i("dtype", 0)) : dflt;
}

void infer_sequence_construct(InferContext& c) {
  DType t = DType::Undefined;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    DType ti = c.in_dtype(i);
    if (ti == DType::Undefined) continue;
    if (t != DType::Undefined && ti != t)
      c.fail(std::string("elements must share one dtype, got ") + dtype_name(t) + " and " + dtype_name(ti));
    t = ti;
  }
  set_sequence(c, 0, t);
}

void infer_sequence_empty(InferContext& c) {
  set_sequence(c, 0, sequence_attr_dtype(c.node(), DType::Float32));
}

// SequenceInsert(seq, tensor, pos), SequenceErase(seq, pos): a sequence of the same element type.
void infer_same_sequence(InferContext& c) {
  DType t = c.in_dtype(0);
  if (t == DType::Undefined && c.node().op == "SequenceInsert") t = c.in_dtype(1);
  set_sequence(c, 0, t);
}

void infer_sequence_at(InferContext& c) { c.set_output(0, c.in_dtype(0), Shape::unknown_rank()); }

void infer_sequence_length(InferContext& c) { c.set_output(0, DType::Int64, Shape::scalar()); }

// SplitToSequence(input, split?): elements have the input's dtype (and its rank unless keepdims=0
// with a scalar split, but the IR does not track element shapes).
void infer_split_to_sequence(InferContext& c) { set_sequence(c, 0, c.in_dtype(0)); }

// ConcatFromSequence: rank is the elements' rank (+1 with new_axis), which is not tracked.
void infer_concat_from_sequence(InferContext& c) { c.set_output(0, c.in_dtype(0), Shape::unknown_rank()); }

// Optional(x): x's dtype and shape; Optional() with only a type attribute: unknown.
void infer_optional(InferContext& c) {
  if (c.has_input(0))
    c.set_output(0, c.in_dtype(0), c.in_shape(0));
  else
    c.set_output(0, DType::Undefined, Shape::unknown_rank());
}

// OptionalHasElement: bool scalar, known when the input is provably present or absent.
void infer_optional_has_element(InferContext& c) {
  c.set_output(0, DType::Bool, Shape::scalar());
  if (!c.has_input(0)) {  // opset 18: an omitted input is an empty optional
    ConstData d;
    d.ints = {Dim(0)};
    c.set_output_data(0, std::move(d));
  }
}

// OptionalGetElement: the element (for a plain tensor input, that tensor).
void infer_optional_get_element(InferContext& c) {
  c.set_output(0, c.in_dtype(0), c.in_shape(0));
  if (c.in_data(0)) c.set_output_data(0, *c.in_data(0));
}

}  // namespace

void register_sequence_ops(OpRegistry& r) {
  const char* k0 = "layout only (sequences and optionals: no arithmetic)";
  reg(r, "SequenceConstruct", 11, 0, k0, infer_sequence_construct, cost_zero);
  reg(r, "SequenceEmpty", 11, 0, k0, infer_sequence_empty, cost_zero);
  reg(r, "SequenceInsert", 11, 0, k0, infer_same_sequence, cost_zero);
  reg(r, "SequenceErase", 11, 0, k0, infer_same_sequence, cost_zero);
  reg(r, "SequenceAt", 11, 0, k0, infer_sequence_at, cost_zero);
  reg(r, "SequenceLength", 11, 0, k0, infer_sequence_length, cost_zero);
  reg(r, "SplitToSequence", 11, 0, k0, infer_split_to_sequence, cost_zero);
  reg(r, "ConcatFromSequence", 11, 0, k0, infer_concat_from_sequence, cost_zero);
  reg(r, "Optional", 15, 0, k0, infer_optional, cost_zero);
  reg(r, "OptionalHasElement", 15, 0, k0, infer_optional_has_element, cost_zero);
  reg(r, "OptionalGetElement", 15, 0, k0, infer_optional_get_element, cost_zero);
}

}  // namespace flopwise
