// flopwise/llm_impl.h — the template part of flopwise/llm.h (included from it; not for direct use).
#pragma once

namespace flopwise {

template <class F>
Generation generation(const KvCache& kv, int64_t prompt, int64_t generated, const F& at) {
  Generation g;
  g.prompt = prompt;
  g.generated = generated;
  const Report pre = at(std::vector<std::pair<std::string, int64_t>>{{kv.past_dim, 0}, {kv.seq_dim, prompt}});
  g.prefill_macs = pre.totals.macs;
  g.prefill_flops = pre.totals.flops;
  g.prefill_bytes = pre.totals.memory_bytes;
  if (pre.totals.uncounted) g.prefill_macs = g.prefill_flops = g.prefill_bytes = Count::unknown();
  // One decode step as a formula in the cached length, then its values at each past length, summed.
  const Report step = at(std::vector<std::pair<std::string, int64_t>>{{kv.seq_dim, 1}});
  g.decode_step_macs = step.totals.uncounted ? "?" : step.totals.macs.as_dim().str();
  g.decode_step_flops = step.totals.uncounted ? "?" : step.totals.flops.as_dim().str();
  auto sum_steps = [&](const Count& per_step) {
    if (step.totals.uncounted || !per_step.exact()) return Count::unknown();
    Count total;
    const Dim d = per_step.as_dim();
    for (int64_t j = 0; j + 1 < generated; ++j) total += Count::of(d.substitute({{kv.past_dim, prompt + j}}));
    return total;
  };
  g.decode_macs = sum_steps(step.totals.macs);
  g.decode_flops = sum_steps(step.totals.flops);
  g.decode_bytes = sum_steps(step.totals.memory_bytes);
  g.total_macs = g.prefill_macs + g.decode_macs;
  g.total_flops = g.prefill_flops + g.decode_flops;
  g.total_bytes = g.prefill_bytes + g.decode_bytes;
  g.kv_bytes_end = kv.bytes_per_token * Count{prompt + std::max<int64_t>(generated, 1) - 1};
  return g;
}

}  // namespace flopwise
