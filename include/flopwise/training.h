// include/flopwise/training.h — one training step of the graph, op by op (--train): which tensors need a
// gradient (requires_grad propagated from the trainable parameters: a graph input needs none, a frozen
// scope's weights none), each op's backward as autograd computes it (a product's input gradient and weight
// gradient are two products, each computed only where needed), trainable parameters, their gradients, and the
// optimizer's state and FLOPs; the forward as model.train() runs it (dropout active, batch norm on batch
// statistics), and under --precision the dtypes torch.autocast gives each op. The rules are in README.md
// ("The training step").
#pragma once

#include <map>
#include <string>
#include <vector>

#include "flopwise/dim.h"
#include "flopwise/ir.h"

namespace flopwise {

struct Report;

enum class Optimizer { Sgd, Momentum, Adam, AdamW };

// --precision: fp32, or torch.autocast's mixed precision (CUDA's op lists) in bfloat16 or float16. Weights,
// gradients and optimizer state stay in the parameters' dtype (fp32 master weights); a product runs in the
// low dtype on low-precision copies of its operands, the ops of autocast's fp32 list on fp32 copies, other
// ops in their inputs' dtype; fp16-mixed adds torch.cuda.amp.GradScaler's unscale and inf check.
// bf16-master / fp16-master: 16-bit weights, gradients and activations (Megatron's and DeepSpeed's mixed
// precision), the optimizer holding fp32 master weights beside its state (ZeRO's K = 12 bytes a parameter
// with Adam: master weights, momentum, variance); GradScaler's unscale with fp16.
enum class Precision { Fp32, Bf16Mixed, Fp16Mixed, Bf16Master, Fp16Master };
inline bool is_master(Precision p) { return p == Precision::Bf16Master || p == Precision::Fp16Master; }

// --device: whose kernels run the step, where torch's CPU and CUDA kernels keep different tensors for the
// backward: an out-of-place dropout keeps a bool mask per element on CUDA (the fused aten::native_dropout),
// its noise in the input's dtype on the CPU, and so does the dropout torch's LSTM applies between layers.
// Every other rule (derivatives.yaml's) is the same on both; an LSTM is counted as torch's cells run it.
enum class Device { Cuda, Cpu };

struct TrainOptions {
  std::vector<std::string> freeze;  // scope globs (scope_glob_match): the scope and everything under it
  // Activation checkpointing: scope globs whose forward keeps only what enters the scope and runs again in
  // the backward (torch.utils.checkpoint).
  std::vector<std::string> checkpoint;
  Optimizer optimizer = Optimizer::AdamW;
  Precision precision = Precision::Fp32;
  Device device = Device::Cuda;
};

// "sgd" | "momentum" | "adam" | "adamw"; throws UsageError for another name.
Optimizer parse_optimizer(const std::string& name);
const char* optimizer_name(Optimizer o);
// "fp32" | "bf16-mixed" | "fp16-mixed" | "bf16-master" | "fp16-master"; throws UsageError for another name.
Precision parse_precision(const std::string& name);
const char* precision_name(Precision p);
// "cuda" | "cpu"; throws UsageError for another name.
Device parse_device(const std::string& name);
const char* device_name(Device d);

// The backward of a node, a scope or the model.
struct TrainCounts {
  Count backward_macs, backward_flops;
  // The forward's FLOPs in train mode beyond the report's (an eval run's): an active dropout's mask and
  // multiply, a batch norm's batch statistics.
  Count forward_extra_flops;
  Count trainable_params;  // each parameter once, at its first user (as Totals::params)
  // Bytes autograd keeps for the backward: the tensors each op's derivative formula needs (torch's
  // derivatives.yaml), each storage once (views and in-place results share their input's), at the first op
  // that keeps it; parameters, buffers and the model's inputs apart.
  Count saved_bytes;
  void add(const TrainCounts& o);
};

struct TrainingReport {
  Optimizer optimizer = Optimizer::AdamW;
  Precision precision = Precision::Fp32;
  Device device = Device::Cuda;
  std::vector<std::string> freeze, checkpoint;
  TrainCounts total;
  Count frozen_params;
  Count gradient_bytes;           // one gradient per trainable parameter, in its dtype
  Count optimizer_state_bytes;    // what torch.optim keeps after a step (docs/COUNTING.md)
  Count optimizer_flops;          // the step's elementwise arithmetic per trainable element
  Count forward_flops;            // the forward in train mode: the report's + total.forward_extra_flops
  Count estimate_backward_flops;  // the 2 x forward rule, for comparison
  Count param_bytes;              // every parameter, trainable or frozen, in its dtype
  // The largest transient of the backward: one op's output gradients and the input gradients it makes, at
  // the op (and its scope) where it is largest.
  Count backward_transient_bytes;
  std::string transient_at, transient_scope;
  // params + gradients + optimizer state + saved activations + the backward's largest transient.
  Count memory_estimate_bytes;
  std::vector<std::string> saved_estimated;  // ops with no rule of what they keep: their inputs counted
  // Per trained token, where the model's input is token ids ([batch, seq] integers): the step's forward and
  // backward FLOPs over batch x seq, the attention products' share of them apart, beside the 6 x params rule.
  // Unknown where the division is not exact. `per_token`: the model has such an input (else all four unset).
  bool per_token = false;
  Count tokens, flops_per_token, attention_flops_per_token, six_params;
  // --fit: the largest value of the estimate's one free dim (a batch) for which it fits `fit_limit` bytes.
  int64_t fit_limit = -1;          // -1: not asked
  std::string fit_dim;             // the dim searched; "" when the estimate is a number
  int64_t fit_max = -1;            // its largest value that fits (0: not even 1); -1: unknown
  Count fit_bytes;                 // the estimate there (or the number)
  std::vector<TrainCounts> nodes;  // per Report::nodes entry
  std::vector<std::pair<std::string, TrainCounts>>
      scopes;                          // scope path ("" the model) -> all under it, pre-order
  std::vector<std::string> estimated;  // nodes whose backward MACs follow no exact rule (2 x forward taken)
  std::vector<std::string> warnings;
};

// --fit: the largest value of the memory estimate's free dim for which it is at most `limit_bytes` (the
// estimate grows with it), searched exactly on its formula; sets the fit_* fields, or a warning where the
// estimate has no free dim to search (then it says whether the number fits) or several (bind all but one with
// --dim).
void fit_training(TrainingReport& t, int64_t limit_bytes);

// The training step of `model` as `report` (build_report's) counted its forward.
TrainingReport analyse_training(const Model& model, const Report& report, const TrainOptions& opts);

}  // namespace flopwise
