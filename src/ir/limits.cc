// src/ir/limits.cc — see flopwise/limits.h.
#include "flopwise/limits.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>

namespace flopwise {

namespace {
int64_t env_or(const char* name, int64_t dflt) {
  const char* s = std::getenv(name);
  if (!s || !*s) return dflt;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s, &end, 10);
  return (*end == '\0' && errno == 0 && v > 0) ? v : dflt;
}
Limits from_env() {
  Limits l;
  l.max_inlined_nodes = env_or("FLOPWISE_MAX_INLINED_NODES", l.max_inlined_nodes);
  l.max_poly_terms = env_or("FLOPWISE_MAX_POLY_TERMS", l.max_poly_terms);
  l.max_rank = env_or("FLOPWISE_MAX_RANK", l.max_rank);
  l.max_const_elements = env_or("FLOPWISE_MAX_CONST_ELEMENTS", l.max_const_elements);
  l.max_scope_depth = std::min<int64_t>(env_or("FLOPWISE_MAX_SCOPE_DEPTH", l.max_scope_depth), 4096);
  return l;
}
Limits& current() {
  static Limits l = from_env();
  return l;
}
std::atomic<int64_t> g_poly_hits{0};
}  // namespace

const Limits& limits() { return current(); }
void set_limits(const Limits& l) { current() = l; }
int64_t default_load_timeout_s(int64_t archive_bytes) {
  return 8 + (std::max<int64_t>(archive_bytes, 0) >> 24);
}
int64_t poly_limit_hits() { return g_poly_hits.load(std::memory_order_relaxed); }
void note_poly_limit_hit() { g_poly_hits.fetch_add(1, std::memory_order_relaxed); }

}  // namespace flopwise
