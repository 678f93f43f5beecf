#include <stdexcept>
#include <string>

#include "flopwise/ops.h"

namespace flopwise {

#define FLOPWISE_FAMILY(name) void register_##name##_ops(OpRegistry&);
#include "ops/families.def"
#undef FLOPWISE_FAMILY

const OpRegistry& OpRegistry::instance() {
  static const OpRegistry registry = [] {
    OpRegistry r;
#define FLOPWISE_FAMILY(name) register_##name##_ops(r);
#include "ops/families.def"
#undef FLOPWISE_FAMILY
    return r;
  }();
  return registry;
}

static bool overlaps(const OpRecord& a, const OpRecord& b) {
  int a_hi = a.until_version ? a.until_version : 1 << 30;
  int b_hi = b.until_version ? b.until_version : 1 << 30;
  return a.since_version <= b_hi && b.since_version <= a_hi;
}

void OpRegistry::add(const OpRecord& r) {
  if (!r.infer || !r.cost || r.formula.empty())
    throw std::logic_error("op record " + std::string(r.name) +
                           " lacks a shape function, cost function or formula");
  auto& same = by_name_[std::string(r.domain) + "::" + std::string(r.name)];
  for (size_t i : same)
    if (overlaps(records_[i], r))
      throw std::logic_error("op " + std::string(r.name) +
                             " registered twice for overlapping opset versions");
  same.push_back(records_.size());
  records_.push_back(r);
}

const OpRecord* OpRegistry::find(std::string_view domain, std::string_view name, int opset) const {
  if (domain == "ai.onnx") domain = "";
  auto it = by_name_.find(std::string(domain) + "::" + std::string(name));
  if (it == by_name_.end()) return nullptr;
  for (size_t i : it->second) {
    const OpRecord& r = records_[i];
    if (opset > 0 && (opset < r.since_version || (r.until_version && opset > r.until_version))) continue;
    return &r;
  }
  return nullptr;
}

}  // namespace flopwise
