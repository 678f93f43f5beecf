// flopwise/llm.h — language-model phases from the exported graph itself (issue 13): the KV cache found by
// structure, prefill and decode bindings, KV-cache bytes per token, and a generation's totals.
// Owns: nothing of the counting; it binds dims and re-reads reports the analysis already produced.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flopwise/cost.h"
#include "flopwise/ir.h"

namespace flopwise {

// A decoder's KV cache: graph inputs (past) concatenated with the new keys/values into graph outputs
// (present), along one axis whose length on the past inputs is one symbol (`past`) and on the new part
// another (`seq`).
struct KvCache {
  struct Pair {
    std::string past, present;
    int64_t axis = 0;
  };
  std::vector<Pair> pairs;
  std::string past_dim, seq_dim;  // the symbols: cached length, new tokens
  std::string found_by;           // "structure" (a Concat of an input into an output) or "names"
  // Bytes the present outputs hold per cached position (a polynomial in the other dims: batch): the KV
  // cache grows by this much per token. Unknown where a present's dims or dtype are not known.
  Count bytes_per_token;
};

// Finds the cache in an inferred model; nullopt when it has none (a decoder without a cache, an encoder).
std::optional<KvCache> find_kv_cache(const Model& model);

enum class Phase { None, Prefill, Decode };
Phase parse_phase(const std::string& s);  // "prefill" / "decode"; throws UsageError otherwise

// The --dim bindings of a phase: prefill binds past = 0 (the prompt is `seq`), decode binds seq = 1 (one
// new token against `past` cached ones). A model without a cache: prefill binds nothing; decode is a
// forward over the whole prefix (no binding; say so).
std::vector<std::pair<std::string, int64_t>> phase_bindings(const std::optional<KvCache>& kv, Phase p);

// One line saying what the phase did and which cache tensors were used.
std::string describe_phase(const std::optional<KvCache>& kv, Phase p);

// A generation of G tokens after a prompt of S: the prefill (seq = S, past = 0) yields the first token, then
// G - 1 decode steps at past = S, S + 1, ..., S + G - 2. Counts are exact, polynomials in the dims left
// unbound (batch). Needs a cache (without one each step is a forward over the prefix: that is what
// `decode` sums then).
struct Generation {
  int64_t prompt = 0, generated = 0;
  Count prefill_macs, prefill_flops, prefill_bytes;
  Count decode_macs, decode_flops, decode_bytes;  // the G - 1 steps together
  Count total_macs, total_flops, total_bytes;
  Count kv_bytes_end;  // the cache after the last step: bytes_per_token * (S + G - 1)
  std::string decode_step_macs, decode_step_flops;  // one step's formula in the cached length
};
// `at(dims)` analyses the model with extra bindings and returns its report (the caller's pins apply), as
// run_sweep's reanalyse does.
using Reanalyse = std::function<Report(const std::vector<std::pair<std::string, int64_t>>&)>;
Generation generation(const KvCache& kv, int64_t prompt, int64_t generated, const Reanalyse& at);

std::string format_generation(const KvCache& kv, const Generation& g);

}  // namespace flopwise
