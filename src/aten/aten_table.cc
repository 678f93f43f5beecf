// src/aten/aten_table.cc — see aten_table.h.
#include "aten_table.h"

#include <algorithm>
#include <stdexcept>

namespace flopwise {

void AtenTable::add(const std::string& op, AtenLowering fn) {
  if (!by_name_.emplace(op, fn).second) throw std::logic_error("aten::" + op + " registered twice");
}

AtenLowering AtenTable::find(const std::string& op) const {
  auto it = by_name_.find(op);
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<std::string> AtenTable::names() const {
  std::vector<std::string> r;
  for (const auto& [k, v] : by_name_) r.push_back(k);
  std::sort(r.begin(), r.end());
  return r;
}

const AtenTable& aten_table() {
  static const AtenTable table = [] {
    AtenTable t;
#define FLOPWISE_REGISTER_FAMILY(f) register_aten_##f(t);
    FLOPWISE_ATEN_FAMILIES(FLOPWISE_REGISTER_FAMILY)
#undef FLOPWISE_REGISTER_FAMILY
    return t;
  }();
  return table;
}

}  // namespace flopwise
