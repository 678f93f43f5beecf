// src/report/poly_text.h — the writers' memo of symbolic counts' text.
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
  // Appends what Shape::str writes ("batchx3x224x224", "(seq + 1)x64", "*", "scalar").
  void append_shape(std::string& out, const Shape& s) {
    if (!s.rank_known) {
      out += '*';
      return;
    }
    if (s.dims.empty()) {
      out += "scalar";
      return;
    }
    for (size_t i = 0; i < s.dims.size(); ++i) {
      if (i) out += 'x';
      const Dim& d = s.dims[i];
      if (d.is_known()) {
        out += std::to_string(d.value());
      } else if (!d.is_symbolic()) {
        out += '?';
      } else if (d.terms().size() > 1) {
        out += '(';
        out += dim_text(d);
        out += ')';
      } else {
        out += dim_text(d);
      }
    }
  }

 private:
  std::unordered_map<const void*, std::pair<Dim, std::string>> memo_;
};

}  // namespace flopwise
