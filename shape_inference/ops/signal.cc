// shape_inference/ops/signal.cc — signal family (opset 17+): DFT, STFT, the cosine-sum windows (Hann,
// Hamming, Blackman) and MelWeightMatrix. Signals are [batch, ..., 1] (real) or [batch, ..., 2] (complex);
// spectra end in 2.
// FLOPs: a transform of length n is counted as one complex FFT, 5*n*ceil(log2 n) (the usual FFT
// estimate; it is the same for real input and one-sided output, which could halve it). MACs: 0
// (transforms are not counted as contractions). Windows and the mel matrix count their elementwise
// formula per output element.
#include "../helpers.h"

namespace flopwise {

namespace {

// FLOPs of one FFT of length n: 5*n*ceil(log2 n); unknown when n is.
Count fft_flops(const Dim& n) {
  if (!n.is_known() || n.value() < 1) return Count::unknown();
  return Count{5} * Count{n.value()} * Count{ceil_log2(n.value())};
}

// A scalar integer input's value (symbolic allowed); unknown when absent or not known.
Dim scalar_input(const ConstData* d) {
  if (!d || d->is_float || d->ints.size() != 1) return Dim::unknown();
  return d->ints[0];
}

// ---- DFT ----
// Decoded once for shape and cost. `error` is set for a provable contradiction.
struct DftPlan {
  Shape out;          // output shape (unknown rank when the input's is)
  int64_t axis = -1;  // normalised transform axis; -1 when not known
  Dim n;              // transform length: dft_length, else the input's axis dim
  Count transforms;   // number of transforms: product of the dims other than axis and the last
  std::string error;
};

DftPlan decode_dft(const Node& node, const Shape& in, bool has_len, const ConstData* len, bool has_axis_in,
                   const ConstData* axis_data) {
  DftPlan p;
  const bool onesided = node.attr_i("onesided", 0) != 0;
  const bool inverse = node.attr_i("inverse", 0) != 0;
  if (onesided && inverse && node.opset < 20) {
    p.error = "onesided and inverse cannot both be set";
    return p;
  }
  // Opset 20 moved axis to an input (default -2); opset 17 has the attribute (default 1).
  // Opset 20: an axis input whose value is not known leaves the axis unknown.
  const Dim axis_in = node.opset >= 20 && has_axis_in ? scalar_input(axis_data) : Dim(-2);
  const bool axis_known = node.opset < 20 || axis_in.is_known();
  const int64_t axis_value = node.opset < 20 ? node.attr_i("axis", 1) : (axis_known ? axis_in.value() : 0);
  if (!in.rank_known) return p;
  const int64_t rank = static_cast<int64_t>(in.rank());
  if (rank < 2) {
    p.error = "input must have rank >= 2 ([batch, signal..., 1 or 2]), got " + in.str();
    return p;
  }
  const Dim& last = in.dims.back();
  if (last.is_known() && last.value() != 1 && last.value() != 2) {
    p.error = "last dim must be 1 (real) or 2 (complex), got " + in.str();
    return p;
  }
  p.out = in;
  p.out.dims.back() = Dim(2);
  if (!axis_known) {  // axis unknown: every signal dim may change
    for (int64_t i = 0; i + 1 < rank; ++i) p.out.dims[i] = Dim::unknown();
    return p;
  }
  int64_t a = axis_value < 0 ? axis_value + rank : axis_value;
  if (a < 0 || a >= rank - 1) {
    p.error = "axis " + std::to_string(axis_value) + " is out of range for input " + in.str() +
              " (the last dim holds the real/imaginary parts)";
    return p;
  }
  p.axis = a;
  p.n = in.dims[a];
  if (has_len) p.n = scalar_input(len);
  if (p.n.is_known() && p.n.value() < 1) {
    p.error = "dft_length must be positive, got " + std::to_string(p.n.value());
    return p;
  }
  p.out.dims[a] = onesided ? Dim::floor_div(p.n, 2) + Dim(1) : p.n;
  if (onesided && inverse) p.out.dims[a] = Dim::unknown();  // opset 20: depends on the input's layout
  p.transforms = Count{1};
  for (int64_t i = 0; i + 1 < rank; ++i)
    if (i != a) p.transforms = p.transforms * Count::of(in.dims[i]);
  return p;
}

DftPlan decode_dft(const CostContext& c) {
  return decode_dft(c.node, c.in_shape(0), c.has_input(1), c.in_data(1), c.has_input(2), c.in_data(2));
}

void infer_dft(InferContext& c) {
  DftPlan p = decode_dft(c.node(), c.in_shape(0), c.has_input(1), c.in_data(1), c.has_input(2), c.in_data(2));
  if (!p.error.empty()) c.fail(p.error);
  c.set_output(0, c.in_dtype(0), p.out);
}

OpCost cost_dft(const CostContext& c) {
  DftPlan p = decode_dft(c);
  if (p.axis < 0) return cost_unknown(c);
  return OpCost{Count{}, p.transforms * fft_flops(p.n)};
}

// ---- STFT ----
struct StftPlan {
  Dim batch, frames, frame_length, bins;
  bool windowed = false;
  std::string error;
};

StftPlan decode_stft(const Node& node, const Shape& sig, const ConstData* step_data, bool has_window,
                     const Shape& window, bool has_len, const ConstData* len_data) {
  StftPlan p;
  const bool onesided = node.attr_i("onesided", 1) != 0;
  p.windowed = has_window;
  Dim len;  // signal length
  if (sig.rank_known) {
    if (sig.rank() != 3) {
      p.error = "signal must be [batch, length, 1 or 2], got " + sig.str();
      return p;
    }
    const Dim& last = sig.dims[2];
    if (last.is_known() && last.value() != 1 && last.value() != 2) {
      p.error = "signal's last dim must be 1 (real) or 2 (complex), got " + sig.str();
      return p;
    }
    p.batch = sig.dims[0];
    len = sig.dims[1];
  }
  Dim step = scalar_input(step_data);
  if (step.is_known() && step.value() < 1) {
    p.error = "frame_step must be positive, got " + std::to_string(step.value());
    return p;
  }
  // DFT size: frame_length, or the window's length; both given must agree.
  Dim fl = has_len ? scalar_input(len_data) : Dim::unknown();
  if (has_window && window.rank_known) {
    if (window.rank() != 1) {
      p.error = "window must be 1-D, got " + window.str();
      return p;
    }
    const Dim& w = window.dims[0];
    if (has_len && w.is_known() && fl.is_known() && w.value() != fl.value()) {
      p.error = "window length " + std::to_string(w.value()) + " differs from frame_length " +
                std::to_string(fl.value());
      return p;
    }
    if (fl.is_unknown() || (fl.is_symbolic() && w.is_known())) fl = w;
  }
  if (fl.is_known() && fl.value() < 1) {
    p.error = "frame_length must be positive, got " + std::to_string(fl.value());
    return p;
  }
  if (fl.is_known() && len.is_known() && fl.value() > len.value()) {
    p.error = "frame_length " + std::to_string(fl.value()) + " exceeds the signal length " +
              std::to_string(len.value());
    return p;
  }
  p.frame_length = fl;
  p.frames = Dim::floor_div(len - fl, step) + Dim(1);
  if (len.is_unknown() || fl.is_unknown() || step.is_unknown()) p.frames = Dim::unknown();
  p.bins = onesided ? Dim::floor_div(fl, 2) + Dim(1) : fl;
  return p;
}

StftPlan decode_stft(const CostContext& c) {
  return decode_stft(c.node, c.in_shape(0), c.in_data(1), c.has_input(2), c.in_shape(2), c.has_input(3),
                     c.in_data(3));
}

void infer_stft(InferContext& c) {
  StftPlan p = decode_stft(c.node(), c.in_shape(0), c.in_data(1), c.has_input(2), c.in_shape(2),
                           c.has_input(3), c.in_data(3));
  if (!p.error.empty()) c.fail(p.error);
  c.set_output(0, c.in_dtype(0), Shape({p.batch, p.frames, p.bins, Dim(2)}));
}

// Per frame: the window multiply (frame_length, when a window is given) and one FFT of frame_length.
OpCost cost_stft(const CostContext& c) {
  StftPlan p = decode_stft(c);
  Count per_frame = fft_flops(p.frame_length) + (p.windowed ? Count::of(p.frame_length) : Count{});
  return OpCost{Count{}, Count::of(p.batch) * Count::of(p.frames) * per_frame};
}

// ---- windows and the mel matrix ----
DType output_datatype(const Node& n) { return static_cast<DType>(n.attr_i("output_datatype", 1)); }

void infer_window(InferContext& c) {
  c.set_output_dtype(0, output_datatype(c.node()));
  const Shape& s = c.in_shape(0);
  if (s.rank_known && s.rank() != 0) c.fail("size must be a scalar, got " + s.str());
  Dim size = scalar_input(c.in_data(0));
  if (size.is_known() && size.value() < 1)
    c.fail("size must be positive, got " + std::to_string(size.value()));
  c.set_output(0, output_datatype(c.node()), Shape({size}));
}

// Hann/Hamming a0 - a1*cos(2*pi*k/N): angle mul, cos, mul, sub = 4 per element.
OpCost cost_window_4(const CostContext& c) { return cost_per_out_elem(c, 4); }
// Blackman adds a2*cos(4*pi*k/N): angle mul, mul by 2, 2 cos, 2 mul, sub, add = 8 per element.
OpCost cost_window_8(const CostContext& c) { return cost_per_out_elem(c, 8); }

void infer_mel(InferContext& c) {
  c.set_output_dtype(0, output_datatype(c.node()));
  for (size_t i = 0; i < 2; ++i) {
    const Shape& s = c.in_shape(i);
    if (s.rank_known && s.rank() != 0)
      c.fail(std::string(i ? "dft_length" : "num_mel_bins") + " must be a scalar, got " + s.str());
  }
  Dim mel = scalar_input(c.in_data(0)), dft = scalar_input(c.in_data(1));
  if (mel.is_known() && mel.value() < 1)
    c.fail("num_mel_bins must be positive, got " + std::to_string(mel.value()));
  if (dft.is_known() && dft.value() < 1)
    c.fail("dft_length must be positive, got " + std::to_string(dft.value()));
  c.set_output(0, output_datatype(c.node()), Shape({Dim::floor_div(dft, 2) + Dim(1), mel}));
}

// Each weight is a triangle: two slopes (sub, div each), min, max = 6 per output element.
OpCost cost_mel(const CostContext& c) { return cost_per_out_elem(c, 6); }

}  // namespace

void register_signal_ops(OpRegistry& r) {
  reg(r, "DFT", 17, 0,
      "5*n*ceil(log2 n) per transform of length n (FFT estimate); transforms = other signal dims", infer_dft,
      cost_dft);
  reg(r, "STFT", 17, 0, "per frame: 5*n*ceil(log2 n) FFT of frame_length n + n window multiplies (if window)",
      infer_stft, cost_stft);
  reg(r, "HannWindow", 17, 0, "4 per output element (angle mul, cos, mul, sub)", infer_window, cost_window_4);
  reg(r, "HammingWindow", 17, 0, "4 per output element (angle mul, cos, mul, sub)", infer_window,
      cost_window_4);
  reg(r, "BlackmanWindow", 17, 0, "8 per output element (angle muls, 2 cos, 2 mul, sub, add)", infer_window,
      cost_window_8);
  reg(r, "MelWeightMatrix", 17, 0, "6 per output element (triangle filter: 2 slopes, min, max)", infer_mel,
      cost_mel);
}

}  // namespace flopwise
