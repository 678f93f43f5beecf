// src/writers/tables.cc — see tables.h.
#include "tables.h"

namespace flopwise {

void write_markdown_table(std::ostream& os, const Table& t, const std::vector<bool>& right) {
  for (size_t r = 0; r < t.size(); ++r) {
    os << "|";
    for (const auto& cell : t[r]) os << " " << cell << " |";
    os << "\n";
    if (r == 0) {
      os << "|";
      for (size_t c = 0; c < t[r].size(); ++c) os << (c < right.size() && right[c] ? " ---: |" : " --- |");
      os << "\n";
    }
  }
}

}  // namespace flopwise
