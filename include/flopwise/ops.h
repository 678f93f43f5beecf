// include/flopwise/ops.h — the op registry: one record per op with its shape rule and cost rule.
// Owns: OpRecord, the contexts shape and cost functions see, registry lookup. Op families live in
// shape_inference/ops/<family>.cc and are listed once in shape_inference/ops/families.def.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "flopwise/dim.h"
#include "flopwise/ir.h"
#include "flopwise/numel_memo.h"

namespace flopwise {

struct InferResult;

// What a shape function sees: the node, its graph, and helpers to read inputs and set outputs.
class InferContext {
 public:
  InferContext(Graph& g, Node& n, std::vector<std::string>* warnings)
      : graph_(g), node_(n), warnings_(warnings) {}

  const Node& node() const { return node_; }
  Node& mutable_node() { return node_; }
  Graph& graph() { return graph_; }
  size_t num_inputs() const { return node_.inputs.size(); }
  size_t num_outputs() const { return node_.outputs.size(); }
  bool has_input(size_t i) const { return i < node_.inputs.size() && node_.inputs[i] >= 0; }
  bool has_output(size_t i) const { return i < node_.outputs.size() && node_.outputs[i] >= 0; }
  const Value* input(size_t i) const { return has_input(i) ? &graph_.values[node_.inputs[i]] : nullptr; }
  // Shape of input i (unknown rank when absent or not inferred).
  const Shape& in_shape(size_t i) const;
  DType in_dtype(size_t i) const;
  // Contents of input i when known (integers as Dims); nullptr otherwise.
  const ConstData* in_data(size_t i) const;
  // Known integer contents as int64 (all elements known); nullopt otherwise.
  std::optional<std::vector<int64_t>> in_ints(size_t i) const;
  std::optional<std::vector<double>> in_floats(size_t i) const;  // float or int contents as double

  Value* output(size_t i) { return has_output(i) ? &graph_.values[node_.outputs[i]] : nullptr; }
  void set_output(size_t i, DType t, Shape s);
  void set_output_data(size_t i, ConstData d);  // contents; only kept when small
  void set_output_dtype(size_t i, DType t);

  void warn(const std::string& msg);
  // Records that the formulas assume lhs <= rhs (a case split a valid model decides; flopwise/infer.h).
  void assume(const Dim& lhs, const Dim& rhs, const std::string& why);
  // A size output `out` of this node takes from tensor contents not known here (flopwise/infer.h,
  // DataDepSymbol): the node's fresh symbol, made once per node and numbered in node order, or the number
  // --dim gave it. `lo`/`hi` bound it; a size they pin (hi == lo, hi == 0) is that number, no symbol.
  // Unknown outside the pass (no result to record it in). The symbol is named after the node's
  // `flopwise_symbol` attribute (an importer's stem) or its op, lower-case.
  Dim data_dependent(size_t out, const Dim& lo, const Dim& hi);
  // The pass's result (warnings, unsupported ops), for control-flow ops that infer their subgraphs
  // into it; nullptr when the context was made outside the pass.
  InferResult* result() const { return result_; }
  void set_result(InferResult* r) { result_ = r; }
  // A provable contradiction: throws ShapeError naming op, node and message.
  [[noreturn]] void fail(const std::string& msg) const;

 private:
  Graph& graph_;
  Node& node_;
  std::vector<std::string>* warnings_;
  InferResult* result_ = nullptr;
};

// What a cost function sees: the node after inference, with its input/output shapes.
struct OpCost;
struct CostContext {
  const Graph& graph;
  const Node& node;
  // Cost of one run of a subgraph of this node (If branches, Loop/Scan bodies).
  std::function<OpCost(const Graph&)> subgraph_cost;
  // Where a report's nodes are costed: the elements of shapes, each distinct one computed once (out_numel,
  // in_numel); nullptr: each time.
  NumelMemo* numel_memo = nullptr;
  const Shape& in_shape(size_t i) const;
  const Shape& out_shape(size_t i) const;
  DType in_dtype(size_t i) const;
  bool has_input(size_t i) const { return i < node.inputs.size() && node.inputs[i] >= 0; }
  const ConstData* in_data(size_t i) const;
  Count out_numel(size_t i = 0) const;    // elements of output i
  Dim out_numel_dim(size_t i = 0) const;  // the same as a dim (Shape::numel)
  Count in_numel(size_t i) const;
};

// Convention-dependent part of a node's cost. Params and memory bytes are computed generically
// from the node's inputs and outputs; an op's cost function gives only its work: the MACs of its
// contractions, and its FLOPs as the default convention counts them (2 per MAC plus the rest of its
// arithmetic, `bias` elements of which are bias adds). A convention (flopwise/convention.h) turns
// that work into the figure it reports, by the op's WorkKind.
// One node's work inside a control-flow body (an If branch, a Loop or Scan body; nested bodies flattened),
// times the runs of the loops around it: the precision its products run in, and what a roofline bounds.
struct BodyWork {
  DType mac_dtype = DType::Undefined;  // Undefined: no products (NodeReport::mac_dtype)
  Count macs, flops, bytes;
};
using BodyWorkList = std::shared_ptr<const std::vector<BodyWork>>;

struct OpCost {
  Count macs;
  Count flops;
  Count bias;  // bias-add elements included in `flops` (Conv/ConvTranspose/Gemm with a bias)
  // A control-flow node's bodies, node by node, as its counts take them (the branch that runs, or the
  // costlier one; a loop's runs): nullptr for other ops, and where the counts are no one body's (the max of
  // two branches whose order depends on the dims).
  BodyWorkList body;
  OpCost(Count m = {}, Count f = {}, Count b = {}) : macs(m), flops(f), bias(b) {}  // NOLINT: {macs, flops}
};

// What kind of work an op's non-contraction arithmetic is: the seam between cost rules and
// conventions. Each op has one (its family's, or an override in src/cost/conventions.def).
#define FLOPWISE_WORK_KINDS(X)                                                                      \
  X(contraction, "products with MACs (Conv, ConvTranspose, Gemm, MatMul, Einsum); bias adds apart") \
  X(bias, "a bias add: an Add of a parameter onto a contraction's output (Linear on 3-d input)")    \
  X(elementwise, "arithmetic, comparison and logic per element (Add, Mul, Relu, Clip, Where)")      \
  X(transcendental, "exp, log, erf, tanh, sigmoid, pow and activations built on them (Gelu, Elu)")  \
  X(reduction, "reductions and scans (ReduceSum, ReduceMean, ArgMax, CumSum)")                      \
  X(norm, "normalisation and softmax (BatchNorm, LayerNorm, GroupNorm, InstanceNorm, Softmax)")     \
  X(pool, "pooling window reads (MaxPool, AveragePool, global and adaptive pooling)")               \
  X(resample, "interpolation (Resize, GridSample)")                                                 \
  X(recurrent, "RNN, GRU, LSTM: gate products and gate arithmetic per step")                        \
  X(layout, "layout and data movement only: no arithmetic (Reshape, Transpose, Gather, Cast)")      \
  X(subgraph, "control flow (If, Loop, Scan): its bodies' nodes, each under the same convention")   \
  X(other, "composite and special ops (fused attention, detection, signal, quantised, random)")
enum class WorkKind : uint8_t {
#define FLOPWISE_KIND_ENUM(name, doc) name,
  FLOPWISE_WORK_KINDS(FLOPWISE_KIND_ENUM)
#undef FLOPWISE_KIND_ENUM
};
constexpr size_t kNumWorkKinds = 0
#define FLOPWISE_KIND_COUNT(name, doc) +1
    FLOPWISE_WORK_KINDS(FLOPWISE_KIND_COUNT)
#undef FLOPWISE_KIND_COUNT
    ;
std::string_view work_kind_name(WorkKind k);
std::string_view work_kind_doc(WorkKind k);

// A BatchNormalization that computes its batch's statistics (its cost then 7 FLOPs per element, else 2):
// the training_mode attribute (opset >= 14), or any output beyond Y (older opsets). --train counts the
// others as model.train() runs them.
bool batch_norm_training(const Node& n);

using ShapeFn = void (*)(InferContext&);
using CostFn = OpCost (*)(const CostContext&);
// Elements of the learned weights an op keeps in its attributes rather than its inputs (ai.onnx.ml's
// coefficients, support vectors, tree thresholds and leaf weights): params as docs/COUNTING.md counts them.
using AttrParamsFn = Count (*)(const Node&);

// What one training step (--train, src/analysis/training.cc; docs/training.md) does with an op, as torch's
// autograd runs it. Set in the op's family file beside its registration (train(), shape_inference/helpers.h),
// the same on each of its opset versions' records. The defaults are an op no rule covers: a backward of 2 x
// its forward MACs, its inputs kept (and listed as estimated), its inputs' dtype under autocast, a tensor of
// its own, and a forward that model.train() does not change.
// Its backward's products.
enum class TrainBackward : uint8_t {
  estimate,         // 2 x the forward's MACs (none without MACs), listed as estimated
  products,         // each operand's gradient a product of the other with the output's (Conv, MatMul, Gemm)
  products_of_two,  // as products, where it has two operands (an Einsum); else an estimate
  recurrent,        // the input projection's for dX and dW, the recurrence's for dR and the hidden state
};
// What its backward keeps from the forward (torch's derivatives.yaml), each storage once.
enum class TrainKeeps : uint8_t {
  unknown,                  // no rule: its inputs, listed as estimated
  nothing,                  // sizes only (Add, a view, Concat, Cast, a sum)
  both_operands,            // convolution_backward's one formula: input and weight, whichever is asked
  other_operand,            // each operand for the other's gradient (MatMul, Gemm, Einsum, Mul)
  divisor,                  // Div: the divisor for either gradient, the dividend for the divisor's
  result,                   // its result (Relu, Sigmoid, Exp, Softmax); an in-place one shares its input's
  input,                    // its input; an in-place op a copy of it, made before it overwrites it
  input_or_result,          // its input, its result in place (leaky_relu_, elu_: InputOrResult)
  input_and_slope,          // PRelu: its input, and its slope where the input needs a gradient
  input_and_channel_stats,  // BatchNormalization: its input and the batch's mean and inverse std per channel
  input_and_row_stats,      // LayerNormalization: its input and each normalised row's mean and inverse std
  input_and_argmax,         // max pooling: its input and the argmax indices (int64 per output element)
  gated_cells,              // LSTM, GRU: torch's cells step by step (gates, states, activations)
  rnn_cells,                // a tanh/ReLU RNN: its outputs step by step and the initial state
  mask,                     // an active dropout: what it multiplied by (a mask, or the noise)
  indices_out,              // TopK: its indices output (value_selecting_reduction_backward)
  indices_in,               // Gather: its indices input
  first_input,              // its first input alone (Where's condition, an adaptive average pool's input)
  input_and_result,         // ReduceMax, ReduceMin: input and result
};
// torch.autocast's treatment (CUDA's lists, aten/src/ATen/autocast_mode.cpp).
enum class TrainAutocast : uint8_t {
  none,     // in its inputs' dtype
  low,      // the low dtype's list: products (Conv, MatMul, Gemm, LSTM)
  fp32,     // the fp32 list (Softmax, LayerNormalization, Exp, Log, ReduceSum)
  promote,  // the promote list: the widest input dtype (Concat)
  own,      // its output's dtype is its own (Cast, CastLike)
};
// Its output as torch lays it out: a tensor of its own, or a view sharing its first input's storage.
enum class TrainView : uint8_t {
  none,
  reshape,         // Identity, Reshape, Flatten: copies a view that is not contiguous into its own storage
  same_order,      // Squeeze, Unsqueeze: contiguous where its input is
  transpose,       // not contiguous unless its perm is the identity
  transpose_dims,  // flopwise::TransposeDims: not contiguous unless it swaps a dim with itself
  split,           // not contiguous past the leading axis (dims of 1 before it aside)
  slice,           // as split, its axes an input
  expand,          // never contiguous
};
// What model.train() changes in its forward.
enum class TrainForward : uint8_t {
  same,
  dropout,     // drawn and applied (a probability of 0 returns its input)
  batch_norm,  // the batch's statistics, where it is an inference one (batch_norm_training)
};
struct TrainFacts {
  TrainBackward backward = TrainBackward::estimate;
  TrainKeeps keeps = TrainKeeps::unknown;
  TrainAutocast autocast = TrainAutocast::none;
  TrainView view = TrainView::none;
  TrainForward forward = TrainForward::same;
  // Only moves or retypes its inputs' elements: of stored tensors alone (an exporter's Identity of a
  // deduplicated initializer, a transposed weight), its output is those tensors, trained where it is used.
  bool moves_elements = false;
};

// Where an op keeps learned tensors, and what its other stored inputs are: params and buffers
// (src/cost/stored_tensors.cc), the tensor-parallel plan (src/analysis/parallel_plan.cc). Set in the op's
// family file beside its registration (weights(), shape_inference/helpers.h), the same on each of its opset
// versions' records. Input slots are bitmasks: bit i is slot i, the last bit slot 63 and every slot past it.
using SlotMask = uint64_t;
constexpr SlotMask slots_from(size_t first) { return ~SlotMask{0} << first; }  // slot `first` (< 64) and on
constexpr bool has_slot(SlotMask m, size_t slot) { return (m >> (slot < 63 ? slot : 63)) & 1; }
struct WeightFacts {
  // Where a layer keeps learned tensors: a float Constant there is a weight (Conv's W and B).
  SlotMask learned = 0;
  SlotMask buffers = 0;  // running statistics, not learned (BatchNormalization's mean and var)
  // A quantised op: its stored inputs are params at `quant` alone (the quantised values, int32 biases); the
  // others (scales, zero points) describe the encoding. An op quantised with no weights has `quant` empty.
  bool quantised = false;
  SlotMask quant = 0;
  bool int8_products = false;  // quantises its float input on the fly: its products run in int8
  // Weights stored packed, several a byte (MatMulNBits' B): the packed tensor's input (-1: none), the inputs
  // describing the packing (scales, zero points, g_idx: not params), and the logical weights it holds.
  int packed_slot = -1;
  SlotMask packed_encoding = 0;
  Count (*packed_weights)(const Node& n, const Value& packed) = nullptr;
  // Applies its second operand elementwise: a stored tensor (not a scalar) it applies to an activation is a
  // param (a decomposed norm's scale and shift, a Linear's bias add).
  bool elementwise_params = false;
  bool linear = false;       // a product of an activation and a weight, one of inputs 0 and 1 (MatMul, Gemm)
  bool needs_whole = false;  // normalises over the features: an input split among devices is gathered first
};

struct OpRecord {
  std::string_view domain;  // "" is ONNX's default domain
  std::string_view name;
  int since_version = 1;     // first opset version covered
  int until_version = 0;     // last covered (0: no upper bound)
  std::string_view formula;  // one line: how FLOPs are counted ("2*MACs + bias", "layout only")
  ShapeFn infer = nullptr;
  CostFn cost = nullptr;
  std::string_view family;             // its op family (shape_inference/ops/<family>.cc), set by the registry
  WorkKind kind = WorkKind::other;     // set by the registry: the family's kind or the op's override
  AttrParamsFn attr_params = nullptr;  // weights held in attributes (nullptr: none; its inputs' are counted)
  bool reads_dims_only = false;        // reads its inputs' dims, never their elements (Shape, Size)
  TrainFacts train{};                  // its training step's rules (--train)
  WeightFacts weights{};               // which of its stored inputs are weights
};

class OpRegistry {
 public:
  static const OpRegistry& instance();  // built once from the explicit family list
  // The record for op/domain covering `opset`; nullptr if none.
  const OpRecord* find(std::string_view domain, std::string_view name, int opset) const;
  const std::vector<OpRecord>& records() const { return records_; }
  // Registration: a duplicate (same domain, name and overlapping versions) throws.
  void add(const OpRecord& r);
  // Sets the training facts of op `name` of `domain` on each of its records registered so far; an op with
  // none throws (a misspelt row).
  void set_train(std::string_view domain, std::string_view name, const TrainFacts& facts);
  // As set_train, the weight facts.
  void set_weights(std::string_view domain, std::string_view name, const WeightFacts& facts);
  // The weight facts of an op flopwise has no record of (no shape or cost rule: ONNX Runtime's QGemm), so
  // that its stored inputs are still told apart; an op with a record here or in a later family throws.
  void add_unrecorded_weights(std::string_view domain, std::string_view name, const WeightFacts& facts);
  // The weight facts of op `name` of `domain` in any opset: its records', or its add_unrecorded_weights row;
  // nullptr when it has neither. "ai.onnx" is the default domain, as in find.
  const WeightFacts* weights(std::string_view domain, std::string_view name) const;
  // Of op `name` in whichever domain has it (its records' first, then a row's); nullptr when none does.
  const WeightFacts* weights_in_any_domain(std::string_view name) const;

 private:
  void assign_kinds();            // after all families: each record's WorkKind (ops/kinds.def)
  void check_unrecorded() const;  // after all families: no add_unrecorded_weights row names a registered op
  std::string_view family_;       // the family registering now
  std::vector<OpRecord> records_;
  // Op name -> its records, every domain's (names are views of static text; find allocates nothing).
  std::unordered_map<std::string_view, std::vector<size_t>> by_name_;
  struct Unrecorded {
    std::string_view domain, name;
    WeightFacts weights;
  };
  std::vector<Unrecorded> unrecorded_;  // add_unrecorded_weights's rows
};

}  // namespace flopwise
