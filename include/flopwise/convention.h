// flopwise/convention.h — counting conventions (--convention): how a node's convention-free work becomes
// the FLOP figure a tool reports. Owns: the preset table (src/cost/conventions.def), lookup by name, a
// node's FLOPs and an op's formula text under a convention.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "flopwise/dim.h"
#include "flopwise/ops.h"

namespace flopwise {

struct Convention {
  std::string_view name;
  int64_t per_mac = 2;   // FLOPs per MAC of a contraction
  int64_t per_rest = 1;  // weight of the rest of the work, as the default convention counts it (0 or 1)
  std::string_view reproduces, flop_means;
};

const std::vector<Convention>& conventions();
const Convention& default_convention();
// The convention called `name`; throws UsageError naming the known ones.
const Convention& find_convention(const std::string& name);

// A node's FLOPs under `conv`, from its cost rule's result (MACs and default-convention FLOPs).
Count convention_flops(const Convention& conv, const OpCost& cost);
// An op's formula under `conv`, from the rule's default-convention formula text.
std::string convention_formula(const Convention& conv, const OpRecord& rec);

}  // namespace flopwise
