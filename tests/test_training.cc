// tests/test_training.cc — the training step (--train, flopwise/training.h) on a hand-built two-layer MLP,
// x[N,16] -> /a/MatMul (W1 16x32) -> /a/Relu -> /b/MatMul (W2 32x8), every figure by hand: a product's input
// and weight gradients cost its forward MACs each, only where needed (x needs none); ReLU keeps its result (4
// bytes x N x 32), the second product keeps it too (one storage); AdamW keeps two moments and a 4-byte step
// per parameter tensor. Against torch running the step: tests/train.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <stdexcept>

#include "flopwise/cost.h"
#include "flopwise/errors.h"
#include "flopwise/infer.h"
#include "flopwise/onnx_import.h"
#include "flopwise/ops.h"
#include "flopwise/training.h"
#include "onnx_tiny.h"

namespace {

flopwise::Model mlp(const std::string& batch, bool dropout = false) {
  onnx::ModelProto m = fwtest::tiny_model();
  auto* g = m.mutable_graph();
  fwtest::tiny_input(g, "x", onnx::TensorProto::FLOAT, {batch, "16"});
  for (auto [name, rows, cols] : {std::tuple{"W1", 16, 32}, std::tuple{"W2", 32, 8}}) {
    auto* w = g->add_initializer();
    w->set_name(name);
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(rows);
    w->add_dims(cols);
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* e = w->add_external_data();
    e->set_key("location");
    e->set_value("absent.bin");
  }
  fwtest::tiny_node(g, "/a/MatMul", "MatMul", {"x", "W1"}, {"h"});
  fwtest::tiny_node(g, "/a/Relu", "Relu", {"h"}, {"r"});
  if (dropout) fwtest::tiny_node(g, "/drop/Dropout", "Dropout", {"r"}, {"d"});  // ratio 0.5 by default
  fwtest::tiny_node(g, "/b/MatMul", "MatMul", {dropout ? "d" : "r", "W2"}, {"y"});
  g->add_output()->set_name("y");
  flopwise::Model model = flopwise::import_onnx_bytes(m.SerializeAsString(), "mlp.onnx");
  return model;
}

flopwise::TrainingReport step(const std::string& batch, flopwise::TrainOptions opts, bool dropout = false) {
  flopwise::Model model = mlp(batch, dropout);
  flopwise::InferResult inf = flopwise::infer_shapes(model);
  flopwise::Report r = flopwise::build_report(model, std::move(inf));
  return flopwise::analyse_training(model, r, opts);
}

int64_t v(const flopwise::Count& c) {
  REQUIRE(c.known);
  return c.v;
}

}  // namespace

TEST_CASE("training step of an MLP: backward MACs, kept bytes and params by hand, frozen either layer") {
  flopwise::TrainOptions all;
  auto t = step("4", all);
  // a: 4*16*32 = 2048 MACs, only W1's gradient; b: 4*32*8 = 1024, both gradients.
  CHECK(v(t.total.backward_macs) == 2048 + 2 * 1024);
  CHECK(v(t.total.trainable_params) == 16 * 32 + 32 * 8);
  CHECK(v(t.total.saved_bytes) == 4 * 32 * 4);  // ReLU's result, kept by ReLU and by b once
  CHECK(v(t.gradient_bytes) == 4 * (16 * 32 + 32 * 8));
  CHECK(v(t.optimizer_state_bytes) == 2 * 4 * (16 * 32 + 32 * 8) + 4 * 2);  // AdamW
  CHECK(t.warnings.empty());

  flopwise::TrainOptions fa;
  fa.freeze = {"a"};
  t = step("4", fa);
  CHECK(v(t.total.backward_macs) == 1024);  // nothing before b needs a gradient: only W2's
  CHECK(v(t.total.trainable_params) == 32 * 8);
  CHECK(v(t.frozen_params) == 16 * 32);
  CHECK(v(t.total.saved_bytes) == 4 * 32 * 4);  // b keeps its input for W2's gradient

  flopwise::TrainOptions fb;
  fb.freeze = {"b*"};
  fb.optimizer = flopwise::Optimizer::Sgd;
  t = step("4", fb);
  CHECK(v(t.total.backward_macs) == 2048 + 1024);  // b: its input's gradient only
  CHECK(v(t.optimizer_state_bytes) == 0);
  CHECK(v(t.optimizer_flops) == 2 * 16 * 32);

  flopwise::TrainOptions none;
  none.freeze = {"nowhere"};
  t = step("4", none);
  REQUIRE(t.warnings.size() == 1);
  CHECK(t.warnings[0].find("nowhere") != std::string::npos);
}

TEST_CASE("training step with a symbolic batch: formulas, and the largest batch that fits") {
  auto t = step("N", flopwise::TrainOptions{});
  CHECK(t.total.backward_macs.as_dim().str() == "1024*N");
  // params 3,072 + gradients 3,072 + AdamW 6,152 bytes; kept 128*N; the largest transient is at the ReLU:
  // its output's gradient and its input's, 128*N each.
  CHECK(t.memory_estimate_bytes.as_dim().str() == "384*N + 12296");
  flopwise::fit_training(t, 1000000);
  CHECK(t.fit_dim == "N");
  CHECK(t.fit_max == (1000000 - 12296) / 384);
  flopwise::fit_training(t, 12000);  // not even N = 1
  CHECK(t.fit_max == 0);
}

TEST_CASE("training step with a checkpointed layer: it keeps what enters it and runs its forward again") {
  flopwise::TrainOptions ck;
  ck.checkpoint = {"a"};
  auto t = step("4", ck);
  CHECK(v(t.total.backward_macs) == 2048 + 2 * 1024 + 2048);  // a's forward again
  CHECK(v(t.total.saved_bytes) == 4 * 32 * 4);                // b's input; a keeps only x, an input
}

TEST_CASE("training step in mixed precision, by hand: autocast's 16-bit copies kept, master weights fp32") {
  flopwise::TrainOptions bf;
  bf.precision = flopwise::Precision::Bf16Mixed;
  auto t = step("4", bf);
  // a keeps a bfloat16 copy of x (4x16, for W1's gradient: not the model's input); ReLU's result is bfloat16
  // (4x32), kept by ReLU and by b once; b keeps W2's bfloat16 copy (32x8) for its input's gradient.
  CHECK(v(t.total.saved_bytes) == 2 * 4 * 16 + 2 * 4 * 32 + 2 * 32 * 8);
  CHECK(v(t.total.backward_macs) == 2048 + 2 * 1024);    // the products do not change
  CHECK(v(t.gradient_bytes) == 4 * (16 * 32 + 32 * 8));  // fp32 gradients of fp32 master weights
  CHECK(v(t.optimizer_flops) == 14 * (16 * 32 + 32 * 8));
  flopwise::TrainOptions fp16 = bf;
  fp16.precision = flopwise::Precision::Fp16Mixed;
  t = step("4", fp16);
  CHECK(v(t.total.saved_bytes) == 2 * 4 * 16 + 2 * 4 * 32 + 2 * 32 * 8);
  CHECK(v(t.optimizer_flops) == 16 * (16 * 32 + 32 * 8));  // GradScaler: unscale and inf check, 2 each
  CHECK_THROWS_AS(flopwise::parse_precision("fp8"), flopwise::UsageError);
  CHECK(std::string(flopwise::precision_name(flopwise::parse_precision("bf16-mixed"))) == "bf16-mixed");
}

TEST_CASE(
    "training step on the CPU or CUDA: a dropout keeps float noise or a bool mask, nothing else moves") {
  // torch 1.13 (models/train_keep.json, "dropout": Conv-BN-Dropout(0.3)-Conv at 2x8x8x8 = 1,024 elements)
  // keeps 12,352 bytes on the CPU and 9,280 with CUDA's fused kernel: 3 bytes an element apart, a 4-byte
  // noise against a 1-byte mask. Here by hand: ReLU's result (4x32 floats) and the dropout's output, which b
  // keeps for W2's gradient, 512 bytes each, then the mask or the noise of 4x32 elements.
  flopwise::TrainOptions cuda;
  auto t = step("4", cuda, true);
  CHECK(t.device == flopwise::Device::Cuda);
  CHECK(v(t.total.saved_bytes) == 512 + 512 + 4 * 32);
  flopwise::TrainOptions cpu;
  cpu.device = flopwise::Device::Cpu;
  auto c = step("4", cpu, true);
  CHECK(v(c.total.saved_bytes) == 512 + 512 + 4 * 4 * 32);
  CHECK(v(c.total.backward_macs) == v(t.total.backward_macs));
  CHECK(v(step("4", cpu).total.saved_bytes) == v(step("4", cuda).total.saved_bytes));  // no dropout: alike
  CHECK(flopwise::parse_device("cpu") == flopwise::Device::Cpu);
  CHECK(std::string(flopwise::device_name(flopwise::parse_device("cuda"))) == "cuda");
  CHECK_THROWS_AS(flopwise::parse_device("tpu"), flopwise::UsageError);
}

TEST_CASE("training facts: a family's row for an op it has not registered is refused, as a misspelt name") {
  flopwise::OpRegistry r;
  CHECK_THROWS_AS(r.set_train("", "Conv", flopwise::TrainFacts{}), std::logic_error);
  // the registry's own rows all name registered ops (else building it throws); a Conv's row is
  // derivatives.yaml's convolution_backward, which reads input and weight for either gradient
  CHECK(flopwise::OpRegistry::instance().find("", "Conv", 11)->train.keeps ==
        flopwise::TrainKeeps::both_operands);
}
