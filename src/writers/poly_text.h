// src/writers/poly_text.h — the writers' memo of symbolic counts' text.
#pragma once

#include <string>
#include <unordered_map>
#include <utility>

#include "flopwise/dim.h"
#include "flopwise/ir.h"

namespace flopwise {

// Text of symbolic dims (polynomials), formatted once per polynomial: a model's repeated layers have equal,
// shared symbolic costs (build_report hash-conses them), so a writer would format the same one for every
// node and scope. Keyed by Dim::poly_id; each entry keeps its polynomial alive, so an address cannot be
// reused by another polynomial while the memo lives.
class PolyTextMemo {
 public:
  template <class Format>  // std::string(const Dim&)
  const std::string& get(const Dim& d, Format format) {
    auto [it, fresh] = memo_.try_emplace(d.poly_id());
    if (fresh) it->second = {d, format(d)};
    return it->second.second;
  }
  // A symbolic dim's text (Dim::str), once per polynomial.
  const std::string& dim_text(const Dim& d) {
    return get(d, [](const Dim& x) { return x.str(); });
  }
  // Shape::str's text, each symbolic dim's formatted once.
  void append_shape(std::string& out, const Shape& s) {
    s.append_str(out, [this](const Dim& d) -> const std::string& { return dim_text(d); });
  }

 private:
  std::unordered_map<const void*, std::pair<Dim, std::string>> memo_;
};

}  // namespace flopwise
