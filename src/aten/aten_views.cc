// src/aten/aten_views.cc — views that reorder or hide dims without moving data: numpy_T (every dim
// reversed: transformers' Falcon writes `weight.T`), mT / mH / adjoint / matrix_H (the last two dims
// swapped), and torch.vmap's batch dims as a pre-dispatch export records them (transformers' mask functions):
// _add_batch_dim hides a dim from the ops inside the vmap, _remove_batch_dim puts it back at the vmap's size.
#include <cstdint>
#include <string>
#include <vector>

#include "aten_table.h"

namespace flopwise {
namespace {

using Node = AtenNode;

// numpy_T(self): Transpose with no perm, which reverses the dims as torch's .T does.
bool lower_numpy_t(AtenLowerer& L, const Node* n, const std::string&) {
  int x = L.as_ir(L.in(n, 0));
  if (x < 0) return false;
  L.emit_to(n->output(), "Transpose", {x});
  return true;
}

// mT(self) and its conjugating twins (real tensors only here): the last two dims swapped.
bool lower_matrix_t(AtenLowerer& L, const Node* n, const std::string&) {
  int x = L.as_ir(L.in(n, 0));
  if (x < 0) return false;
  L.emit_to(n->output(), "TransposeDims", {x}, {{"dim0", ai(-2)}, {"dim1", ai(-1)}}, "flopwise");
  return true;
}

// _add_batch_dim(self, batch_dim, level): inside the vmap the ops see self without dim batch_dim. A
// one-element slice of that dim, squeezed: the shape the ops inside see, no arithmetic.
bool lower_add_batch_dim(AtenLowerer& L, const Node* n, const std::string&) {
  const JV& x = L.in(n, 0);
  auto dim = L.known_int(L.in(n, 1));
  auto rank = L.known_rank(x);
  if (!dim || !rank || *dim < -*rank || *dim >= *rank) return false;
  const int64_t d = *dim < 0 ? *dim + *rank : *dim;
  const AtenValue* o = n->output();
  int one =
      L.emit_tmp(o, "one", "Slice", {L.as_ir(x), L.const_ints({0}), L.const_ints({1}), L.const_ints({d})});
  L.emit_to(o, "Squeeze", {one, L.const_ints({d})});
  return true;
}

// _remove_batch_dim(self, level, batch_size, out_dim): self with a dim of batch_size put back at out_dim
// (an unsqueeze broadcast to the vmap's size).
bool lower_remove_batch_dim(AtenLowerer& L, const Node* n, const std::string&) {
  const JV& x = L.in(n, 0);
  auto out_dim = L.known_int(L.in(n, 3));
  auto rank = L.known_rank(x);
  if (!out_dim || !rank || *out_dim < 0 || *out_dim > *rank) return false;
  std::vector<JV> target(static_cast<size_t>(*rank + 1), JV::known(Known::of_int(1)));
  target[static_cast<size_t>(*out_dim)] = L.in(n, 2);
  int sizes = L.pack_ints(JV::list(std::move(target)));
  if (sizes < 0) return false;
  const AtenValue* o = n->output();
  int widened = L.emit_tmp(o, "unsqueeze", "Unsqueeze", {L.as_ir(x), L.const_ints({*out_dim})});
  L.emit_to(o, "Expand", {widened, sizes});
  return true;
}

}  // namespace

void register_aten_views(AtenTable& t) {
  t.add("numpy_T", lower_numpy_t);
  t.add({"mT", "mH", "adjoint", "matrix_H"}, lower_matrix_t);
  t.add("torch._functorch.predispatch::_add_batch_dim", lower_add_batch_dim);
  t.add("torch._functorch.predispatch::_remove_batch_dim", lower_remove_batch_dim);
}

}  // namespace flopwise
