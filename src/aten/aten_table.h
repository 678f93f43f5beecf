// src/aten/aten_table.h — the aten op table: op name (without "aten::" and without the in-place
// suffix "_"; a library op by its full name, "_C::rms_norm") -> lowering. One lowering per name; families
// register themselves through the one explicit list below (a name registered twice is an error at start-up).
// Adding an op touches its family's file.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "flopwise/aten_lower.h"

namespace flopwise {

// Lowers aten node `n` (`op`: its name, in-place suffix removed); false when it cannot (an argument not
// known at import), and the node is then listed as unsupported.
using AtenLowering = bool (*)(AtenLowerer& L, const AtenNode* n, const std::string& op);

class AtenTable {
 public:
  void add(const std::string& op, AtenLowering fn);  // throws std::logic_error on a duplicate
  void add(std::initializer_list<const char*> ops, AtenLowering fn) {
    for (const char* op : ops) add(op, fn);
  }
  AtenLowering find(const std::string& op) const;
  std::vector<std::string> names() const;  // sorted

 private:
  std::unordered_map<std::string, AtenLowering> by_name_;
};

const AtenTable& aten_table();

// The families, listed once: each defines register_aten_<family>(AtenTable&) in aten_<family>.cc.
#define FLOPWISE_ATEN_FAMILIES(X) \
  X(elementwise)                  \
  X(tensor)                       \
  X(reduce)                       \
  X(nn)                           \
  X(rnn)                          \
  X(attention)                    \
  X(loss)                         \
  X(foreach)                      \
  X(datadep)                      \
  X(serving)                      \
  X(views)

#define FLOPWISE_DECLARE_FAMILY(f) void register_aten_##f(AtenTable& t);
FLOPWISE_ATEN_FAMILIES(FLOPWISE_DECLARE_FAMILY)
#undef FLOPWISE_DECLARE_FAMILY

// Lowerings of aten_datadep.cc that other families' op names reach: where(condition), one argument, is
// nonzero_numpy (aten_elementwise.cc); x[mask] with a boolean mask at dim `axis` (aten_tensor.cc's index).
bool lower_nonzero_numpy(AtenLowerer& L, const AtenNode* n);
bool lower_mask_index(AtenLowerer& L, const AtenNode* n, int self, int mask, int64_t axis);

}  // namespace flopwise
