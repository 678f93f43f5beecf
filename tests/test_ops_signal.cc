// tests/test_ops_signal.cc — signal family: DFT, STFT, Hann/Hamming/Blackman windows, MelWeightMatrix.
// Cost convention (shape_inference/ops/signal.cc): one FFT of length n = 5*n*ceil(log2 n) FLOPs;
// STFT adds n window multiplies per frame when a window is given; windows 4 (Hann, Hamming) or 8
// (Blackman) per element; MelWeightMatrix 6 per element.
#include "op_test_util.h"

using namespace fwtest;

TEST_CASE("signal ops") {
  const auto one = A::i(1);
  const std::vector<OpCase> cases = {
      // label, op, inputs, attrs, expected shapes, MACs, FLOPs, domain, opset
      // DFT
      {"dft axis 1", "DFT", {"1x10x10x1"}, {{"axis", one}}, {"1x10x10x2"}, 0, 2000},
      // 10 transforms (batch 1 * dim2 10) of n=10: 5*10*ceil(log2 10)=5*10*4 = 200; 10*200 = 2000
      {"dft default axis complex", "DFT", {"2x8x2"}, {}, {"2x8x2"}, 0, 240},  // 2 * 5*8*3 = 240
      {"dft onesided axis 2",
       "DFT",
       {"1x10x10x1"},
       {{"axis", A::i(2)}, {"onesided", one}},
       {"1x10x6x2"},
       0,
       2000},
      // 10/2+1 = 6 bins; cost as the full transform: 2000
      {"dft inverse", "DFT", {"1x10x10x2"}, {{"inverse", one}}, {"1x10x10x2"}, 0, 2000},
      {"dft dft_length onesided",
       "DFT",
       {"2x16x1", "scalar:int64=8"},
       {{"onesided", one}},
       {"2x5x2"},
       0,
       240},
      // n = 8: 8/2+1 = 5 bins; 2 transforms * 5*8*3 = 240
      {"dft negative axis", "DFT", {"3x7x4x1"}, {{"axis", A::i(-3)}}, {"3x7x4x2"}, 0, 1260},
      // axis -3 -> 1, n = 7: 5*7*3 = 105; transforms 3*4 = 12; 12*105 = 1260
      {"dft opset 20 default axis -2",
       "DFT",
       {"1x10x12x1", "", ""},
       {{"onesided", one}},
       {"1x10x7x2"},
       0,
       2400,
       "",
       20},  // axis -2 -> 2, n=12: 12/2+1 = 7; 10 transforms * 5*12*4 = 2400
      {"dft opset 20 axis input",
       "DFT",
       {"1x10x12x1", "", "scalar:int64=1"},
       {{"onesided", one}},
       {"1x6x12x2"},
       0,
       2400,
       "",
       20},  // n=10: 10/2+1 = 6; 12 transforms * 5*10*4 = 2400
      {"dft opset 20 axis unknown",
       "DFT",
       {"1x10x12x1", "", "scalar:int64"},
       {},
       {"?x?x?x2"},
       -1,
       kUnknown,
       "",
       20},
      {"dft symbolic batch", "DFT", {"Bx16x2"}, {}, {"Bx16x2"}, 0, kUnknown},
      // onesided: floor(T/2) + 1 bins
      {"dft symbolic length onesided",
       "DFT",
       {"2xTx1"},
       {{"onesided", one}},
       {"2x(floor(T/2) + 1)x2"},
       0,
       kUnknown},
      {"dft unknown dft_length", "DFT", {"2x16x1", "scalar:int64"}, {}, {"2x?x2"}, 0, kUnknown},
      {"dft unknown rank", "DFT", {"*"}, {}, {"*"}, -1, kUnknown},
      {"dft last dim 3", "DFT", {"1x10x3"}, {}, {"!"}},
      {"dft axis is the complex dim", "DFT", {"1x10x1"}, {{"axis", A::i(2)}}, {"!"}},
      {"dft onesided inverse", "DFT", {"1x10x2"}, {{"onesided", one}, {"inverse", one}}, {"!"}},
      {"dft zero length", "DFT", {"1x10x1", "scalar:int64=0"}, {}, {"!"}},
      // STFT
      {"stft frame_length",
       "STFT",
       {"1x128x1", "scalar:int64=8", "", "scalar:int64=16"},
       {},
       {"1x15x9x2"},
       0,
       4800},  // frames (128-16)/8+1 = 15, bins 16/2+1 = 9; 15 * 5*16*4 = 4800
      {"stft window", "STFT", {"1x128x1", "scalar:int64=8", "16"}, {}, {"1x15x9x2"}, 0, 5040},
      // 15 * (320 + 16 window multiplies) = 5040
      {"stft two-sided complex",
       "STFT",
       {"2x100x2", "scalar:int64=10", "", "scalar:int64=20"},
       {{"onesided", A::i(0)}},
       {"2x9x20x2"},
       0,
       9000},  // frames floor(80/10)+1 = 9; 2*9 * 5*20*5 = 9000
      {"stft window and frame_length agree",
       "STFT",
       {"1x50x1", "scalar:int64=7", "10", "scalar:int64=10"},
       {},
       {"1x6x6x2"},
       0,
       1260},  // floor(40/7)+1 = 6 frames, 10/2+1 = 6 bins; 6 * (5*10*4 + 10) = 1260
      {"stft symbolic batch",
       "STFT",
       {"Bx128x1", "scalar:int64=8", "", "scalar:int64=16"},
       {},
       {"Bx15x9x2"},
       0,
       kUnknown},
      // frames: floor((L - 16)/8) + 1 = floor(L/8) - 1
      {"stft symbolic length",
       "STFT",
       {"1xLx1", "scalar:int64=8", "", "scalar:int64=16"},
       {},
       {"1x(floor(L/8) - 1)x9x2"},
       0,
       kUnknown},
      {"stft unknown step", "STFT", {"1x128x1", "scalar:int64", "", "scalar:int64=16"}, {}, {"1x?x9x2"}},
      {"stft unknown rank",
       "STFT",
       {"*", "scalar:int64=8", "", "scalar:int64=16"},
       {},
       {"?x?x9x2"},
       0,
       kUnknown},
      {"stft window vs frame_length",
       "STFT",
       {"1x128x1", "scalar:int64=8", "16", "scalar:int64=32"},
       {},
       {"!"}},
      {"stft frame longer than signal",
       "STFT",
       {"1x128x1", "scalar:int64=8", "", "scalar:int64=200"},
       {},
       {"!"}},
      {"stft signal rank 2", "STFT", {"1x128", "scalar:int64=8", "", "scalar:int64=16"}, {}, {"!"}},
      {"stft window rank 2", "STFT", {"1x128x1", "scalar:int64=8", "4x4"}, {}, {"!"}},
      {"stft zero step", "STFT", {"1x128x1", "scalar:int64=0", "", "scalar:int64=16"}, {}, {"!"}},
      // Windows
      {"hann", "HannWindow", {"scalar:int32=10"}, {}, {"10"}, 0, 40},  // 10*4
      {"hann symmetric", "HannWindow", {"scalar:int64=10"}, {{"periodic", A::i(0)}}, {"10"}, 0, 40},
      {"hamming", "HammingWindow", {"scalar:int32=10"}, {}, {"10"}, 0, 40},    // 10*4
      {"blackman", "BlackmanWindow", {"scalar:int32=10"}, {}, {"10"}, 0, 80},  // 10*8
      {"hann unknown size", "HannWindow", {"scalar:int64"}, {}, {"?"}, 0, kUnknown},
      {"hamming unknown rank", "HammingWindow", {"*:int64"}, {}, {"?"}, 0, kUnknown},
      {"blackman zero size", "BlackmanWindow", {"scalar:int64=0"}, {}, {"!"}},
      {"hann not scalar", "HannWindow", {"2:int64=3,4"}, {}, {"!"}},
      // MelWeightMatrix
      {"mel",
       "MelWeightMatrix",
       {"scalar:int32=8", "scalar:int32=16", "scalar:int32=8192", "scalar=0", "scalar=4096"},
       {},
       {"9x8"},
       0,
       432},  // 16/2+1 = 9; 9*8 = 72 elements * 6 = 432
      {"mel odd dft",
       "MelWeightMatrix",
       {"scalar:int64=4", "scalar:int64=15", "scalar:int64=16000", "scalar=0", "scalar=8000"},
       {},
       {"8x4"},
       0,
       192},  // 15/2+1 = 8; 32*6 = 192
      {"mel unknown bins",
       "MelWeightMatrix",
       {"scalar:int32", "scalar:int32=16", "scalar:int32=8192", "scalar=0", "scalar=4096"},
       {},
       {"9x?"},
       0,
       kUnknown},
      {"mel unknown rank",
       "MelWeightMatrix",
       {"*:int32", "*:int32", "scalar:int32", "scalar", "scalar"},
       {},
       {"?x?"}},
      {"mel zero bins",
       "MelWeightMatrix",
       {"scalar:int32=0", "scalar:int32=16", "scalar:int32=8192", "scalar=0", "scalar=4096"},
       {},
       {"!"}},
  };
  for (const auto& tc : cases) check_case(tc);
}

namespace {
// One node whose scalar integer inputs carry the given (possibly symbolic) values.
OneNode run_with_scalars(const std::string& op, const std::vector<Dim>& vals) {
  OneNode r;
  Graph& g = r.model.graph;
  Node n;
  n.name = "n0";
  n.op = op;
  n.opset = 17;
  for (size_t i = 0; i < vals.size(); ++i) {
    int idx = g.add_value("in" + std::to_string(i));
    g.values[idx].dtype = DType::Int64;
    g.values[idx].shape = Shape::scalar();
    ConstData d;
    d.ints = {vals[i]};
    g.values[idx].data = d;
    g.values[idx].is_input = true;
    g.inputs.push_back(idx);
    n.inputs.push_back(idx);
  }
  int out = g.add_value("out0");
  g.values[out].producer = 0;
  n.outputs.push_back(out);
  g.nodes.push_back(std::move(n));
  infer_graph(g, r.result);
  return r;
}
}  // namespace

TEST_CASE("signal ops: symbolic sizes and output types") {
  auto w = run_with_scalars("HannWindow", {Dim::symbol("n")});
  CHECK(w.out(0).shape.str() == "n");
  CHECK(w.out(0).dtype == DType::Float32);
  // MelWeightMatrix with symbolic num_mel_bins: [16/2+1, m] = [9, m].
  auto m = run_with_scalars("MelWeightMatrix", {Dim::symbol("m"), Dim(16), Dim(8000)});
  CHECK(m.out(0).shape.str() == "9xm");
  auto d = run_op("BlackmanWindow", {"scalar:int64=4"}, {{"output_datatype", A::i(11)}});
  CHECK(d.out(0).dtype == DType::Float64);
  CHECK(d.out(0).shape.str() == "4");
}
