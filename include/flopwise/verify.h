// include/flopwise/verify.h — `flopwise run --verify`: the shapes an execution saw, op by op, against the
// static analysis of the same file.
// Owns: pairing executed ops with the importer's source ops (Model::source_ops) scope by scope, by name in
// order (the most pairs, then the most that agree, so an op that never ran does not shift the pairing onto
// a neighbour of the same name), and comparing every tensor argument's and result's shape. Sees no LibTorch.
// A shape that differs is a disagreement (the check fails); an executed op with no static counterpart is
// listed but not a failure: TorchScript's own ops (aten::Int, aten::tensor) call aten ops (aten::item,
// aten::to) the saved graph does not name.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "flopwise/ir.h"

namespace flopwise {

struct VerifyResult {
  int64_t executed = 0;        // executed top-level ops with a tensor argument or result (one forward)
  int64_t matched = 0;         // of those, paired with a static op
  int64_t shapes_checked = 0;  // tensor shapes compared
  int64_t unknown_static = 0;  // tensor shapes the static analysis left unknown (not compared)
  std::vector<std::string> disagreements;  // one line each: a shape that differs
  std::vector<std::string> unmatched;      // executed ops the static analysis has no counterpart for
  bool ok() const { return disagreements.empty(); }
};

// `ops`: the runtime's recorded ops (flopwise.runtime/1 "verify.ops"); the first iteration is compared.
// `m`: the static model after infer_shapes.
VerifyResult verify_shapes(const Model& m, const nlohmann::json& ops);

}  // namespace flopwise
