// src/cost/convention.cc — see flopwise/convention.h.
#include "flopwise/convention.h"

#include "flopwise/errors.h"

namespace flopwise {

const std::vector<Convention>& conventions() {
  static const std::vector<Convention> all = {
#define CONVENTION(name, per_mac, per_rest, reproduces, means) {#name, per_mac, per_rest, reproduces, means},
#include "conventions.def"
#undef CONVENTION
  };
  return all;
}

const Convention& default_convention() { return conventions().front(); }

const Convention& find_convention(const std::string& name) {
  std::string known;
  for (const auto& c : conventions()) {
    if (c.name == name) return c;
    known += (known.empty() ? "" : ", ") + std::string(c.name);
  }
  throw UsageError("unknown convention '" + name + "' (known: " + known + ")");
}

Count convention_flops(const Convention& conv, const OpCost& cost) {
  Count mac_part = cost.macs * Count{conv.per_mac};
  if (conv.per_rest == 0) return mac_part;
  if (conv.per_mac == 2 && conv.per_rest == 1) return cost.flops;  // the default convention itself
  // rest = default FLOPs - 2 x MACs (what the default adds beyond the contractions).
  Count rest = cost.flops - cost.macs * Count{2};
  return mac_part + rest * Count{conv.per_rest};
}

std::string convention_formula(const Convention& conv, const OpRecord& rec) {
  std::string f(rec.formula);
  if (conv.per_mac == 2 && conv.per_rest == 1) return f;
  std::string macs = conv.per_mac == 1 ? "MACs" : std::to_string(conv.per_mac) + "*MACs";
  if (conv.per_rest == 0) return macs + " only, 0 without a contraction (default counts: " + f + ")";
  return macs + " + " + std::to_string(conv.per_rest) + " x the rest (default counts: " + f + ")";
}

}  // namespace flopwise
