// src/aten/aten_foreach.cc — aten's _foreach_* ops (the fused optimizers' steps: SGD's _foreach_add_, Adam's
// _foreach_mul_, _foreach_addcmul_, _foreach_addcdiv_, _foreach_lerp_, _foreach_sqrt): each tensor of the
// list lowered as the op on one tensor is (Add, Mul, Div, Sqrt ...), so a list of N tensors costs the sum of
// N elementwise ops. The second operand is a tensor list, a scalar, a scalar list or one tensor.
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>

#include "aten_table.h"

namespace flopwise {
namespace {

using Node = AtenNode;

// How each element is computed: a binary op against the second argument, a unary op, or a fused form.
enum class ForeachForm { Binary, Unary, Addcmul, Addcdiv, Lerp };
struct ForeachOp {
  const char* aten;  // without "aten::" and the in-place '_'
  ForeachForm form;
  const char* onnx;  // Binary and Unary: the op per element
};
constexpr ForeachOp kForeachOps[] = {
    {"_foreach_add", ForeachForm::Binary, "Add"},
    {"_foreach_sub", ForeachForm::Binary, "Sub"},
    {"_foreach_mul", ForeachForm::Binary, "Mul"},
    {"_foreach_div", ForeachForm::Binary, "Div"},
    {"_foreach_maximum", ForeachForm::Binary, "Max"},
    {"_foreach_minimum", ForeachForm::Binary, "Min"},
    {"_foreach_pow", ForeachForm::Binary, "Pow"},
    {"_foreach_sqrt", ForeachForm::Unary, "Sqrt"},
    {"_foreach_neg", ForeachForm::Unary, "Neg"},
    {"_foreach_exp", ForeachForm::Unary, "Exp"},
    {"_foreach_log", ForeachForm::Unary, "Log"},
    {"_foreach_abs", ForeachForm::Unary, "Abs"},
    {"_foreach_reciprocal", ForeachForm::Unary, "Reciprocal"},
    {"_foreach_sigmoid", ForeachForm::Unary, "Sigmoid"},
    {"_foreach_sign", ForeachForm::Unary, "Sign"},
    {"_foreach_addcmul", ForeachForm::Addcmul, ""},  // self + value * t1 * t2
    {"_foreach_addcdiv", ForeachForm::Addcdiv, ""},  // self + value * t1 / t2
    {"_foreach_lerp", ForeachForm::Lerp, ""},        // self + weight * (end - self)
};

// Argument `k` for list element `i`: the i-th tensor of a list, the i-th scalar of a scalar list, or the one
// tensor or scalar every element shares; -1 when absent or not known.
int operand(AtenLowerer& L, const Node* n, size_t k, size_t i) {
  if (n->inputs().size() <= k) return -1;
  const JV& j = L.in(n, k);
  if (j.kind == JV::List) return j.items && i < j.items->size() ? L.as_ir((*j.items)[i]) : -1;
  if (j.kind == JV::Known && j.iv.isDoubleList())  // a recorded Scalar[]: one per tensor
    return i < j.iv.toDoubleVector().size() ? L.const_float(j.iv.toDoubleVector()[i]) : -1;
  if (j.kind == JV::Known && j.iv.isIntList())
    return i < j.iv.toIntVector().size() ? L.const_float(static_cast<double>(j.iv.toIntVector()[i])) : -1;
  if (auto v = L.known_num(j)) return L.const_float(*v);
  return L.as_ir(j);
}

class ForeachEmitter {
 public:
  ForeachEmitter(AtenLowerer& L, const Node* n)
      : L_(L), prefix_("foreach" + std::to_string(reinterpret_cast<uintptr_t>(n)) + "_") {}
  int op(const std::string& onnx, const std::vector<int>& ins) {
    for (int x : ins)
      if (x < 0) return -1;
    return L_.emit(onnx, ins, {prefix_ + std::to_string(k_++)})[0];
  }

 private:
  AtenLowerer& L_;
  std::string prefix_;
  int k_ = 0;
};

// value * a, skipped when value is the constant 1 (or absent).
int scaled(AtenLowerer& L, ForeachEmitter& e, const Node* n, size_t k, size_t i, int a) {
  if (n->inputs().size() <= k) return a;
  if (auto v = L.known_num(L.in(n, k)); v && *v == 1.0) return a;
  return e.op("Mul", {a, operand(L, n, k, i)});
}

template <size_t row>  // kForeachOps[row] is the op's
bool lower_foreach(AtenLowerer& L, const Node* n, const std::string&) {
  const ForeachOp* f = &kForeachOps[row];
  const JV& self = L.in(n, 0);
  // An empty list: the profiler recorded no shapes for it (traces keep a TensorList's as []): not priced.
  if (self.kind != JV::List || !self.items || self.items->empty()) return false;
  ForeachEmitter e(L, n);
  for (size_t i = 0; i < self.items->size(); ++i) {
    const int x = L.as_ir((*self.items)[i]);
    int r = -1;
    switch (f->form) {
      case ForeachForm::Unary:
        r = e.op(f->onnx, {x});
        break;
      case ForeachForm::Binary: {  // add/sub's alpha scales the second operand
        int b = operand(L, n, 1, i);
        if (n->inputs().size() > 2 && b >= 0) b = scaled(L, e, n, 2, i, b);
        r = e.op(f->onnx, {x, b});
        break;
      }
      case ForeachForm::Addcmul:
      case ForeachForm::Addcdiv: {
        int t =
            e.op(f->form == ForeachForm::Addcmul ? "Mul" : "Div", {operand(L, n, 1, i), operand(L, n, 2, i)});
        r = t < 0 ? -1 : e.op("Add", {x, scaled(L, e, n, 3, i, t)});
        break;
      }
      case ForeachForm::Lerp: {
        int d = e.op("Sub", {operand(L, n, 1, i), x});
        r = d < 0 ? -1 : e.op("Add", {x, e.op("Mul", {d, operand(L, n, 2, i)})});
        break;
      }
    }
    if (r < 0) return false;
  }
  return true;
}

template <size_t... row>
void add_foreach(AtenTable& t, std::index_sequence<row...>) {
  (t.add(kForeachOps[row].aten, lower_foreach<row>), ...);
}

}  // namespace

void register_aten_foreach(AtenTable& t) {
  add_foreach(t, std::make_index_sequence<std::size(kForeachOps)>());
}

}  // namespace flopwise
