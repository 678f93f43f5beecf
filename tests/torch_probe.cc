// tests/torch_probe.cc — test oracle, not shipped: runs a TorchScript module in LibTorch on the graph the
// importer lowers (the same prepared graph, with the prim::If branches the lowering chose inlined) and
// prints, for every tensor output of every top-level aten node (container access excepted), the IR value name
// the importer gives it
// ("%<debugName>") and the shape LibTorch actually produced: one line "name<TAB>d0xd1x..." each.
// Inputs: zeros of the pinned shapes (integer inputs: zeros, valid indices for any embedding).
// Usage: torch_probe MODEL.pt [--input SHAPE[:DTYPE]]...   Exit 0, or 2 with one line on stderr.
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/script.h>

#include <iostream>

#include "flopwise/errors.h"
#include "lowerer.h"
#include "torch_types.h"

int main(int argc, char** argv) {
  using namespace flopwise;
  namespace tj = torch::jit;
  if (argc < 2) {
    std::cerr << "usage: torch_probe MODEL.pt [--input SHAPE[:DTYPE]]...\n";
    return 2;
  }
  try {
    InferOptions pins;
    for (int i = 2; i + 1 < argc; i += 2)
      if (std::string(argv[i]) == "--input") pins.inputs.push_back(parse_input_pin(argv[i + 1]));
    Prepared p = prepare(argv[1], pins);
    Model m;
    Lowerer lw(p, m);
    lw.run();
    for (const auto& [node, block] : lw.decisions()) inline_block(node, node->blocks()[block]);
    auto& g = *p.graph;
    std::vector<tj::Value*> probes;
    for (auto* n : g.nodes()) {
      // aten ops that compute a tensor; container access (`features["out"]`, `xs[0]`) returns an existing
      // one.
      std::string kind = n->kind().toQualString();
      if (kind.rfind("aten::", 0) != 0 || kind == "aten::__getitem__") continue;
      for (auto* o : n->outputs())
        if (o->type()->cast<c10::TensorType>()) probes.push_back(o);
    }
    std::vector<tj::Value*> all(g.outputs().begin(), g.outputs().end());
    size_t n_orig = all.size();
    all.insert(all.end(), probes.begin(), probes.end());
    auto* tup = g.insertNode(g.createTuple(all));
    while (!g.outputs().empty()) g.eraseOutput(0);
    g.registerOutput(tup->output());
    std::vector<c10::IValue> stack{p.module._ivalue()};
    for (const auto& d : p.inputs) {
      if (d.value) {
        stack.push_back(*d.value);
        continue;
      }
      if (!d.shape->fully_known())
        throw UsageError("input '" + d.name + "' needs a fully known shape to run");
      std::vector<int64_t> dims;
      for (const auto& x : d.shape->dims) dims.push_back(x.value());
      stack.push_back(torch::zeros(dims, torch::TensorOptions().dtype(scalar_type_of(d.dtype))));
    }
    torch::NoGradGuard ng;
    tj::GraphFunction fn("flopwise_probe", p.graph, nullptr);
    auto res = fn(stack).toTuple();
    for (size_t i = 0; i < probes.size(); ++i) {
      auto t = res->elements()[n_orig + i].toTensor();
      std::string dims;
      for (auto x : t.sizes()) dims += (dims.empty() ? "" : "x") + std::to_string(x);
      std::cout << "%" << probes[i]->debugName() << "\t" << (dims.empty() ? "scalar" : dims) << "\n";
    }
    return 0;
  } catch (const c10::Error& e) {
    std::cerr << argv[1] << ": LibTorch: " << first_line(e.what_without_backtrace()) << "\n";
  } catch (const std::exception& e) {
    std::cerr << argv[1] << ": " << first_line(e.what()) << "\n";
  }
  return 2;
}
