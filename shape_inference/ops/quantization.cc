// shape_inference/ops/quantization.cc — quantization family: QuantizeLinear / DequantizeLinear /
// DynamicQuantizeLinear, the integer contractions (QLinearConv, ConvInteger, QLinearMatMul, MatMulInteger),
// ONNX Runtime's weight-only MatMulNBits (GenAI's int4 models) and GatherBlockQuantized (their quantized
// embedding tables).
// Costs: quantize/dequantize 2 per element (scale, zero point). Integer contractions report their
// integer MACs exactly like float ones (2 FLOPs per MAC); zero-point corrections inside the
// accumulation are not counted; requantization of the output (QLinear*) is 2 per output element.
#include <string>

#include "../helpers.h"
#include "flopwise/sub_byte.h"

namespace flopwise {

namespace {

std::string dim_str(const Dim& d) { return d.str(); }

// ---- QuantizeLinear / DequantizeLinear ----------------------------------------------------------

// Per-axis parameters: a 1-D scale of length L must match x's dim at `axis` (L == 1 is per-tensor).
// Blocked quantization (opset 21, scale of x's rank) is not checked.
void check_quant_axis(InferContext& c, size_t scale_idx) {
  const Shape& x = c.in_shape(0);
  const Shape& s = c.in_shape(scale_idx);
  if (!x.rank_known || !s.rank_known || s.rank() != 1 || x.rank() == 0) return;
  if (c.node().attr_i("block_size", 0) != 0) return;
  int64_t axis = normalize_axis(c, c.node().attr_i("axis", 1), static_cast<int64_t>(x.rank()));
  const Dim& l = s.dims[0];
  const Dim& d = x.dims[static_cast<size_t>(axis)];
  if (l.is_known() && l.value() == 1) return;
  if (l.is_known() && d.is_known() && l.value() != d.value())
    c.fail("per-axis scale has " + dim_str(l) + " elements but x has " + dim_str(d) + " along axis " +
           std::to_string(axis));
}

void infer_quantize_linear(InferContext& c) {
  // y's type: the zero point's, else the output_dtype attribute (opset 21), else uint8.
  DType t = DType::UInt8;
  if (c.has_input(2) && c.in_dtype(2) != DType::Undefined) {
    t = c.in_dtype(2);
  } else if (c.node().attr_i("output_dtype", 0) != 0) {
    t = static_cast<DType>(c.node().attr_i("output_dtype", 0));
  }
  check_quant_axis(c, 1);
  c.set_output(0, t, c.in_shape(0));
}

void infer_dequantize_linear(InferContext& c) {
  // y's type: the scale's (float, float16 or bfloat16 since opset 19), float32 before.
  DType t = is_float(c.in_dtype(1)) ? c.in_dtype(1) : DType::Float32;
  check_quant_axis(c, 1);
  c.set_output(0, t, c.in_shape(0));
}

// Quantize / dequantize: one scale multiply (or divide) and one zero-point add per element.
OpCost cost_quant(const CostContext& c) { return cost_per_out_elem(c, 2); }

void infer_dynamic_quantize_linear(InferContext& c) {
  c.set_output(0, DType::UInt8, c.in_shape(0));
  c.set_output(1, DType::Float32, Shape::scalar());
  c.set_output(2, DType::UInt8, Shape::scalar());
}

// Per element: min and max reductions (2) and the quantization (2); plus 9 scalar ops for scale and
// zero point (min, max, sub, div, div, sub, clip 2, round) as in the op's function body.
OpCost cost_dynamic_quantize_linear(const CostContext& c) {
  return OpCost{Count{}, c.in_numel(0) * Count{4} + Count{9}};
}

// ---- integer MatMul ------------------------------------------------------------------------------

// numpy matmul on two ranked shapes: 1-D operands are promoted and their unit dim dropped again.
struct IntMatMulDims {
  Shape out;
  Dim k;
};

IntMatMulDims matmul_dims(InferContext* c, const Shape& a, const Shape& b) {
  IntMatMulDims r;
  if (!a.rank_known || !b.rank_known) return r;  // unknown rank
  if (a.rank() == 0 || b.rank() == 0) {
    if (c) c->fail("matmul operands must have rank >= 1, got " + a.str() + " and " + b.str());
    return r;
  }
  std::vector<Dim> ad = a.dims, bd = b.dims;
  if (ad.size() == 1) ad.insert(ad.begin(), Dim(1));
  if (bd.size() == 1) bd.push_back(Dim(1));
  const Dim& ka = ad[ad.size() - 1];
  const Dim& kb = bd[bd.size() - 2];
  r.k = c ? merge_dim(*c, ka, kb, "matmul inner dimension (A's last vs B's second-to-last)")
          : (ka.is_known() || kb.is_unknown() ? ka : kb);
  Shape batch;
  std::vector<Dim> pa(ad.begin(), ad.end() - 2), pb(bd.begin(), bd.end() - 2);
  if (c) {
    batch = broadcast_shapes(*c, {Shape(pa), Shape(pb)});
  } else {
    batch = Shape(std::vector<Dim>(std::max(pa.size(), pb.size())));
  }
  std::vector<Dim> out = batch.dims;
  if (a.rank() > 1) out.push_back(ad[ad.size() - 2]);
  if (b.rank() > 1) out.push_back(bd[bd.size() - 1]);
  r.out = Shape(out);
  return r;
}

void infer_matmul_integer(InferContext& c) {
  c.set_output(0, DType::Int32, matmul_dims(&c, c.in_shape(0), c.in_shape(1)).out);
}

void infer_qlinear_matmul(InferContext& c) {
  DType t = c.has_input(7) && c.in_dtype(7) != DType::Undefined ? c.in_dtype(7) : c.in_dtype(0);
  c.set_output(0, t, matmul_dims(&c, c.in_shape(0), c.in_shape(3)).out);
}

// MACs = output elements * K.
Count matmul_macs(const CostContext& c, size_t a, size_t b) {
  return c.out_numel(0) * Count::of(matmul_dims(nullptr, c.in_shape(a), c.in_shape(b)).k);
}

OpCost cost_matmul_integer(const CostContext& c) { return cost_contraction(matmul_macs(c, 0, 1)); }

OpCost cost_qlinear_matmul(const CostContext& c) {
  return cost_contraction(matmul_macs(c, 0, 3), c.out_numel(0) * Count{2});
}

// ---- MatMulNBits (com.microsoft) -------------------------------------------------------------------
// A [..., K] times a weight W [K, N] stored `bits` to an element in blocks of `block_size` along K:
// B [N, ceil(K/block_size), block_size*bits/8] uint8, scales, zero_points, g_idx, bias [N] -> Y [..., N].
struct NBitsDims {
  int64_t k = 0, n = 0, bits = 4, block = 0;
};

NBitsDims decode_matmul_nbits(const Node& node, const Shape& a, const Shape& b, InferContext* c) {
  NBitsDims d{node.attr_i("K", 0), node.attr_i("N", 0), node.attr_i("bits", 4), node.attr_i("block_size", 0)};
  if (!c) return d;
  if (d.k <= 0 || d.n <= 0 || d.block <= 0 || d.bits < 1 || d.bits > 8)
    c->fail("K, N, block_size must be positive and bits 1..8, got K=" + std::to_string(d.k) +
            " N=" + std::to_string(d.n) + " block_size=" + std::to_string(d.block) +
            " bits=" + std::to_string(d.bits));
  if (a.rank_known && a.rank() > 0) merge_dim(*c, a.dims.back(), Dim(d.k), "A's last dim vs K");
  if (b.rank_known && b.rank() == 3) {
    merge_dim(*c, b.dims[0], Dim(d.n), "B's rows vs N");
    merge_dim(*c, b.dims[1], Dim((d.k + d.block - 1) / d.block), "B's blocks vs ceil(K / block_size)");
    merge_dim(*c, b.dims[2], Dim(d.block * d.bits / 8), "B's block bytes vs block_size * bits / 8");
  }
  return d;
}

void infer_matmul_nbits(InferContext& c) {
  const Shape& a = c.in_shape(0);
  NBitsDims d = decode_matmul_nbits(c.node(), a, c.in_shape(1), &c);
  if (!a.rank_known || a.rank() == 0) {
    c.set_output(0, c.in_dtype(0), Shape::unknown_rank());
    return;
  }
  std::vector<Dim> out = a.dims;
  out.back() = Dim(d.n);
  c.set_output(0, c.in_dtype(0), Shape(out));
}

// MACs = rows * K * N (A's elements * N); each weight dequantized once a call (zero point, scale: 2); bias.
OpCost cost_matmul_nbits(const CostContext& c) {
  NBitsDims d = decode_matmul_nbits(c.node, c.in_shape(0), c.in_shape(1), nullptr);
  Count macs = c.in_numel(0) * Count{d.n};
  Count bias = c.has_input(5) ? c.out_numel(0) : Count{};
  return OpCost{macs, macs * Count{2} + Count{2 * d.n} * Count{d.k} + bias, bias};
}

// ---- GatherBlockQuantized (com.microsoft) -----------------------------------------------------------------
// Gather from a table quantized in blocks of `block_size` along quantize_axis, dequantized on the way out:
// data
// [..., s, ...] (uint8 holding 8/bits values a byte along its last axis, or int4/uint4), indices of any
// shape, scales [data's dims, ceil(values along quantize_axis / block_size) there], zero_points (uint8:
// packed the same way along that axis) -> output [data[:gather_axis], indices..., data[gather_axis+1:]] in
// scales' type, the packed axis unpacked.
struct GbqDims {
  int64_t gather_axis = 0, quantize_axis = 0, per_byte = 1;
  bool ok = false;  // data's rank known
};

// The attribute checks ONNX Runtime's kernel makes, then the axes.
GbqDims decode_gbq(InferContext& c) {
  const Node& n = c.node();
  const Shape& data = c.in_shape(0);
  const int64_t bits = n.attr_i("bits", 4), block = n.attr_i("block_size", 128);
  const DType t = c.in_dtype(0);
  if (block < 16 || (block & (block - 1)) != 0)
    c.fail("block_size must be a power of 2 and at least 16, got " + std::to_string(block));
  if (t == DType::UInt8 && bits != 2 && bits != 4 && bits != 8)
    c.fail("bits must be 2, 4 or 8 for uint8 data, got " + std::to_string(bits));
  if ((t == kInt4 || t == kUInt4) && bits != 4)
    c.fail("bits must be 4 for int4/uint4 data, got " + std::to_string(bits));
  GbqDims d;
  if (!data.rank_known) return d;
  const auto r = static_cast<int64_t>(data.rank());
  if (r < 1) c.fail("data must have rank >= 1, got " + data.str());
  d.gather_axis = normalize_axis(c, n.attr_i("gather_axis", 0), r);
  d.quantize_axis = normalize_axis(c, n.attr_i("quantize_axis", 1), r);
  if (t == DType::UInt8) {
    if (d.gather_axis != 0 || d.quantize_axis != r - 1)
      c.fail("uint8 data is gathered along axis 0 and quantized along its last axis, got gather_axis " +
             std::to_string(d.gather_axis) + ", quantize_axis " + std::to_string(d.quantize_axis));
    d.per_byte = 8 / bits;
  }
  d.ok = true;
  return d;
}

// scales: data's dims, the quantized axis in blocks; zero points: the scales' dims (uint8: packed along it).
void check_gbq_scales(InferContext& c, const GbqDims& d) {
  const Shape& data = c.in_shape(0);
  const Shape& sc = c.in_shape(2);
  if (!sc.rank_known) return;
  if (sc.rank() != data.rank()) c.fail("scales " + sc.str() + " must have data's rank, data " + data.str());
  const int64_t block = c.node().attr_i("block_size", 128);
  for (size_t i = 0; i < data.rank(); ++i) {
    const bool q = static_cast<int64_t>(i) == d.quantize_axis;
    const Dim want = q ? Dim::ceil_div(data.dims[i] * Dim(d.per_byte), Dim(block)) : data.dims[i];
    merge_dim(c, sc.dims[i], want, q ? "scales' blocks along quantize_axis" : "scales vs data");
  }
  const Shape& zp = c.in_shape(3);
  if (!c.has_input(3) || !zp.rank_known) return;
  if (zp.rank() != sc.rank()) c.fail("zero_points " + zp.str() + " must have the scales' rank " + sc.str());
  for (size_t i = 0; i < sc.rank(); ++i) {
    const bool q = static_cast<int64_t>(i) == d.quantize_axis && d.per_byte > 1;
    merge_dim(c, zp.dims[i], q ? Dim::ceil_div(sc.dims[i], Dim(d.per_byte)) : sc.dims[i],
              "zero_points vs scales");
  }
}

void infer_gather_block_quantized(InferContext& c) {
  const GbqDims d = decode_gbq(c);
  const DType t = c.has_input(2) ? c.in_dtype(2) : DType::Float32;
  const Shape& data = c.in_shape(0);
  const Shape& idx = c.in_shape(1);
  if (!d.ok || !idx.rank_known) {
    c.set_output(0, t, Shape::unknown_rank());
    return;
  }
  check_gbq_scales(c, d);
  std::vector<Dim> out(data.dims.begin(), data.dims.begin() + d.gather_axis);
  out.insert(out.end(), idx.dims.begin(), idx.dims.end());
  out.insert(out.end(), data.dims.begin() + d.gather_axis + 1, data.dims.end());
  if (d.per_byte > 1)
    out.back() = out.back() * Dim(d.per_byte);  // uint8: the last axis holds per_byte a byte
  c.set_output(0, t, Shape(out));
}

// ---- integer Conv --------------------------------------------------------------------------------

// Output shape of a Conv-like op (ONNX Conv attributes) from X and W. Unknown parts stay unknown.
Shape conv_shape(InferContext& c, size_t xi, size_t wi) {
  const Shape& x = c.in_shape(xi);
  const Shape& w = c.in_shape(wi);
  const Node& n = c.node();
  if (!x.rank_known) {
    if (!w.rank_known || w.rank() < 3) return Shape::unknown_rank();
    std::vector<Dim> out(w.rank());  // rank from W; channels are W's output channels
    out[1] = w.dims[0];
    return Shape(out);
  }
  if (x.rank() < 3) c.fail("input rank must be >= 3 (N, C, spatial...), got " + x.str());
  const size_t sp = x.rank() - 2;
  if (w.rank_known && w.rank() != x.rank())
    c.fail("weight rank " + std::to_string(w.rank()) + " differs from input rank " +
           std::to_string(x.rank()));
  const int64_t group = n.attr_i("group", 1);
  if (group <= 0) c.fail("group must be positive, got " + std::to_string(group));
  if (w.rank_known) {
    const Dim& cx = x.dims[1];
    Dim cw = w.dims[1] * Dim(group);
    if (cx.is_known() && cw.is_known() && cx.value() != cw.value())
      c.fail("input channels " + dim_str(cx) + " != weight channels " + dim_str(w.dims[1]) + " * group " +
             std::to_string(group));
  }
  std::vector<int64_t> kernel = n.attr_ints("kernel_shape");
  if (kernel.empty() && w.rank_known) {
    for (size_t i = 0; i < sp; ++i) {
      if (!w.dims[2 + i].is_known()) {
        kernel.clear();
        break;
      }
      kernel.push_back(w.dims[2 + i].value());
    }
  }
  if (!kernel.empty() && kernel.size() != sp)
    c.fail("kernel_shape has " + std::to_string(kernel.size()) + " dims for " + std::to_string(sp) +
           " spatial dims");
  std::vector<int64_t> strides = n.attr_ints("strides"), dil = n.attr_ints("dilations"),
                       pads = n.attr_ints("pads");
  if (strides.empty()) strides.assign(sp, 1);
  if (dil.empty()) dil.assign(sp, 1);
  if (pads.empty()) pads.assign(2 * sp, 0);
  if (strides.size() != sp || dil.size() != sp || pads.size() != 2 * sp)
    c.fail("strides/dilations/pads lengths do not match " + std::to_string(sp) + " spatial dims");
  const std::string auto_pad = n.attr_s("auto_pad", "NOTSET");
  std::vector<Dim> out;
  out.push_back(x.dims[0]);
  out.push_back(w.rank_known ? w.dims[0] : Dim::unknown());
  for (size_t i = 0; i < sp; ++i) {
    const Dim& in = x.dims[2 + i];
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out.push_back(same_out_dim(in, strides[i]));
    } else if (kernel.empty()) {
      out.push_back(Dim::unknown());
    } else if (auto_pad == "VALID") {
      out.push_back(conv_out_dim(in, kernel[i], strides[i], dil[i], 0, 0, false));
    } else {
      out.push_back(conv_out_dim(in, kernel[i], strides[i], dil[i], pads[i], pads[sp + i], false));
    }
  }
  return Shape(out);
}

void infer_conv_integer(InferContext& c) { c.set_output(0, DType::Int32, conv_shape(c, 0, 1)); }

void infer_qlinear_conv(InferContext& c) {
  DType t = c.has_input(7) && c.in_dtype(7) != DType::Undefined ? c.in_dtype(7) : c.in_dtype(0);
  c.set_output(0, t, conv_shape(c, 0, 3));
}

// MACs = output elements * (C / group) * prod(kernel) = out_numel * prod(W.shape[1:]).
Count conv_macs(const CostContext& c, size_t wi) {
  const Shape& w = c.in_shape(wi);
  if (!w.rank_known || w.rank() < 2) return Count::unknown();
  Count per = Count{1};
  for (size_t i = 1; i < w.rank(); ++i) per = per * Count::of(w.dims[i]);
  return c.out_numel(0) * per;
}

OpCost cost_conv_integer(const CostContext& c) { return cost_contraction(conv_macs(c, 1)); }

// 2*MACs + bias add (when B is given) + requantize 2 per output element.
OpCost cost_qlinear_conv(const CostContext& c) {
  Count extra = c.out_numel(0) * Count{c.has_input(8) ? 3 : 2};
  return cost_contraction(conv_macs(c, 3), extra);
}

// MatMulNBits' packed B holds N*K weights (its attributes), `bits` each in blocks along K.
Count packed_nbits_weights(const Node& n, const Value&) {
  return Count{n.attr_i("N", 0)} * Count{n.attr_i("K", 0)};
}

// GatherBlockQuantized's table: uint8 holds 8/bits weights a byte; int4/uint4 elements are the weights.
Count packed_table_weights(const Node& n, const Value& table) {
  const int64_t bits = n.attr_i("bits", 4);
  const int64_t per_byte = table.dtype == DType::UInt8 && bits > 0 && 8 % bits == 0 ? 8 / bits : 1;
  return table.shape.numel_count() * Count{per_byte};
}

// Weight facts (flopwise/ops.h, WeightFacts): the quantised values and int32 biases among each quantised op's
// inputs (its scales and zero points describe the encoding), and the packed low-bit weights.
void quantised_weights(OpRegistry& r) {
  for (const char* domain : {"", "com.microsoft"}) {
    weights_in(r, domain, "DequantizeLinear", Quantised{slots({0})});
    weights_in(r, domain, "QuantizeLinear", Quantised{});
  }
  weights(r, "DynamicQuantizeLinear", Quantised{});
  for (const char* op : {"ConvInteger", "MatMulInteger"}) weights(r, op, Quantised{slots({0, 1})});
  weights(r, "QLinearConv", Quantised{slots({0, 3, 8})});
  weights(r, "QLinearMatMul", Quantised{slots({0, 3})});
  weights_in(r, "com.microsoft", "MatMulNBits", Packed{1, slots({2, 3, 4}), packed_nbits_weights});
  weights_in(r, "com.microsoft", "GatherBlockQuantized", Packed{0, slots({2, 3}), packed_table_weights});
  // ONNX Runtime's quantised contrib ops, which have no record (their nodes are unsupported).
  const char* ms = "com.microsoft";
  unrecorded_weights(r, ms, "QGemm", Quantised{slots({0, 3, 6})});
  unrecorded_weights(r, ms, "MatMulIntegerToFloat", Quantised{slots({0, 1, 6})});
  unrecorded_weights(r, ms, "DynamicQuantizeMatMul", Quantised{slots({0, 1, 4})}, Int8Products{});
  for (const char* op : {"QLinearAdd", "QLinearMul"}) unrecorded_weights(r, ms, op, Quantised{slots({0, 3})});
  for (const char* op : {"QLinearConcat", "QLinearSigmoid", "QLinearLeakyRelu", "QLinearAveragePool",
                         "QLinearGlobalAveragePool"})
    unrecorded_weights(r, ms, op, Quantised{});
}

}  // namespace

void register_quantization_ops(OpRegistry& r) {
  const char* q = "2 per element (scale, zero point)";
  reg(r, "QuantizeLinear", 10, 0, q, infer_quantize_linear, cost_quant);
  reg(r, "DequantizeLinear", 10, 0, q, infer_dequantize_linear, cost_quant);
  // ONNX Runtime's own QDQ ops (int16/int4 support) share the same semantics.
  reg(r, "QuantizeLinear", 1, 0, q, infer_quantize_linear, cost_quant, "com.microsoft");
  reg(r, "DequantizeLinear", 1, 0, q, infer_dequantize_linear, cost_quant, "com.microsoft");
  reg(r, "DynamicQuantizeLinear", 11, 0, "4 per element (min, max, scale, zero point) + 9 scalar",
      infer_dynamic_quantize_linear, cost_dynamic_quantize_linear);
  reg(r, "MatMulInteger", 10, 0, "2*MACs (integer MACs = out * K; zero-point corrections not counted)",
      infer_matmul_integer, cost_matmul_integer);
  reg(r, "QLinearMatMul", 10, 0, "2*MACs (integer MACs = out * K) + 2 per output element (requantize)",
      infer_qlinear_matmul, cost_qlinear_matmul);
  reg(r, "ConvInteger", 10, 0, "2*MACs (integer MACs = out * C/group * prod(kernel))", infer_conv_integer,
      cost_conv_integer);
  reg(r, "MatMulNBits", 1, 0,
      "2*MACs (rows * K * N) + 2 per weight element (dequantize: zero point, scale) + bias; `bits` sets "
      "only the weight's bytes",
      infer_matmul_nbits, cost_matmul_nbits, "com.microsoft");
  reg(r, "GatherBlockQuantized", 1, 0,
      "2 per output element (dequantize: zero point, scale); the gather moves data only. Params: the table's "
      "weights (uint8 holds 8/bits a byte), its bytes as stored",
      infer_gather_block_quantized, cost_quant, "com.microsoft");
  reg(r, "QLinearConv", 10, 0,
      "2*MACs (integer MACs = out * C/group * prod(kernel)) + bias + 2 per output element (requantize)",
      infer_qlinear_conv, cost_qlinear_conv);
  quantised_weights(r);
}

}  // namespace flopwise
