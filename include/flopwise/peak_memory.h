// include/flopwise/peak_memory.h — peak activation memory by liveness: walking the graph in a schedule of
// its own (depth first from the outputs, operands in input order: the file's node order does not change the
// figure), each activation lives from the node that writes it to its last reader; the peak is the largest sum
// of live activations, a formula in the dynamic dims. Weights and the KV cache are apart.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "flopwise/dim.h"
#include "flopwise/ir.h"
#include "flopwise/llm.h"

namespace flopwise {

struct PeakMemory {
  // Bytes of live activations at the peak: a number, a polynomial, or the exact max() of up to a few
  // candidates that no binding orders (max(A, B) as a dim atom). Graph inputs count from the start.
  // Candidates are ordered for dims >= 1 (a dim of 0 empties a tensor; a prefill's past = 0 aside).
  Count peak;
  std::vector<std::string> at;  // the node(s) where each candidate peak happens
  int64_t unknown_tensors = 0;  // activations of unknown size: the peak is then a lower bound
  Count weights;                // initializers and Constant tensors (stored, not activations)
  Count kv_cache;               // the cache's past inputs and present outputs, apart (when found)
  Count saved_for_training;     // estimate: every activation written, kept for the backward pass
};

// `kv`: the model's cache (flopwise/llm.h find_kv_cache), or nullopt.
PeakMemory peak_memory(const Model& model, const std::optional<KvCache>& kv);

}  // namespace flopwise
