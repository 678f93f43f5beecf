// flopwise/llm.h — language-model phases from the exported graph itself (issue 13): the KV cache found by
// structure, prefill and decode bindings, KV-cache bytes per token, and a generation's totals.
// Owns: nothing of the counting; it binds dims and re-reads reports the analysis already produced.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <ostream>
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

// A polynomial with rational coefficients (a generation's totals sum decode steps: S(S-1)/2 and the like),
// in the model's dims and the generation's S (prompt) and G (generated tokens). Exact; empty when a sum could
// not be formed (a coefficient past 64 bits, a floor or min/max in the step's formula).
class RationalPoly {
 public:
  struct Coef {
    __int128 num = 0, den = 1;  // den > 0, gcd 1
  };
  using Monomial = std::vector<std::string>;  // sorted symbols, repeated for powers
  bool valid = false;
  std::map<Monomial, Coef> terms;
  static RationalPoly of(const Dim& d);  // invalid for unknown dims and derived atoms
  static RationalPoly symbol(const std::string& s);
  static RationalPoly constant(int64_t num, int64_t den = 1);
  RationalPoly operator+(const RationalPoly& o) const;
  RationalPoly operator*(const RationalPoly& o) const;
  // Sum over j = 0 .. n-1 of this polynomial with `var` replaced by `start + j` (`n`, `start` polynomials).
  RationalPoly sum_shifted(const std::string& var, const RationalPoly& start, const RationalPoly& n) const;
  RationalPoly renamed(const std::string& from, const std::string& to) const;
  // The value at the bindings; nullopt when a symbol is unbound or the value is not an integer in range.
  std::optional<int64_t> eval(const std::vector<std::pair<std::string, int64_t>>& at) const;
  std::string str() const;  // "128*G^2*batch + 1/2*S*batch + ...", "?" when invalid
};

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
};
// A decoder without a cache: its token sequence's dim (axis 1 of the first integer input of rank 2, the
// `input_ids [batch, seq]` of every exporter), "" when there is none. generation() then takes a KvCache with
// no pairs, no past_dim and this seq_dim: each step is a forward over the whole prefix (seq = S, S + 1, ...).
std::string sequence_dim(const Model& model);

// `at(dims)` analyses the model with extra bindings and returns its report (the caller's pins apply), as
// run_sweep's reanalyse does.
using Reanalyse = std::function<Report(const std::vector<std::pair<std::string, int64_t>>&)>;
Generation generation(const KvCache& kv, int64_t prompt, int64_t generated, const Reanalyse& at);

std::string format_generation(const KvCache& kv, const Generation& g);

// The cache's bytes after a generation for any S and G: bytes_per_token * (S + G - 1); invalid without a
// cache or where bytes_per_token is not a polynomial.
RationalPoly kv_bytes_end_formula(const KvCache& kv, const Generation& g);

// ---- the report's LLM section (--phase, --prompt/--generate; Report::llm) -----------------------------

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

// The section as summary rows (label, value) for the markdown and HTML reports: the phase, the cache's bytes
// per token, and a generation's tokens, totals and final cache.
std::vector<std::pair<std::string, std::string>> llm_summary_rows(const LlmSection& llm);

// ---- attention conventions --------------------------------------------------------------------------

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

// A mixture-of-experts layer found from its router: a TopK (k of E) or ArgMax (1 of E) over the router's
// E scores, and the E sibling scopes (the experts) under the router's scope or one of its two parents.
struct MoeLayer {
  std::string router;  // the TopK/ArgMax node
  std::string scope;   // the experts' parent scope ("layers.0.mlp")
  std::vector<std::string> experts;  // the expert scopes
  int64_t top_k = 0;
  Count params, macs, flops;                     // all experts of the layer together
  Count one_params, one_macs, one_flops;         // each expert's (unknown where they differ)
};
struct MoeSummary {
  std::vector<MoeLayer> layers;
  int64_t experts = 0, top_k = 0;   // when every layer has the same; else 0
  Count total_params, activated_params;  // activated: all but the experts the router does not pick
  Count total_macs, activated_macs, total_flops, activated_flops;  // at the graph's own shapes
  bool dense = true;  // every expert runs on every token in the graph (equal expert costs)
};
// Mixture-of-experts layers of an analysed model; nullptr when it has none.
std::shared_ptr<const MoeSummary> find_moe(const Model& model, const Report& report);
void write_moe_text(std::ostream& os, const MoeSummary& moe);

}  // namespace flopwise
