// include/flopwise/attention.h — attention products found by structure in a graph, and the MACs a causal mask
// skips in them: what `--causal` discounts in the cost pass (Report::causal). Implemented in
// src/cost/attention.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "flopwise/dim.h"
#include "flopwise/ir.h"

namespace flopwise {

// An attention product found by structure in the main graph: a MatMul whose output reaches a Softmax over its
// last axis through elementwise scale and mask ops (the scores, QKᵀ), or a MatMul whose first operand is such
// a Softmax's output (AV). Einsum-written attention and fused attention ops are not matched.
struct AttentionProduct {
  size_t node = 0;      // index in the main graph's nodes
  bool scores = false;  // QKᵀ; else AV
  bool masked = false;  // an Add, Sub or Where between the scores and the Softmax (a mask)
};
std::vector<AttentionProduct> find_attention_products(const Graph& g);

// MACs a causal mask skips in an attention product whose output is [..., S, T] (scores) or [..., S, d] (AV):
// the S queries are the last S of the T = past + S positions, and query i sees past + i + 1 keys, so
// S(S-1)/2 of the S*T (query, key) pairs are skipped per head, each of the contraction length d. Unknown
// where the shapes are not known.
Count causal_skipped_macs(const Graph& g, const Node& n, bool scores);

// What --causal discounted (Report::causal).
struct CausalDiscount {
  int64_t products = 0;  // attention products discounted (scores and AV)
  int64_t masked = 0;    // of the score products, those with a mask before the Softmax
  Count macs_skipped;    // MACs taken off (FLOPs: 2x that, in every convention's contraction terms)
};

}  // namespace flopwise
