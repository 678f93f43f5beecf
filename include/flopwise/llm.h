// include/flopwise/llm.h — language-model phases from the exported graph itself: the KV cache found by
// structure, prefill and decode bindings, KV-cache bytes per token, and a generation's totals.
// Owns: nothing of the counting; it binds dims and re-reads reports the analysis already produced.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "flopwise/cost.h"
#include "flopwise/ir.h"
#include "flopwise/rational_poly.h"

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
  // The totals for any S and G (and the dims left unbound), summed in closed form.
  RationalPoly total_macs_formula, total_flops_formula, total_bytes_formula;
  std::string prompt_symbol = "S", generated_symbol = "G";  // renamed where the model has such a dim
  // One decode step's counts as polynomials in `step_dim` (the cached length with a cache, the prefix
  // without one) and the dims left unbound; unknown where a node of the step is not counted.
  std::string step_dim;
  Count step_macs, step_flops, step_bytes;
  KvCache kv;  // the cache it was planned with (no pairs and no past_dim: none, as sequence_dim says)
};
// A decoder without a cache: its token sequence's dim (axis 1 of the first integer input of rank 2, the
// `input_ids [batch, seq]` of every exporter), "" when there is none. generation() then takes a KvCache with
// no pairs, no past_dim and this seq_dim: each step is a forward over the whole prefix (seq = S, S + 1, ...).
std::string sequence_dim(const Model& model);

// `at(dims)` analyses the model with extra bindings and returns its report (the caller's pins apply), as
// run_sweep's reanalyse does.
using Reanalyse = std::function<Report(const std::vector<std::pair<std::string, int64_t>>&)>;
Generation generation(const KvCache& kv, int64_t prompt, int64_t generated, const Reanalyse& at);

// The cache's bytes after a generation for any S and G: bytes_per_token * (S + G - 1); invalid without a
// cache or where bytes_per_token is not a polynomial.
RationalPoly kv_bytes_end_formula(const KvCache& kv, const Generation& g);

// ---- the report's LLM section (--phase, --prompt/--generate; AnalysedReport::llm) ---------------------

// What a user asked for: a phase, or a generation (prompt and generate both >= 1; no phase then).
struct LlmRequest {
  Phase phase = Phase::None;
  int64_t prompt = -1, generate = -1;  // -1: not given
  bool generation() const { return prompt >= 0 || generate >= 0; }
  bool any() const { return phase != Phase::None || generation(); }
};

// A request checked against the model: the cache (found with the dims unbound), the bindings the phase adds
// to the user's dims, and the report's note. Throws UsageError (with the CLI's wording: --phase, --generate,
// --dim) where a user dim contradicts a binding, prompt or generate is below 1 or comes alone, a phase comes
// with a generation, or a generation is asked of a model with neither a cache nor a token input.
struct LlmPlan {
  LlmRequest request;
  // The cache; for a generation without one, a KvCache with no pairs, no past_dim, found_by "none" and the
  // token axis as seq_dim. bytes_per_token at the user's dims.
  std::optional<KvCache> kv;
  // What the phase binds (appended to the user's dims).
  std::vector<std::pair<std::string, int64_t>> bindings;
  std::string note;  // describe_phase's line ("" without a phase)
};
LlmPlan plan_llm(const Model& unbound, const LlmRequest& req,
                 const std::vector<std::pair<std::string, int64_t>>& user_dims);

// The section a report carries (JSON key "llm", README: LLM phases): the phase, the cache (nullopt without
// one: kv->pairs is never empty), and with a generation its totals.
struct LlmSection {
  Phase phase = Phase::None;
  std::optional<KvCache> kv;
  std::optional<Generation> generation;
};
// `at` reanalyses with extra bindings over the user's dims (for the generation's steps).
std::shared_ptr<const LlmSection> llm_section(const LlmPlan& plan, const Reanalyse& at);

const char* phase_name(Phase p);  // "prefill", "decode", "" for None

}  // namespace flopwise
