// src/aten/aten_datadep.cc — aten ops whose output size depends on tensor contents: nonzero (argwhere),
// nonzero_numpy and one-argument where, masked_select, boolean-mask indexing (x[mask], through
// aten_tensor.cc's index), unique (_unique, _unique2, unique_dim) and unique_consecutive. Each becomes the
// ONNX op torch.onnx exports (NonZero, Compress, Unique; unique_consecutive the flopwise-domain
// UniqueConsecutive), marked with the stem and source op of the size it makes: the shape pass names that size
// `<stem>_<n>` (flopwise/infer.h, DataDepSymbol), or counts it where the contents are known.
#include "aten_table.h"

namespace flopwise {
namespace {

using Node = AtenNode;

// The attributes that name a data-dependent size after its source op.
Attrs symbol_attrs(const std::string& stem, const Node* n, Attrs more = {}) {
  more["flopwise_symbol"] = as(stem);
  more["flopwise_source"] = as(n->kind);
  return more;
}

// nonzero(self) / argwhere(self): [n, rank], ONNX NonZero's [rank, n] transposed.
bool lower_nonzero(AtenLowerer& L, const Node* n, const std::string&) {
  int x = L.as_ir(L.in(n, 0));
  if (x < 0) return false;
  int nz = L.emit_tmp(n->output(), "nonzero", "NonZero", {x}, symbol_attrs("nonzero", n));
  L.emit_to(n->output(), "Transpose", {nz}, {{"perm", ais({1, 0})}});
  return true;
}

// Boolean-mask selection of `self` by `mask` at dim `p` (x[mask], x[:, mask]): the mask's k dims flattened
// into one, then Compress along it: [self.shape[:p], count, self.shape[p+k:]].
bool lower_mask_select_at(AtenLowerer& L, const Node* n, int self, int mask, int64_t p) {
  auto k = L.known_rank(JV::of_ir(mask));
  if (!k || *k < 1) return false;
  Attrs attrs = symbol_attrs("masked", n, {{"axis", ai(p)}});
  if (*k == 1) {
    L.emit_to(n->output(), "Compress", {self, mask}, std::move(attrs));
    return true;
  }
  auto r = L.known_rank(JV::of_ir(self));
  if (!r || *r < p + *k) return false;
  std::vector<int> parts;
  if (p > 0)
    parts.push_back(L.emit_tmp(n->output(), "lead", "Shape", {self}, {{"start", ai(0)}, {"end", ai(p)}}));
  parts.push_back(L.const_ints({-1}));
  if (p + *k < *r)
    parts.push_back(L.emit_tmp(n->output(), "trail", "Shape", {self}, {{"start", ai(p + *k)}}));
  int target =
      parts.size() == 1 ? parts[0] : L.emit_tmp(n->output(), "target", "Concat", parts, {{"axis", ai(0)}});
  int flat = L.emit_tmp(n->output(), "flat", "Reshape", {self, target});
  int m = L.emit_tmp(n->output(), "mask", "Reshape", {mask, L.const_ints({-1})});
  L.emit_to(n->output(), "Compress", {flat, m}, std::move(attrs));
  return true;
}

// masked_select(self, mask): the elements of self and mask broadcast together where the mask is true, 1-D.
bool lower_masked_select(AtenLowerer& L, const Node* n, const std::string&) {
  int x = L.as_ir(L.in(n, 0)), mask = L.as_ir(L.in(n, 1));
  if (x < 0 || mask < 0) return false;
  const Shape &xs = L.facts(x).shape, &ms = L.facts(mask).shape;
  bool same = xs.rank_known && ms.rank_known && xs.rank() == ms.rank();
  for (size_t i = 0; same && i < xs.rank(); ++i) same = xs.dims[i].same_as(ms.dims[i]);
  if (!same) {  // broadcast each to the other's shape (Expand broadcasts both ways)
    int x2 = L.emit_tmp(n->output(), "self", "Expand",
                        {x, L.emit_tmp(n->output(), "mask_shape", "Shape", {mask})});
    mask = L.emit_tmp(n->output(), "mask", "Expand",
                      {mask, L.emit_tmp(n->output(), "self_shape", "Shape", {x})});
    x = x2;
  }
  int m = L.emit_tmp(n->output(), "mask_flat", "Reshape", {mask, L.const_ints({-1})});
  L.emit_to(n->output(), "Compress", {x, m}, symbol_attrs("masked_select", n));
  return true;
}

// nonzero_numpy(self) / where(condition): one 1-D index tensor per dim of self, rows of ONNX NonZero.
bool lower_nonzero_numpy_impl(AtenLowerer& L, const Node* n) {
  int x = L.as_ir(L.in(n, 0));
  auto r = L.known_rank(L.in(n, 0));
  if (x < 0 || !r) return false;
  int nz = L.emit_tmp(n->output(), "nonzero", "NonZero", {x}, symbol_attrs("nonzero", n));
  std::vector<JV> items;
  for (int64_t i = 0; i < *r; ++i)
    items.push_back(JV::of_ir(
        L.emit_tmp(n->output(), std::to_string(i), "Gather", {nz, L.const_int(i)}, {{"axis", ai(0)}})));
  L.set(n->output(), JV::list(std::move(items)));
  return true;
}

// _unique(self, sorted, return_inverse), _unique2(self, sorted, return_inverse, return_counts),
// unique_dim(self, dim, sorted, return_inverse, return_counts), unique_consecutive(self, return_inverse,
// return_counts, dim?), unique_dim_consecutive(self, dim, return_inverse, return_counts): (values, inverse,
// counts). An inverse or counts not asked for is an empty tensor, as torch returns it; without a dim the
// inverse has self's shape.
enum class UniqueOp : uint8_t { unique, unique2, unique_dim, unique_consecutive, unique_dim_consecutive };
template <UniqueOp u>
bool lower_unique(AtenLowerer& L, const Node* n, const std::string&) {
  const bool consecutive = u == UniqueOp::unique_consecutive || u == UniqueOp::unique_dim_consecutive;
  int x = L.as_ir(L.in(n, 0));
  if (x < 0) return false;
  std::optional<int64_t> dim;
  size_t flags = 1;  // the first of (return_inverse, return_counts)
  if (u == UniqueOp::unique || u == UniqueOp::unique2) {
    flags = 2;
  } else if (u == UniqueOp::unique_dim || u == UniqueOp::unique_dim_consecutive) {
    dim = L.known_int(L.in(n, 1));
    if (!dim) return false;
    flags = u == UniqueOp::unique_dim ? 3 : 2;
  } else if (n->inputs().size() > 3 && !AtenLowerer::is_none(L.in(n, 3))) {  // unique_consecutive's dim
    dim = L.known_int(L.in(n, 3));
    if (!dim) return false;
  }
  auto flag = [&](size_t i) -> std::optional<int64_t> {
    return i < n->inputs().size() ? L.known_int(L.in(n, i)) : std::optional<int64_t>(0);
  };
  auto inverse = flag(flags), counts = u == UniqueOp::unique ? std::optional<int64_t>(0) : flag(flags + 1);
  if (!inverse || !counts) return false;
  Attrs attrs = symbol_attrs(consecutive ? "unique_consecutive" : "unique", n);
  if (dim) attrs["axis"] = ai(*dim);
  if (!consecutive) attrs["sorted"] = ai(1);
  const AtenValue* o = n->output(0);
  auto outs = L.emit(consecutive ? "UniqueConsecutive" : "Unique", {x},
                     {AtenLowerer::ir_name(o), L.tmp(o, "indices"), L.tmp(o, "inverse"), L.tmp(o, "counts")},
                     attrs, consecutive ? "flopwise" : "");
  L.set_ir(o, outs[0]);
  auto empty = [&] { return L.const_value(DType::Int64, Shape({Dim(0)}), ConstData{}); };
  if (n->outputs().size() > 1) {
    int inv = outs[2];
    if (*inverse && !dim)
      inv = L.emit_tmp(n->output(1), "inverse", "Reshape",
                       {inv, L.emit_tmp(n->output(1), "shape", "Shape", {x})});
    L.set_ir(n->output(1), *inverse ? inv : empty());
  }
  if (n->outputs().size() > 2) L.set_ir(n->output(2), *counts ? outs[3] : empty());
  return true;
}

}  // namespace

// Shared with the families whose names these ops overload: where (aten_elementwise.cc) and index
// (aten_tensor.cc). Both declared there.
bool lower_nonzero_numpy(AtenLowerer& L, const AtenNode* n) { return lower_nonzero_numpy_impl(L, n); }
bool lower_mask_index(AtenLowerer& L, const AtenNode* n, int self, int mask, int64_t axis) {
  return lower_mask_select_at(L, n, self, mask, axis);
}

void register_aten_datadep(AtenTable& t) {
  t.add({"nonzero", "argwhere"}, lower_nonzero);
  t.add("nonzero_numpy",
        [](AtenLowerer& L, const AtenNode* n, const std::string&) { return lower_nonzero_numpy_impl(L, n); });
  t.add("masked_select", lower_masked_select);
  t.add("_unique", lower_unique<UniqueOp::unique>);
  t.add("_unique2", lower_unique<UniqueOp::unique2>);
  t.add("unique_dim", lower_unique<UniqueOp::unique_dim>);
  t.add("unique_consecutive", lower_unique<UniqueOp::unique_consecutive>);
  t.add("unique_dim_consecutive", lower_unique<UniqueOp::unique_dim_consecutive>);
}

}  // namespace flopwise
