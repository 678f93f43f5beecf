// src/writers/tables.h — the markdown table the writers share (diffs, checks): a header row, its
// alignment row, the body; cells are written as given.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace flopwise {

using Table = std::vector<std::vector<std::string>>;  // row 0 is the header

// `right[c]`: column c is right-aligned (" ---: |"); else left (" --- |"). Missing entries are left.
void write_markdown_table(std::ostream& os, const Table& t, const std::vector<bool>& right);

}  // namespace flopwise
