// tests/test_string_arena.cc — StringArena (flopwise/string_arena.h): the report's node names live in it as
// views, so every view must keep its characters for the arena's lifetime, across block boundaries and moves.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "flopwise/string_arena.h"

using flopwise::StringArena;

TEST_CASE("string arena: copies, interned copies, empty strings") {
  StringArena a;
  std::string src = "/features/features.1/attn/MatMul";
  std::string_view v1 = a.add(src), v2 = a.add(src);
  src.assign(src.size(), 'x');  // the views hold copies, not the caller's characters
  CHECK(v1 == "/features/features.1/attn/MatMul");
  CHECK(v2 == v1);
  CHECK(v1.data() != v2.data());  // add copies every time
  std::string_view i1 = a.intern("MatMul"), i2 = a.intern(std::string("Mat") + "Mul");
  CHECK(i1 == "MatMul");
  CHECK(i1.data() == i2.data());  // intern copies once
  CHECK(a.add("").empty());
  CHECK(a.add("").data() != nullptr);  // writers may memcpy from it
  CHECK(a.intern("").empty());
  CHECK(a.intern(std::string_view()).data() != nullptr);
}

TEST_CASE("string arena: views stay valid across blocks, a long string and a move") {
  StringArena a;
  std::vector<std::pair<std::string, std::string_view>> kept;
  // 10,000 names of ~40 bytes: several 64 KiB blocks.
  for (int i = 0; i < 10000; ++i) {
    std::string s = "/model/layers." + std::to_string(i) + "/self_attn/q_proj/MatMul";
    kept.emplace_back(s, a.add(s));
  }
  const std::string long_one(100000, 'L');  // larger than a block: a block of its own
  std::string_view long_view = a.add(long_one);
  std::string_view after = a.add("after the long one");
  StringArena moved = std::move(a);
  for (const auto& [s, v] : kept) REQUIRE(v == s);
  CHECK(long_view == long_one);
  CHECK(after == "after the long one");
  CHECK(moved.intern("x") == "x");
}

TEST_CASE("string arena: interning through the table's growth, every length the hash reads differently") {
  StringArena a;
  std::vector<std::pair<std::string, std::string_view>> kept;
  // 5,000 distinct texts of 1 to 40 bytes (the hash reads 1-3, 4-7 and 8+ bytes each its own way): the table
  // grows many times; texts that differ only in their last byte or in length must stay apart.
  for (int i = 0; i < 5000; ++i) {
    std::string s = std::string(static_cast<size_t>(i % 40), 'a') + static_cast<char>('A' + i / 40 % 26);
    s += std::to_string(i / 1040);
    kept.emplace_back(s, a.intern(s));
  }
  for (const auto& [s, v] : kept) {
    REQUIRE(v == s);
    CHECK(a.intern(std::string(s)).data() == v.data());  // a second intern is the first copy
  }
  for (size_t i = 1; i < kept.size(); ++i) CHECK(kept[i].second.data() != kept[i - 1].second.data());
  StringArena moved = std::move(a);
  CHECK(moved.intern(kept[123].first).data() == kept[123].second.data());  // the table moves with the arena
}
