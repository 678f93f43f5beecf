// src/import/onnx_types.cc — a ValueInfoProto's element type and shape (onnx_wire.h), with dim_params read as
// names or as the dim expressions Hugging Face Optimum writes.
#include <algorithm>
#include <cctype>

#include "onnx_wire.h"

namespace flopwise::onnx_detail {

namespace {

// A dim_param: a name ("batch"), or an expression of names and integers as Hugging Face Optimum writes
// them ("past_sequence_length + sequence_length", "past_sequence_length + 1", "2*seq"): operators between
// spaces, '*' also without. Anything else is one name, as written.
Dim dim_of_param(const std::string& p) {
  std::vector<std::string> tok;
  for (size_t i = 0; i < p.size();) {
    if (p[i] == ' ') {
      ++i;
      continue;
    }
    size_t j = p.find(' ', i);
    tok.push_back(p.substr(i, j == std::string::npos ? std::string::npos : j - i));
    i = j == std::string::npos ? p.size() : j;
  }
  if (tok.size() < 3 || tok.size() % 2 == 0) {
    if (tok.size() != 1 || p.find('*') == std::string::npos) return Dim::symbol(p);
  }
  auto ident = [](const std::string& s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    for (char c : s)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
    return true;
  };
  auto product = [&](const std::string& s, Dim* out) {  // a*b*3
    Dim r(1);
    size_t i = 0;
    while (i <= s.size()) {
      size_t j = s.find('*', i);
      std::string f = s.substr(i, j == std::string::npos ? std::string::npos : j - i);
      if (!f.empty() &&
          std::all_of(f.begin(), f.end(),
                      [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
          f.size() < 18)
        r = r * Dim(std::stoll(f));
      else if (ident(f))
        r = r * Dim::symbol(f);
      else
        return false;
      if (j == std::string::npos) break;
      i = j + 1;
    }
    *out = r;
    return !r.is_unknown();
  };
  Dim sum;
  if (!product(tok[0], &sum)) return Dim::symbol(p);
  for (size_t k = 1; k + 1 < tok.size(); k += 2) {
    Dim term;
    if ((tok[k] != "+" && tok[k] != "-") || !product(tok[k + 1], &term)) return Dim::symbol(p);
    sum = tok[k] == "+" ? sum + term : sum - term;
  }
  return sum.is_unknown() ? Dim::symbol(p) : sum;
}

}  // namespace

std::pair<DType, Shape> type_of(const onnx::ValueInfoProto& vi) {
  // Optional(tensor) carries the tensor's type; a sequence keeps only its element type (the IR has
  // no sequence type: the shape of one element is not the value's shape).
  const onnx::TypeProto* t = vi.has_type() ? &vi.type() : nullptr;
  if (t && t->has_optional_type()) t = &t->optional_type().elem_type();
  if (t && t->has_sequence_type()) {
    const auto& e = t->sequence_type().elem_type();
    return {e.has_tensor_type() ? static_cast<DType>(e.tensor_type().elem_type()) : DType::Undefined,
            Shape()};
  }
  if (!t || !t->has_tensor_type()) return {DType::Undefined, Shape()};
  const auto& tt = t->tensor_type();
  auto dt = static_cast<DType>(tt.elem_type());
  if (!tt.has_shape() || tt.shape().dim_size() > limits().max_rank)
    return {dt, Shape()};  // past it: unknown rank
  std::vector<Dim> dims;
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value())
      dims.push_back(Dim(d.dim_value()));
    else if (d.has_dim_param() && !d.dim_param().empty())
      dims.push_back(dim_of_param(d.dim_param()));
    else
      dims.push_back(Dim::unknown());
  }
  return {dt, Shape(dims)};
}

}  // namespace flopwise::onnx_detail
