// src/ir/string_arena.cc — StringArena: see flopwise/string_arena.h.
#include "flopwise/string_arena.h"

#include <cstring>

namespace flopwise {

namespace {
constexpr size_t kBlock = 64 * 1024;
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
  if (auto it = interned_.find(s); it != interned_.end()) return *it;
  std::string_view v = add(s);
  interned_.insert(v);
  return v;
}

}  // namespace flopwise
