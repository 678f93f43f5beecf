// src/writers/llm_text.cc — the text of the LLM analyses (flopwise/writers.h): a generation's summary for
// the text report, the LLM rows of markdown and HTML, the mixture-of-experts section.
#include <sstream>

#include "flopwise/llm.h"
#include "flopwise/moe.h"
#include "flopwise/writers.h"

namespace flopwise {

std::string format_generation(const Generation& g) {
  const KvCache& kv = g.kv;
  std::string s;
  std::ostringstream os;
  auto line = [&os](const std::string& k, const std::string& v) { summary_line(os, k, v); };
  s += "----------------------------- Generation ------------------------------------\n";
  line("prompt / generated tokens",
       std::to_string(g.prompt) + " / " + std::to_string(g.generated) + " (prefill yields the first; " +
           std::to_string(std::max<int64_t>(g.generated - 1, 0)) + " decode steps)");
  if (kv.past_dim.empty()) {
    line("KV cache", "none: each decode step is a forward over the whole prefix (" + kv.seq_dim + " = " +
                         std::to_string(g.prompt + 1) + " .. " + std::to_string(g.prompt + g.generated - 1) +
                         ")");
  } else {
    line("KV cache bytes per token",
         human(kv.bytes_per_token) + "B (" + kv.bytes_per_token.as_dim().str() + ")");
    line("KV cache bytes at the end", human(g.kv_bytes_end) + "B");
  }
  line("prefill MACs / FLOPs", human(g.prefill_macs) + " / " + human(g.prefill_flops));
  auto formula = [](const Count& c) { return c.known || c.symbolic() ? c.as_dim().str() : std::string("?"); };
  line("decode step MACs (" + (kv.past_dim.empty() ? kv.seq_dim + " = the prefix" : kv.past_dim + " cached") +
           ")",
       formula(g.step_macs));
  line("decode step FLOPs", formula(g.step_flops));
  line("decode MACs / FLOPs (all steps)", human(g.decode_macs) + " / " + human(g.decode_flops));
  line("total MACs / FLOPs", human(g.total_macs) + " / " + human(g.total_flops));
  line("total memory bytes (read + written)", human(g.total_bytes));
  // The same totals for any prompt S and any G generated tokens (G >= 1), summed in closed form.
  line("total MACs, any S and G", g.total_macs_formula.str());
  line("total FLOPs, any S and G", g.total_flops_formula.str());
  line("total bytes, any S and G", g.total_bytes_formula.str());
  if (!kv.past_dim.empty()) line("KV cache bytes at the end, any S and G", kv_bytes_end_formula(kv, g).str());
  return s + os.str();
}

std::vector<std::pair<std::string, std::string>> llm_summary_rows(const LlmSection& llm) {
  // "1.54 KB (1536)"; a polynomial as written ("512*batch bytes"); "unknown".
  auto bytes = [](const Count& c) {
    return c.known        ? human(c) + "B (" + std::to_string(c.v) + ")"
           : c.symbolic() ? c.as_dim().str() + " bytes"
                          : human(c);
  };
  std::vector<std::pair<std::string, std::string>> rows;
  if (llm.phase != Phase::None) rows.push_back({"LLM phase", phase_name(llm.phase)});
  if (llm.kv) rows.push_back({"KV cache bytes per token", bytes(llm.kv->bytes_per_token)});
  if (llm.generation) {
    const Generation& g = *llm.generation;
    rows.push_back({"generation: prompt / generated tokens",
                    std::to_string(g.prompt) + " / " + std::to_string(g.generated)});
    rows.push_back({"generation: total MACs / FLOPs", human(g.total_macs) + " / " + human(g.total_flops)});
    rows.push_back({"generation: total memory bytes", bytes(g.total_bytes)});
    if (llm.kv) rows.push_back({"generation: KV cache bytes at the end", bytes(g.kv_bytes_end)});
  }
  return rows;
}

void write_moe_text(std::ostream& os, const MoeSummary& moe) {
  os << "\n------------------------------ Mixture of experts ----------------------------\n";
  std::string what =
      std::to_string(moe.layers.size()) + " layer(s), " +
      (moe.experts ? "top-" + std::to_string(moe.top_k) + " of " + std::to_string(moe.experts) + " experts"
                   : std::string("varying experts / top-k"));
  summary_line(os, "MoE layers",
               what + " (router '" + moe.layers.front().router + "', experts under '" +
                   moe.layers.front().scope + "')");
  summary_line(os, "params: total / activated per token",
               human(moe.total_params) + " / " + human(moe.activated_params));
  summary_line(os, "fwd MACs: total / at activated experts",
               human(moe.total_macs) + " / " + (moe.dense ? human(moe.activated_macs) : "?"));
  summary_line(os, "fwd FLOPs: total / at activated experts",
               human(moe.total_flops) + " / " + (moe.dense ? human(moe.activated_flops) : "?"));
  os << (moe.dense ? "  the graph runs every expert on every token (the total); activated counts the "
                     "router's top-k\n"
                   : "  the experts run on the tokens the router picks at run time (data-dependent sizes, or "
                     "experts of "
                     "different costs): MACs and FLOPs at the activated experts are not known statically\n");
}

}  // namespace flopwise
