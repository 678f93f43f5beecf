// shape_inference/ops.cc — flopwise/ops.h: the op registry, built once from the families listed in
// ops/families.def, and the work kinds' names.
#include "flopwise/ops.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace flopwise {

#define FLOPWISE_FAMILY(name) void register_##name##_ops(OpRegistry&);
#include "ops/families.def"

const OpRegistry& OpRegistry::instance() {
  static const OpRegistry registry = [] {
    OpRegistry r;
#define FLOPWISE_FAMILY(name) \
  r.family_ = #name;          \
  register_##name##_ops(r);
#include "ops/families.def"
    r.assign_kinds();
    r.check_unrecorded();
    return r;
  }();
  return registry;
}

std::string_view work_kind_name(WorkKind k) {
  static constexpr std::string_view names[] = {
#define FLOPWISE_KIND_NAME(name, doc) #name,
      FLOPWISE_WORK_KINDS(FLOPWISE_KIND_NAME)
#undef FLOPWISE_KIND_NAME
  };
  return names[static_cast<size_t>(k)];
}

std::string_view work_kind_doc(WorkKind k) {
  static constexpr std::string_view docs[] = {
#define FLOPWISE_KIND_DOC(name, doc) doc,
      FLOPWISE_WORK_KINDS(FLOPWISE_KIND_DOC)
#undef FLOPWISE_KIND_DOC
  };
  return docs[static_cast<size_t>(k)];
}

// Each record's WorkKind: its family's (ops/kinds.def FAMILY_KIND), or the op's own OP_KIND row.
// A family or op row naming nothing registered is a mistake in the table and throws.
void OpRegistry::assign_kinds() {
  struct Row {
    std::string_view name;
    WorkKind kind;
  };
  static constexpr Row families[] = {
#define FAMILY_KIND(family, kind) {#family, WorkKind::kind},
#include "ops/kinds.def"
  };
  static constexpr Row ops[] = {
#define OP_KIND(op, kind) {#op, WorkKind::kind},
#include "ops/kinds.def"
  };
  for (const Row& f : families) {
    bool used = false;
    for (auto& rec : records_)
      if (rec.family == f.name) rec.kind = f.kind, used = true;
    if (!used) throw std::logic_error("kinds.def: no op of family " + std::string(f.name));
  }
  for (const auto& rec : records_)
    if (std::none_of(std::begin(families), std::end(families),
                     [&](const Row& f) { return f.name == rec.family; }))
      throw std::logic_error("kinds.def: family " + std::string(rec.family) + " has no kind");
  for (const Row& o : ops) {
    bool used = false;
    for (auto& rec : records_)
      if (rec.name == o.name) rec.kind = o.kind, used = true;
    if (!used) throw std::logic_error("kinds.def: no op " + std::string(o.name));
  }
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
  auto& same = by_name_[r.name];
  for (size_t i : same)
    if (records_[i].domain == r.domain && overlaps(records_[i], r))
      throw std::logic_error("op " + std::string(r.name) +
                             " registered twice for overlapping opset versions");
  same.push_back(records_.size());
  records_.push_back(r);
  records_.back().family = family_;
}

void OpRegistry::set_train(std::string_view domain, std::string_view name, const TrainFacts& facts) {
  bool set = false;
  if (auto it = by_name_.find(name); it != by_name_.end())
    for (size_t i : it->second)
      if (records_[i].domain == domain) records_[i].train = facts, set = true;
  if (!set)
    throw std::logic_error("training facts for op " + std::string(name) + ", which is not registered");
}

void OpRegistry::set_weights(std::string_view domain, std::string_view name, const WeightFacts& facts) {
  bool set = false;
  if (auto it = by_name_.find(name); it != by_name_.end())
    for (size_t i : it->second)
      if (records_[i].domain == domain) records_[i].weights = facts, set = true;
  if (!set) throw std::logic_error("weight facts for op " + std::string(name) + ", which is not registered");
}

void OpRegistry::add_unrecorded_weights(std::string_view domain, std::string_view name,
                                        const WeightFacts& facts) {
  if (weights(domain, name))
    throw std::logic_error("unrecorded weight facts for op " + std::string(name) +
                           ", which has them already");
  unrecorded_.push_back({domain, name, facts});
}

void OpRegistry::check_unrecorded() const {
  for (const Unrecorded& u : unrecorded_)
    if (find(u.domain, u.name, 0))
      throw std::logic_error("unrecorded weight facts for op " + std::string(u.name) +
                             ", which is registered");
}

const WeightFacts* OpRegistry::weights(std::string_view domain, std::string_view name) const {
  if (domain == "ai.onnx") domain = "";
  if (const OpRecord* r = find(domain, name, 0)) return &r->weights;
  for (const Unrecorded& u : unrecorded_)
    if (u.domain == domain && u.name == name) return &u.weights;
  return nullptr;
}

const WeightFacts* OpRegistry::weights_in_any_domain(std::string_view name) const {
  if (auto it = by_name_.find(name); it != by_name_.end() && !it->second.empty())
    return &records_[it->second.front()].weights;
  for (const Unrecorded& u : unrecorded_)
    if (u.name == name) return &u.weights;
  return nullptr;
}

const OpRecord* OpRegistry::find(std::string_view domain, std::string_view name, int opset) const {
  if (domain == "ai.onnx") domain = "";
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return nullptr;
  for (size_t i : it->second) {
    const OpRecord& r = records_[i];
    if (r.domain != domain) continue;
    if (opset > 0 && (opset < r.since_version || (r.until_version && opset > r.until_version))) continue;
    return &r;
  }
  return nullptr;
}

}  // namespace flopwise
