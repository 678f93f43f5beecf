// include/flopwise/string_arena.h — the characters of many short strings, in a few large blocks.
// Owns: StringArena (a report's node names, op types, scopes and output names; cost.h's Report::strings).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace flopwise {

// Copies strings into 64 KiB blocks and hands out views of the copies: a report of a 100 k-node model
// makes a few dozen allocations for its names instead of several per node, and a view is 16 bytes where a
// std::string is 32 plus its heap block. The views stay valid for the arena's lifetime, moves included
// (the blocks never move). Not copyable: a copy's views would still point into the original.
class StringArena {
 public:
  StringArena() = default;
  StringArena(StringArena&&) noexcept = default;
  StringArena& operator=(StringArena&&) noexcept = default;
  StringArena(const StringArena&) = delete;
  StringArena& operator=(const StringArena&) = delete;

  std::string_view add(std::string_view s);     // a copy of s ("" costs nothing)
  std::string_view intern(std::string_view s);  // one copy per distinct string (op types, scope paths)

 private:
  // The interned strings: open addressing over a power-of-two table at most half full, each slot a view and
  // its hash (a readers' intern is mostly a hit: one cheap hash, one probe, one compare).
  struct Slot {
    const char* data = nullptr;  // nullptr: empty
    size_t size = 0;
    uint64_t hash = 0;
  };
  void grow();

  std::vector<std::unique_ptr<char[]>> blocks_;
  char* next_ = nullptr;  // free space in the newest block
  size_t left_ = 0;
  std::vector<Slot> slots_;
  size_t interned_ = 0;  // slots in use
};

}  // namespace flopwise
