// src/torch/torch_load.h — loading a TorchScript archive and preparing the graph the lowering reads.
// Owns: torch::jit::load (eval mode), choosing the forward method (or the overload a scripted
// nn.LSTM/GRU compiles to), inlining the graphs as saved, resolving prim::If on facts known without shapes
// (constants, attributes, None-ness, branches that only raise), and the forward inputs (recorded example
// inputs, pins, defaults of optional arguments). Throws InputError / UsageError with one line. Sees LibTorch.
#pragma once

#include <torch/script.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "flopwise/infer.h"
#include "flopwise/ir.h"

namespace flopwise {

// One forward argument after self: a tensor input of the IR graph (shape and dtype), or a non-tensor
// argument left at its default (`value`: e.g. hx=None, need_weights=True).
struct InputDecl {
  std::string name;
  std::optional<Shape> shape;
  DType dtype = DType::Float32;
  std::optional<c10::IValue> value;  // set: not a tensor input, this value is passed
};

struct Prepared {
  torch::jit::Module module;
  std::string method;                        // "forward", or the overload chosen ("forward__0")
  std::shared_ptr<torch::jit::Graph> graph;  // the method's graph, inlined, static Ifs resolved
  std::vector<InputDecl> inputs;             // graph inputs after self
  std::vector<std::string> warnings;
};

// The module tree of `root` in declaration order, with the parameters each module registers (Model::modules).
std::vector<ModuleDecl> module_tree(const torch::jit::Module& root);

// Loads `path` and prepares its forward graph; input shapes from `pins`, else from the archive's
// `flopwise_inputs.json` extra file (flopwise's generator writes it; LibTorch 1.13 keeps no traced types).
Prepared prepare(const std::string& path, const InferOptions& pins);

// Module scope levels (dotted path from the root, class) of a chain of calls, outermost first, each given
// as (instance name, recorded class): from a node's inlined call stack, or a running op's module hierarchy.
// Checked against the real module tree: each instance is a child of the previous level. Levels the calls
// skip (a ModuleList iterated by a scripted loop records only "0") are recovered from the tree, and a
// method of the same module ("SELF"/"self", "TOP") adds no level. The same names as the static tree's.
std::vector<std::pair<std::string, std::string>> module_scope(
    const torch::jit::Module& root, const std::vector<std::pair<std::string, std::string>>& calls);

// Inlines every method and function call with the callee's graph as saved (no executor rewrites).
void inline_as_saved(torch::jit::Graph& g);

// Replaces prim::If node `n` by the nodes of its block `b` (outputs rewired).
void inline_block(torch::jit::Node* n, torch::jit::Block* b);

}  // namespace flopwise
