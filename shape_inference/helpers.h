// shape_inference/helpers.h — shared pieces of shape rules and cost rules for the op families.
// Owns: broadcasting, axis normalisation, conv/pool spatial arithmetic, constant folding of small
// integer tensors, and the common cost shapes (per output element, layout only). Internal header.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "flopwise/errors.h"
#include "flopwise/infer.h"
#include "flopwise/ops.h"

namespace flopwise {

// ---- registration -------------------------------------------------------------------------------
// Families call this; `until` 0 means no upper bound.
inline void reg(OpRegistry& r, std::string_view name, int since, int until, std::string_view formula,
                ShapeFn infer, CostFn cost, std::string_view domain = "") {
  r.add(OpRecord{domain, name, since, until, formula, infer, cost, {}, WorkKind::other});
}

// The training facts of an op (flopwise/ops.h, TrainFacts), each argument one of them:
// train(r, "Conv", TrainBackward::products, TrainKeeps::both_operands, TrainAutocast::low). Unnamed facts
// keep their defaults.
inline void set_fact(TrainFacts& f, TrainBackward b) { f.backward = b; }
inline void set_fact(TrainFacts& f, TrainKeeps k) { f.keeps = k; }
inline void set_fact(TrainFacts& f, TrainAutocast a) { f.autocast = a; }
inline void set_fact(TrainFacts& f, TrainView v) { f.view = v; }
inline void set_fact(TrainFacts& f, TrainForward fw) { f.forward = fw; }
struct MovesElements {};  // TrainFacts::moves_elements
inline void set_fact(TrainFacts& f, MovesElements) { f.moves_elements = true; }
template <class... Facts>
void train_in(OpRegistry& r, std::string_view domain, std::string_view name, Facts... facts) {
  TrainFacts f;
  (set_fact(f, facts), ...);
  r.set_train(domain, name, f);
}
template <class... Facts>
void train(OpRegistry& r, std::string_view name, Facts... facts) {  // an op of the default domain
  train_in(r, "", name, facts...);
}

// The weight facts of an op (flopwise/ops.h, WeightFacts), each argument one of them:
// weights(r, "BatchNormalization", Learned{slots({1, 2})}, Buffers{slots({3, 4})}, NeedsWhole{}).
constexpr SlotMask slots(std::initializer_list<size_t> list) {
  SlotMask m = 0;
  for (size_t s : list) m |= SlotMask{1} << s;
  return m;
}
constexpr SlotMask kAllSlots = slots_from(0);
struct Learned {
  SlotMask slots;
};
struct Buffers {
  SlotMask slots;
};
struct Quantised {  // a quantised op, its weights at `slots` (none: an op quantised without weights)
  SlotMask slots = 0;
};
struct Int8Products {};
struct Packed {
  int slot;
  SlotMask encoding;
  Count (*weights)(const Node& n, const Value& packed);
};
struct ElementwiseParams {};
struct Linear {};
struct NeedsWhole {};
inline void set_fact(WeightFacts& f, Learned l) { f.learned = l.slots; }
inline void set_fact(WeightFacts& f, Buffers b) { f.buffers = b.slots; }
inline void set_fact(WeightFacts& f, Quantised q) { f.quantised = true, f.quant = q.slots; }
inline void set_fact(WeightFacts& f, Int8Products) { f.int8_products = true; }
inline void set_fact(WeightFacts& f, Packed p) {
  f.packed_slot = p.slot, f.packed_encoding = p.encoding, f.packed_weights = p.weights;
}
inline void set_fact(WeightFacts& f, ElementwiseParams) { f.elementwise_params = true; }
inline void set_fact(WeightFacts& f, Linear) { f.linear = true; }
inline void set_fact(WeightFacts& f, NeedsWhole) { f.needs_whole = true; }
template <class... Facts>
void weights_in(OpRegistry& r, std::string_view domain, std::string_view name, Facts... facts) {
  WeightFacts f;
  (set_fact(f, facts), ...);
  r.set_weights(domain, name, f);
}
template <class... Facts>
void weights(OpRegistry& r, std::string_view name, Facts... facts) {  // an op of the default domain
  weights_in(r, "", name, facts...);
}
// An op with no record (OpRegistry::add_unrecorded_weights).
template <class... Facts>
void unrecorded_weights(OpRegistry& r, std::string_view domain, std::string_view name, Facts... facts) {
  WeightFacts f;
  (set_fact(f, facts), ...);
  r.add_unrecorded_weights(domain, name, f);
}

// ---- shapes -------------------------------------------------------------------------------------
// Multidirectional (numpy) broadcasting. Unknown rank in any input gives unknown rank. A provable
// mismatch (two known dims, neither 1, different) calls ctx.fail.
Shape broadcast_shapes(InferContext& ctx, const std::vector<Shape>& shapes);
// Merges two descriptions of the same dim: known beats symbolic beats unknown; a clash fails.
Dim merge_dim(InferContext& ctx, const Dim& a, const Dim& b, const char* what);
// Normalises a possibly negative axis against rank; fails when out of range.
int64_t normalize_axis(InferContext& ctx, int64_t axis, int64_t rank);
// Output 0 gets input 0's dtype and shape (unary elementwise ops).
void infer_same_as_input0(InferContext& ctx);
// Output 0: broadcast of all inputs, dtype of input 0 (or `out_dtype` when not Undefined).
void infer_broadcast(InferContext& ctx, DType out_dtype = DType::Undefined);
// Spatial output size of conv/pool: floor or ceil of (in + pads - dilation*(k-1) - 1)/stride + 1.
Dim conv_out_dim(const Dim& in, int64_t k, int64_t stride, int64_t dilation, int64_t pad_begin,
                 int64_t pad_end, bool ceil_mode);
// auto_pad SAME_UPPER/SAME_LOWER output: ceil(in / stride).
Dim same_out_dim(const Dim& in, int64_t stride);

// ---- constant contents --------------------------------------------------------------------------
// Element i of known integer contents under broadcasting to `out` elements (row-major), or nullopt.
// Folds an elementwise op over inputs whose contents are all known and small; sets output 0's data.
// `fi` handles integer (Dim) contents, `ff` float contents; either may be empty (no folding).
// Float contents that are exact integers (a size cast to float: symbolic, or known) go the integer way when
// some element is symbolic; `fi_float`, when given, replaces `fi` there (a float Div is exact, not floor).
// `arity`: the operands the functions read; a node with fewer (or with an omitted one) is not folded.
void fold_elementwise(InferContext& ctx, const std::function<Dim(const std::vector<Dim>&)>& fi,
                      const std::function<double(const std::vector<double>&)>& ff,
                      const std::function<Dim(const std::vector<Dim>&)>& fi_float = nullptr,
                      size_t arity = 1);
// Contents as exact integers: integer contents as they are; float contents when every element is an
// integer within 2^53. nullopt otherwise.
std::optional<std::vector<Dim>> exact_ints(const ConstData& d);
// Integer-valued contents of a float value, in the form the rest of the pass reads: doubles when every
// element is known, exact Dims (is_float false) when some are symbolic.
ConstData float_valued(std::vector<Dim> ints);
// Row-major strides / element count for a fully known shape.
std::optional<std::vector<int64_t>> known_dims(const Shape& s);
int64_t product(const std::vector<int64_t>& v);  // INT64_MAX past int64 or for a negative dim
// ceil(log2 n) for n >= 1 (0 for n <= 1): the levels of a sort's merges, a heap's, an FFT's butterflies.
int64_t ceil_log2(int64_t n);
Dim product(const std::vector<Dim>& v);  // exact, Unknown on overflow

// ---- costs --------------------------------------------------------------------------------------
OpCost cost_zero(const CostContext&);                       // layout only / no arithmetic
OpCost cost_per_out_elem_1(const CostContext&);             // 1 FLOP per output element
OpCost cost_per_out_elem(const CostContext& c, int64_t k);  // k FLOPs per output element
OpCost cost_per_in_elem_1(const CostContext&);              // reductions: 1 FLOP per input element
OpCost cost_unknown(const CostContext&);                    // cannot be known statically (data-dependent)
// 2*macs FLOPs plus `extra` FLOPs; macs reported.
OpCost cost_contraction(const Count& macs, const Count& extra = Count{});
// A contraction plus a bias add of `bias` elements (Conv, ConvTranspose): the bias kept apart for
// conventions.
OpCost cost_contraction_bias(const Count& macs, const Count& bias);

// ---- conv/pool windows (added by the compute helper; used by conv.cc and pool.cc) ---------------
// Window attributes of Conv/ConvTranspose/pooling decoded once: kernel_shape (or the weight's spatial
// dims), strides, dilations, pads (n begins then n ends), auto_pad, ceil_mode.
struct ConvWindow {
  std::vector<int64_t> kernel;  // empty when the kernel size is not known
  std::vector<int64_t> strides, dilations, pads;
  std::string auto_pad = "NOTSET";
  bool explicit_pads = false;  // a pads attribute is present (it wins over auto_pad, as in ONNX)
  bool ceil_mode = false;
};
// Decodes the window for `n_spatial` spatial dims; `w` (may be null) is the weight shape [*, *, k...].
// Fails on attributes of the wrong length and on a kernel_shape that contradicts the weight.
ConvWindow decode_conv_window(InferContext& ctx, size_t n_spatial, const Shape* w, bool use_dilations = true);
// Output spatial dims of a conv/pool window over `in` (NOTSET/VALID/SAME_UPPER/SAME_LOWER rules);
// fails when a known output would be empty or negative.
std::vector<Dim> conv_window_out_dims(InferContext& ctx, const ConvWindow& w, const std::vector<Dim>& in);

}  // namespace flopwise
