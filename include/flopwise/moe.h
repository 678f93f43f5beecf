// include/flopwise/moe.h — mixture-of-experts layers of an analysed model, found from their routers: total
// and activated params, MACs and FLOPs. Implemented in src/analysis/moe.cc; its text in
// src/writers/llm_text.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flopwise/cost.h"
#include "flopwise/ir.h"

namespace flopwise {

// A mixture-of-experts layer found from its router: a TopK (k of E) or ArgMax (1 of E) over the router's
// E scores, and the E sibling scopes (the experts) under the router's scope or one of its two parents.
struct MoeLayer {
  std::string router;                // the TopK/ArgMax node
  std::string scope;                 // the experts' parent scope ("layers.0.mlp")
  std::vector<std::string> experts;  // the expert scopes
  int64_t top_k = 0;
  Count params, macs, flops;              // all experts of the layer together
  Count one_params, one_macs, one_flops;  // each expert's (unknown where they differ)
};
struct MoeSummary {
  std::vector<MoeLayer> layers;
  int64_t experts = 0, top_k = 0;        // when every layer has the same; else 0
  Count total_params, activated_params;  // activated: all but the experts the router does not pick
  Count total_macs, activated_macs, total_flops, activated_flops;  // at the graph's own shapes
  bool dense = true;  // every expert runs on every token in the graph (equal expert costs)
};
// Mixture-of-experts layers of an analysed model; nullptr when it has none.
std::shared_ptr<const MoeSummary> find_moe(const Model& model, const Report& report);

}  // namespace flopwise
