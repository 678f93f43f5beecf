// include/flopwise/limits.h — resource bounds on what an input can make the tool build (README: Limits).
// Owns: the bounds' defaults and their environment overrides. Every rule that grows a structure from a
// model's contents (inlining, polynomials, ranks, folded contents) consults these, so that no small file
// makes the tool use unbounded time or memory.
#pragma once

#include <cstdint>

namespace flopwise {

struct Limits {
  // Nodes added by inlining model-local functions (calls nest: 2 calls per level, 30 levels, are 2^30
  // nodes). Past it the import fails (exit 2). FLOPWISE_MAX_INLINED_NODES.
  int64_t max_inlined_nodes = 1000000;
  // Terms of one symbolic dim or count, and symbols in one of its monomials x 64. Past it the dim (and the
  // cost built from it) is unknown, with a warning. FLOPWISE_MAX_POLY_TERMS.
  int64_t max_poly_terms = 4096;
  // Rank of a tensor. A larger rank (declared, or computed: a Reshape to a 20 M-element shape tensor)
  // becomes unknown rank. FLOPWISE_MAX_RANK.
  int64_t max_rank = 64;
  // Elements of a tensor whose contents the shape pass keeps and folds (shape arithmetic). Larger tensors
  // keep no contents. FLOPWISE_MAX_CONST_ELEMENTS.
  int64_t max_const_elements = 4096;
  // Levels of a module scope path (the report's tree depth; at most 4096). Deeper levels are cut, with a
  // warning: a node name of 10,000 '/'-separated parts would make a tree, and a JSON report, that grows
  // with the square of its depth. FLOPWISE_MAX_SCOPE_DEPTH.
  int64_t max_scope_depth = 256;
};

// The bounds in effect: the defaults above, each replaced by its environment variable when that holds a
// positive integer (read once, at the first call).
const Limits& limits();
// Replaces the bounds (tests; a program that sets its own).
void set_limits(const Limits& l);

// The default time limit, in seconds, of one TorchScript archive load (its __setstate__ code runs, and may
// loop): 8 s, plus 1 s for every 16 MiB of the archive (its tensors are read and unpickled). A file of a few
// KB is stopped after 8 s; from 384 MiB on, an archive gets at least the 20 s + 1 s per 32 MiB it had before
// (a 5 GB archive 328 s). FLOPWISE_LOAD_TIMEOUT_S replaces it (src/cli/contain.cc).
int64_t default_load_timeout_s(int64_t archive_bytes);

// How many times a symbolic result exceeded max_poly_terms and was made unknown (process-wide), so that
// the caller can warn once per analysis.
int64_t poly_limit_hits();
void note_poly_limit_hit();

}  // namespace flopwise
