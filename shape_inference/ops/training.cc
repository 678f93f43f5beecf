// shape_inference/ops/training.cc — training family (domain ai.onnx.preview.training, version 1): the
// optimizers Adagrad, Adam and Momentum, and Gradient. An optimizer takes R (learning rate), T (update
// count), then n optimized tensors X followed by groups of n tensors each (gradients, state); its outputs are
// the new X and the new state tensors, each with the shape of its input. FLOPs: the pseudo code of the spec,
// per element of the optimized tensors X (the scalar learning-rate arithmetic on R and T, a handful of
// FLOPs per node, is not counted). Gradient's cost depends on the differentiated graph: unknown.
#include "../helpers.h"

namespace flopwise {

namespace {

constexpr std::string_view kTraining = "ai.onnx.preview.training";

// Input groups after R and T, and which input group each output group mirrors.
struct OptimizerLayout {
  size_t in_groups;
  std::vector<size_t> out_from;  // output group k has the shapes of input group out_from[k]
};

const OptimizerLayout kAdagrad{3, {0, 2}};   // X, G, H -> X_new, H_new
const OptimizerLayout kMomentum{3, {0, 2}};  // X, G, V -> X_new, V_new
const OptimizerLayout kAdam{4, {0, 2, 3}};   // X, G, V, H -> X_new, V_new, H_new

// Number of optimized tensors n; fails when the inputs do not form whole groups.
size_t optimized_count(InferContext& c, const OptimizerLayout& l) {
  const size_t k = c.num_inputs();
  if (k < 2 || (k - 2) % l.in_groups != 0)
    c.fail("expected R, T and " + std::to_string(l.in_groups) + " groups of n tensors, got " +
           std::to_string(k) + " inputs");
  const size_t n = (k - 2) / l.in_groups;
  if (c.num_outputs() > n * l.out_from.size())
    c.fail("expected at most " + std::to_string(n * l.out_from.size()) + " outputs for " + std::to_string(n) +
           " optimized tensors, got " + std::to_string(c.num_outputs()));
  return n;
}

void infer_optimizer(InferContext& c, const OptimizerLayout& l) {
  const size_t n = optimized_count(c, l);
  for (size_t g = 0; g < l.out_from.size(); ++g)
    for (size_t i = 0; i < n; ++i) {
      const size_t in = 2 + l.out_from[g] * n + i;
      if (c.has_output(g * n + i)) c.set_output(g * n + i, c.in_dtype(in), c.in_shape(in));
    }
}

void infer_adagrad(InferContext& c) { infer_optimizer(c, kAdagrad); }
void infer_momentum(InferContext& c) { infer_optimizer(c, kMomentum); }
void infer_adam(InferContext& c) { infer_optimizer(c, kAdam); }

// k FLOPs per element of the optimized tensors X_1..X_n.
OpCost cost_per_optimized_elem(const CostContext& c, const OptimizerLayout& l, int64_t k) {
  const size_t inputs = c.node.inputs.size();
  if (inputs < 2) return cost_unknown(c);
  const size_t n = (inputs - 2) / l.in_groups;
  Count elems{};
  for (size_t i = 0; i < n; ++i) elems += c.in_numel(2 + i);
  return OpCost{Count{}, elems * Count{k}};
}

// G_reg = nc*X + G (2); H_new = H + G_reg^2 (2); sqrt(H_new) + eps (2); r * G_reg / that (2); X - (1).
OpCost cost_adagrad(const CostContext& c) { return cost_per_optimized_elem(c, kAdagrad, 9); }
// G_reg (2); V_new = a*V + (1-a)*G_reg (3); H_new = b*H + (1-b)*G_reg^2 (4); sqrt + eps (2);
// R_adj * V_new / H_sqrt (2); X - (1); (1 - nc_post) * X_new (1).
OpCost cost_adam(const CostContext& c) { return cost_per_optimized_elem(c, kAdam, 15); }
// standard: G_reg (2); V_new = a*V + b*G_reg (3); X - R*V_new (2).
// nesterov: G_reg (2); V_new (3); X - R*(G_reg + a*V_new) (4).
OpCost cost_momentum(const CostContext& c) {
  return cost_per_optimized_elem(c, kMomentum, c.node.attr_s("mode", "standard") == "nesterov" ? 9 : 7);
}

// Inputs are the values of xs then zs; output i is dy/dxs[i], shaped as input i.
void infer_gradient(InferContext& c) {
  auto xs = c.node().attrs.find("xs");
  const size_t nx = xs == c.node().attrs.end() ? 0 : xs->second.strings.size();
  for (size_t i = 0; i < c.num_outputs(); ++i) {
    if (!c.has_output(i)) continue;
    if (i < nx && c.has_input(i)) c.set_output(i, c.in_dtype(i), c.in_shape(i));
  }
}

}  // namespace

void register_training_ops(OpRegistry& r) {
  reg(r, "Adagrad", 1, 0,
      "9 per optimized element (regularize 2, accumulate 2, sqrt+eps 2, scale 2, update 1)", infer_adagrad,
      cost_adagrad, kTraining);
  reg(r, "Adam", 1, 0,
      "15 per optimized element (regularize 2, moments 3+4, sqrt+eps 2, scale 2, update 1, post 1)",
      infer_adam, cost_adam, kTraining);
  reg(r, "Momentum", 1, 0,
      "per optimized element: standard 7, nesterov 9 (regularize 2, momentum 3, update 2 or 4)",
      infer_momentum, cost_momentum, kTraining);
  reg(r, "Gradient", 1, 0, "unknown: depends on the differentiated graph", infer_gradient, cost_unknown,
      kTraining);
}

}  // namespace flopwise
