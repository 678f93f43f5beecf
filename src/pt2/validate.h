// src/pt2/validate.h — the checks a read program passes before anything lowers it.
// Owns: validate_program (definitions before uses, one definition per value, graph outputs and signature
// naming defined values, tensor values for every tensor) and the ordering of torch 2.1's signature maps.
#pragma once

#include <string>

#include "pt2/program.h"

namespace flopwise::pt2 {

// Throws InputError (one line naming the graph, node and value) where the program breaks the schema's
// rules. The graph must be in topological order as serialized: a node reading a value defined only by a
// later node is refused (an out-of-order graph and a cycle are not told apart).
void validate_program(const Program& p, const std::string& label);

// torch 2.1's signature maps, read in no particular order, as specs in the order of the graph's inputs
// and outputs.
void order_legacy_signature(Program& p);

}  // namespace flopwise::pt2
