// src/ir/string_arena.cc — StringArena: see flopwise/string_arena.h.
#include "flopwise/string_arena.h"

#include <algorithm>
#include <cstring>

namespace flopwise {

namespace {
constexpr size_t kBlock = 64 * 1024;

// A fast hash of short text: eight bytes at a time, each mixed in by a multiply (FxHash's step), the tail as
// one more (overlapping) word, then the bits spread (splitmix64's finaliser) so that the table's low bits
// depend on every byte.
uint64_t arena_hash(std::string_view s) {
  constexpr uint64_t kMul = 0x517cc1b727220a95ULL;
  auto mix = [](uint64_t h, uint64_t w) { return (((h << 5) | (h >> 59)) ^ w) * kMul; };
  const char* p = s.data();
  const size_t n = s.size();
  uint64_t h = n, w = 0;
  if (n >= 8) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      std::memcpy(&w, p + i, 8);
      h = mix(h, w);
    }
    if (i < n) std::memcpy(&w, p + n - 8, 8), h = mix(h, w);
  } else if (n >= 4) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + n - 4, 4);
    h = mix(h, lo | static_cast<uint64_t>(hi) << 32);
  } else if (n > 0) {
    auto byte = [&](size_t i) { return static_cast<uint64_t>(static_cast<unsigned char>(p[i])); };
    h = mix(h, byte(0) | byte(n / 2) << 8 | byte(n - 1) << 16);
  }
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}
}  // namespace

std::string_view StringArena::add(std::string_view s) {
  if (s.empty()) return "";  // not {}: a view with data, like every other the arena hands out
  if (s.size() > left_) {
    if (s.size() > kBlock / 4) {  // a long string gets a block of its own; the current block stays open
      blocks_.emplace_back(new char[s.size()]);  // not zeroed: only what is copied is touched
      std::memcpy(blocks_.back().get(), s.data(), s.size());
      return {blocks_.back().get(), s.size()};
    }
    blocks_.emplace_back(new char[kBlock]);
    next_ = blocks_.back().get();
    left_ = kBlock;
  }
  std::memcpy(next_, s.data(), s.size());
  std::string_view v(next_, s.size());
  next_ += s.size();
  left_ -= s.size();
  return v;
}

std::string_view StringArena::intern(std::string_view s) {
  if (s.empty()) return "";
  if (2 * (interned_ + 1) > slots_.size()) grow();
  const uint64_t h = arena_hash(s);
  const size_t mask = slots_.size() - 1;
  size_t i = h & mask;
  for (; slots_[i].data; i = (i + 1) & mask) {
    const Slot& e = slots_[i];
    if (e.hash == h && e.size == s.size() && std::memcmp(e.data, s.data(), s.size()) == 0)
      return {e.data, e.size};
  }
  std::string_view v = add(s);
  slots_[i] = Slot{v.data(), v.size(), h};
  ++interned_;
  return v;
}

void StringArena::grow() {
  std::vector<Slot> old(std::max<size_t>(64, 2 * slots_.size()));
  old.swap(slots_);
  const size_t mask = slots_.size() - 1;
  for (const Slot& e : old) {
    if (!e.data) continue;
    size_t i = e.hash & mask;
    while (slots_[i].data) i = (i + 1) & mask;
    slots_[i] = e;
  }
}

}  // namespace flopwise
