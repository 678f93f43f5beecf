// src/aten/aten_known.cc — Known (flopwise/aten_lower.h): values known at import, without LibTorch.
#include "flopwise/aten_lower.h"

namespace flopwise {

Known Known::of_bool(bool b) {
  Known x = with_kind(Kind::Bool);
  x.i_ = b ? 1 : 0;
  return x;
}
Known Known::of_int(int64_t i) {
  Known x = with_kind(Kind::Int);
  x.i_ = i;
  return x;
}
Known Known::of_double(double d) {
  Known x = with_kind(Kind::Double);
  x.d_ = d;
  return x;
}
Known Known::of_string(std::string s, Kind k) {
  Known x = with_kind(k);
  x.s_ = std::move(s);
  return x;
}
Known Known::of_ints(std::vector<int64_t> xs) {
  Known x = with_kind(Kind::Ints);
  x.ints_ = std::move(xs);
  return x;
}
Known Known::of_doubles(std::vector<double> xs) {
  Known x = with_kind(Kind::Doubles);
  x.doubles_ = std::move(xs);
  return x;
}
Known Known::of_bools(std::vector<bool> xs) {
  Known x = with_kind(Kind::Bools);
  x.bools_ = std::move(xs);
  return x;
}
Known Known::of_tuple(std::vector<Known> xs) {
  Known x = with_kind(Kind::Tuple);
  x.items_ = std::make_shared<const std::vector<Known>>(std::move(xs));
  return x;
}
Known Known::of_tensor(TensorConst t) {
  Known x = with_kind(Kind::Tensor);
  x.tensor_ = std::make_shared<const TensorConst>(std::move(t));
  return x;
}

const std::vector<Known>& Known::items() const {
  static const std::vector<Known> kNone;
  return items_ ? *items_ : kNone;
}

std::optional<std::vector<Known>> Known::elements() const {
  std::vector<Known> r;
  switch (kind_) {
    case Kind::Tuple:
      return items();
    case Kind::Ints:
      for (auto v : ints_) r.push_back(of_int(v));
      return r;
    case Kind::Doubles:
      for (auto v : doubles_) r.push_back(of_double(v));
      return r;
    case Kind::Bools:
      for (bool v : bools_) r.push_back(of_bool(v));
      return r;
    default:
      return std::nullopt;
  }
}

}  // namespace flopwise
