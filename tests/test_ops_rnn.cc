// tests/test_ops_rnn.cc — rnn family: RNN, GRU, LSTM. Shapes of rows named "(onnx test_x)" are the output
// dims of ONNX's backend node test test_x (those tests output Y_h only, or Y and Y_h for the batchwise ones).
// Costs, derived by hand: MACs = seq*dirs*batch * gates*hidden*(input+hidden);
// FLOPs = 2*MACs + seq*dirs*batch*hidden * E, with E per hidden unit per step:
//   RNN  1 (+2 with B) + 1                      = 2, or 4 with B
//   GRU  3 (+6 with B) + 8                      = 11, or 17 with B
//   LSTM 4 (+8 with B) + 9 (+6 with peepholes)  = 13, or 21 with B, 27 with B and P
#include "flopwise/cost.h"
#include "op_test_util.h"

using namespace fwtest;

// Tables are aligned by hand: one case per row.
// clang-format off

namespace {
Attribute hs(int64_t h) { return A::i(h); }
}  // namespace

TEST_CASE("rnn ops: LSTM") {
  const std::vector<OpCase> cases = {
      // seq 1, batch 3, input 2, hidden 3: MACs 3 * 4*3*(2+3) = 180; FLOPs 360 + 3*3*13 (117) = 477
      {"defaults (onnx test_lstm_defaults)", "LSTM", {"1x3x2", "1x12x2", "1x12x3"}, {{"hidden_size", hs(3)}},
       {"1x1x3x3", "1x3x3", "1x3x3"}, 180, 477},
      // batch 3, input 3, hidden 4, B: MACs 3 * 4*4*(3+4) = 336; FLOPs 672 + 3*4*21 (252) = 924
      {"initial bias (onnx test_lstm_with_initial_bias)", "LSTM", {"1x3x3", "1x16x3", "1x16x4", "1x32"},
       {{"hidden_size", hs(4)}}, {"1x1x3x4", "1x3x4"}, 336, 924},
      // batch 2, input 4, hidden 3, B and P: MACs 2 * 4*3*(4+3) = 168; FLOPs 336 + 2*3*27 (162) = 498
      {"peepholes (onnx test_lstm_with_peepholes)", "LSTM",
       {"1x2x4", "1x12x4", "1x12x3", "1x24", "2:int32", "1x2x3", "1x2x3", "1x9"}, {{"hidden_size", hs(3)}},
       {"1x1x2x3", "1x2x3", "1x2x3"}, 168, 498},
      // layout 1: X [batch 3, seq 1, input 2], hidden 7: MACs 3 * 4*7*(2+7) = 756; FLOPs 1512 + 3*7*13 (273) = 1785
      {"batchwise (onnx test_lstm_batchwise)", "LSTM", {"3x1x2", "1x28x2", "1x28x7"},
       {{"hidden_size", hs(7)}, {"layout", A::i(1)}}, {"3x1x1x7", "3x1x7", "3x1x7"}, 756, 1785},
      // hidden from R: 64/4 = 16; seq 5 batch 2 input 8: MACs 5*2 * 4*16*(8+16) = 15360; FLOPs 30720 + 10*16*13 = 32800
      {"hidden_size from weights", "LSTM", {"5x2x8", "1x64x8", "1x64x16"}, {}, {"5x1x2x16", "1x2x16", "1x2x16"},
       15360, 32800},
      // bidirectional: dirs 2; seq 4, batch 1, input 2, hidden 3: MACs 4*2*1 * 4*3*5 = 480; FLOPs 960 + 8*3*13 = 1272
      {"bidirectional", "LSTM", {"4x1x2", "2x12x2", "2x12x3"}, {{"direction", A::s("bidirectional")}},
       {"4x2x1x3", "2x1x3", "2x1x3"}, 480, 1272},
      {"symbolic", "LSTM", {"seq,batch,10", "2x80x10", "2x80x20"}, {{"direction", A::s("bidirectional")}},
       {"seq,2,batch,20", "2,batch,20", "2,batch,20"}, kUnknown, kUnknown},
      {"unknown rank X", "LSTM", {"*", "1x12x2", "1x12x3"}, {{"hidden_size", hs(3)}}, {"?x1x?x3", "1x?x3", "1x?x3"},
       kUnknown, kUnknown},
      {"bad input size", "LSTM", {"1x3x5", "1x12x2", "1x12x3"}, {{"hidden_size", hs(3)}}, {"!"}},
      {"bad hidden_size vs R", "LSTM", {"1x3x2", "1x12x2", "1x12x3"}, {{"hidden_size", hs(4)}}, {"!"}},
      {"bad direction count", "LSTM", {"1x3x2", "2x12x2", "2x12x3"}, {}, {"!"}},
      {"bad X rank", "LSTM", {"3x2", "1x12x2", "1x12x3"}, {}, {"!"}},
  };
  for (auto tc : cases) {
    tc.opset = 14;
    check_case(tc);
  }
}

TEST_CASE("rnn ops: GRU") {
  const std::vector<OpCase> cases = {
      // batch 3, input 2, hidden 5: MACs 3 * 3*5*(2+5) = 315; FLOPs 630 + 3*5*11 (165) = 795
      {"defaults (onnx test_gru_defaults)", "GRU", {"1x3x2", "1x15x2", "1x15x5"}, {{"hidden_size", hs(5)}},
       {"1x1x3x5", "1x3x5"}, 315, 795},
      // batch 3, input 3, hidden 3, B: MACs 3 * 3*3*(3+3) = 162; FLOPs 324 + 3*3*17 (153) = 477
      {"initial bias (onnx test_gru_with_initial_bias)", "GRU", {"1x3x3", "1x9x3", "1x9x3", "1x18"},
       {{"hidden_size", hs(3)}}, {"-", "1x3x3"}, 162, 477},
      // seq 2, batch 3, input 3, hidden 5, B: MACs 2*3 * 3*5*(3+5) = 720; FLOPs 1440 + 6*5*17 (510) = 1950
      {"seq length (onnx test_gru_seq_length)", "GRU", {"2x3x3", "1x15x3", "1x15x5", "1x30"},
       {{"hidden_size", hs(5)}}, {"2x1x3x5", "1x3x5"}, 720, 1950},
      // layout 1, batch 3, seq 1, input 2, hidden 6: MACs 3 * 3*6*(2+6) = 432; FLOPs 864 + 3*6*11 (198) = 1062
      {"batchwise (onnx test_gru_batchwise)", "GRU", {"3x1x2", "1x18x2", "1x18x6"},
       {{"hidden_size", hs(6)}, {"layout", A::i(1)}}, {"3x1x1x6", "3x1x6"}, 432, 1062},
      {"symbolic", "GRU", {"Tx4x16", "1x96x16", "1x96x32"}, {}, {"Tx1x4x32", "1x4x32"}, kUnknown, kUnknown},
      {"unknown rank", "GRU", {"*", "*", "*"}, {{"hidden_size", hs(5)}}, {"?x1x?x5", "1x?x5"}, kUnknown, kUnknown},
      {"bad: W rows not 3*hidden", "GRU", {"1x3x2", "1x16x2", "1x15x5"}, {{"hidden_size", hs(5)}}, {"!"}},
      {"bad direction", "GRU", {"1x3x2", "1x15x2", "1x15x5"}, {{"direction", A::s("sideways")}}, {"!"}},
  };
  for (auto tc : cases) {
    tc.opset = 14;
    check_case(tc);
  }
}

TEST_CASE("rnn ops: RNN") {
  const std::vector<OpCase> cases = {
      // batch 3, input 2, hidden 4: MACs 3 * 4*(2+4) = 72; FLOPs 144 + 3*4*2 (24) = 168
      {"defaults (onnx test_simple_rnn_defaults)", "RNN", {"1x3x2", "1x4x2", "1x4x4"}, {{"hidden_size", hs(4)}},
       {"1x1x3x4", "1x3x4"}, 72, 168},
      // batch 3, input 3, hidden 5, B: MACs 3 * 5*(3+5) = 120; FLOPs 240 + 3*5*4 (60) = 300
      {"initial bias (onnx test_simple_rnn_with_initial_bias)", "RNN", {"1x3x3", "1x5x3", "1x5x5", "1x10"},
       {{"hidden_size", hs(5)}}, {"-", "1x3x5"}, 120, 300},
      // seq 2: MACs 2*3 * 5*8 = 240; FLOPs 480 + 6*5*4 (120) = 600
      {"seq length (onnx test_rnn_seq_length)", "RNN", {"2x3x3", "1x5x3", "1x5x5", "1x10"}, {{"hidden_size", hs(5)}},
       {"2x1x3x5", "1x3x5"}, 240, 600},
      {"batchwise (onnx test_simple_rnn_batchwise)", "RNN", {"3x1x2", "1x4x2", "1x4x4"},
       {{"hidden_size", hs(4)}, {"layout", A::i(1)}}, {"3x1x1x4", "3x1x4"}, 72, 168},
      {"symbolic", "RNN", {"Tx4x16", "1x32x16", "1x32x32"}, {}, {"Tx1x4x32", "1x4x32"}, kUnknown, kUnknown},
      {"unknown rank", "RNN", {"*", "1x4x2", "1x4x4"}, {}, {"?x1x?x4", "1x?x4"}, kUnknown, kUnknown},
      {"bad initial_h batch", "RNN", {"1x3x2", "1x4x2", "1x4x4", "", "", "1x2x4"}, {}, {"!"}},
  };
  for (auto tc : cases) {
    tc.opset = 14;
    check_case(tc);
  }
}
// clang-format on

TEST_CASE(
    "rnn ops: a recurrent layer's kernel calls are its time steps times directions (NodeReport::calls)") {
  // Each time step runs the cell's products once per direction: what a calibration's per-call term prices.
  auto calls = [](const std::vector<std::string>& in, const std::map<std::string, Attribute>& attrs) {
    OneNode one = run_op("LSTM", in, attrs, 3);
    Report r = build_report(one.model, one.result);
    REQUIRE(r.nodes.size() == 1);
    return r.nodes[0].calls;
  };
  // X [seq 16, batch 2, input 8], W [dirs, 4*hidden, 8], R [dirs, 4*hidden, hidden]
  CHECK(calls({"16x2x8", "1x12x8", "1x12x3"}, {{"hidden_size", A::i(3)}}) == 16);
  CHECK(calls({"16x2x8", "2x12x8", "2x12x3"},
              {{"hidden_size", A::i(3)}, {"direction", A::s("bidirectional")}}) == 32);
  CHECK(calls({"2x16x8", "1x12x8", "1x12x3"}, {{"hidden_size", A::i(3)}, {"layout", A::i(1)}}) ==
        16);                                                                     // batch first
  CHECK(calls({"S,2,8", "1x12x8", "1x12x3"}, {{"hidden_size", A::i(3)}}) == 1);  // steps unknown: one call
}
