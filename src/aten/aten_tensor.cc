// src/aten/aten_tensor.cc — aten tensor ops: views and layout (reshape, flatten, permute, squeeze, cat,
// split, pad, roll, flip), indexing (select, slice, index, index_put, gather), creation (arange, zeros,
// new_*, *_like, fill, copy) and casts (reductions: aten_reduce.cc). Layout ops cost 0 FLOPs, as their ONNX
// equivalents.
#include <algorithm>
#include <climits>
#include <cmath>

#include "aten_table.h"

namespace flopwise {
namespace {

using Node = AtenNode;

// A normalised dim of a tensor whose rank the shape pass knows (negative dims count from the end).
std::optional<int64_t> norm_dim(AtenLowerer& L, const JV& x, const JV& dim) {
  auto d = L.known_int(dim);
  if (!d) return std::nullopt;
  if (*d >= 0) return d;
  auto r = L.known_rank(x);
  if (!r) return std::nullopt;
  return *d + *r;
}

Attribute tensor_value(DType t, double v) {
  Attribute a;
  a.kind = Attribute::Kind::Tensor;
  a.tensor.dtype = t;
  a.tensor.dims = {1};
  ConstData d;
  if (is_float(t)) {
    d.is_float = true;
    d.floats = {v};
  } else {
    d.ints = {Dim(static_cast<int64_t>(v))};
  }
  a.tensor.data = d;
  return a;
}

// The dtype of a creation op: its dtype argument, else `like`'s dtype, else float32.
DType creation_dtype(AtenLowerer& L, const Node* n, const JV* like) {
  if (JV* dt = L.arg(n, "dtype"))
    if (auto st = L.known_int(*dt))
      if (auto t = dtype_of_scalar_type(*st)) return *t;
  if (like && (like->kind == JV::Tensor || like->kind == JV::ScalarIR)) {
    DType t = L.facts(like->ir).dtype;
    if (t != DType::Undefined) return t;
  }
  return DType::Float32;
}

bool lower_select(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() != 3) return false;
  auto dim = L.known_int(L.in(n, 1));
  if (!dim) return false;
  L.emit_to(n->output(), "Gather", {L.as_ir(L.in(n, 0)), L.as_ir(L.in(n, 2))}, {{"axis", ai(*dim)}});
  return true;
}

bool lower_slice(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() != 5) return false;
  auto dim = L.known_int(L.in(n, 1));
  if (!dim) return false;
  int start = AtenLowerer::is_none(L.in(n, 2)) ? L.const_ints({0}) : L.pack_ints(L.in(n, 2));
  int end = AtenLowerer::is_none(L.in(n, 3)) ? L.const_ints({INT64_MAX}) : L.pack_ints(L.in(n, 3));
  int step = AtenLowerer::is_none(L.in(n, 4)) ? L.const_ints({1}) : L.pack_ints(L.in(n, 4));
  if (start < 0 || end < 0 || step < 0) return false;
  L.emit_to(n->output(), "Slice", {L.as_ir(L.in(n, 0)), start, end, L.const_ints({*dim}), step});
  return true;
}

bool lower_narrow(AtenLowerer& L, const Node* n, const std::string&) {
  auto dim = L.known_int(L.in(n, 1));
  if (!dim) return false;
  int start = L.pack_ints(L.in(n, 2)), len = L.pack_ints(L.in(n, 3));
  if (start < 0 || len < 0) return false;
  int end = L.emit_tmp(n->output(), "end", "Add", {start, len});
  L.emit_to(n->output(), "Slice", {L.as_ir(L.in(n, 0)), start, end, L.const_ints({*dim})});
  return true;
}

// The target shape of view/reshape/expand: the sizes given, or another tensor's (view_as, expand_as, ...).
enum class ShapeArg : uint8_t { sizes, of_other };
template <ShapeArg arg>
bool lower_reshape(AtenLowerer& L, const Node* n, const std::string&) {
  int shape;
  if (arg == ShapeArg::of_other)
    shape = L.emit_tmp(n->output(), "shape", "Shape", {L.as_ir(L.in(n, 1))});
  else
    shape = L.pack_ints(L.in(n, 1));
  if (shape < 0) return false;
  L.emit_to(n->output(), "Reshape", {L.as_ir(L.in(n, 0)), shape});
  return true;
}

// flatten(x, start, end): shape[:start] ++ [-1] ++ shape[end+1:].
bool lower_flatten(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() != 3) return false;
  const JV& x = L.in(n, 0);
  auto s = norm_dim(L, x, L.in(n, 1)), e = norm_dim(L, x, L.in(n, 2));
  if (!s || !e) return false;
  auto rank = L.known_rank(x);
  if (*s == 1 && rank && *e == *rank - 1)
    return L.emit_to(n->output(), "Flatten", {x.ir}, {{"axis", ai(1)}}), true;
  const AtenValue* o = n->output();
  int sh = L.emit_tmp(o, "shape", "Shape", {x.ir});
  int head = L.emit_tmp(o, "head", "Slice", {sh, L.const_ints({0}), L.const_ints({*s})});
  int tail = L.emit_tmp(o, "tail", "Slice", {sh, L.const_ints({*e + 1}), L.const_ints({INT64_MAX})});
  int target = L.emit_tmp(o, "target", "Concat", {head, L.const_ints({-1}), tail}, {{"axis", ai(0)}});
  L.emit_to(o, "Reshape", {x.ir, target});
  return true;
}

// unflatten(x, dim, sizes): shape[:dim] ++ sizes ++ shape[dim+1:].
bool lower_unflatten(AtenLowerer& L, const Node* n, const std::string&) {
  const JV& x = L.in(n, 0);
  auto d = norm_dim(L, x, L.in(n, 1));
  int sizes = L.pack_ints(L.in(n, 2));
  if (!d || sizes < 0) return false;
  const AtenValue* o = n->output();
  int sh = L.emit_tmp(o, "shape", "Shape", {x.ir});
  int head = L.emit_tmp(o, "head", "Slice", {sh, L.const_ints({0}), L.const_ints({*d})});
  int tail = L.emit_tmp(o, "tail", "Slice", {sh, L.const_ints({*d + 1}), L.const_ints({INT64_MAX})});
  int target = L.emit_tmp(o, "target", "Concat", {head, sizes, tail}, {{"axis", ai(0)}});
  L.emit_to(o, "Reshape", {x.ir, target});
  return true;
}

bool lower_permute(AtenLowerer& L, const Node* n, const std::string&) {
  auto perm = L.known_ints(L.in(n, 1));
  if (!perm) return false;
  auto rank = L.known_rank(L.in(n, 0));
  for (auto& p : *perm) {
    if (p < 0 && !rank) return false;
    if (p < 0) p += *rank;
  }
  L.emit_to(n->output(), "Transpose", {L.as_ir(L.in(n, 0))}, {{"perm", ais(*perm)}});
  return true;
}

enum class TransposeOf : uint8_t { dims, matrix };  // transpose(x, d0, d1), t(x)
template <TransposeOf of>
bool lower_transpose(AtenLowerer& L, const Node* n, const std::string&) {
  int64_t a = 0, b = 1;
  if (of == TransposeOf::dims) {
    if (n->inputs().size() != 3) return false;
    auto x = L.known_int(L.in(n, 1)), y = L.known_int(L.in(n, 2));
    if (!x || !y) return false;
    a = *x;
    b = *y;
  } else if (auto r = L.known_rank(L.in(n, 0)); r && *r < 2) {
    return L.emit_to(n->output(), "Identity", {L.as_ir(L.in(n, 0))}), true;
  }
  L.emit_to(n->output(), "TransposeDims", {L.as_ir(L.in(n, 0))}, {{"dim0", ai(a)}, {"dim1", ai(b)}},
            "flopwise");
  return true;
}

bool lower_unsqueeze(AtenLowerer& L, const Node* n, const std::string&) {
  auto d = L.known_int(L.in(n, 1));
  if (!d) return false;
  L.emit_to(n->output(), "Unsqueeze", {L.as_ir(L.in(n, 0)), L.const_ints({*d})});
  return true;
}

bool lower_squeeze(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() == 1) return L.emit_to(n->output(), "Squeeze", {L.as_ir(L.in(n, 0))}), true;
  auto d = L.known_ints(L.in(n, 1));
  if (!d) return false;
  // torch squeezes a named dim only when it is 1 (else a no-op); ONNX requires 1: keep the dims that are.
  const JV& x = L.in(n, 0);
  if (L.known_rank(x)) {
    const Shape& s = L.facts(x.ir).shape;
    std::vector<int64_t> keep;
    for (auto k : *d) {
      int64_t a = k < 0 ? k + static_cast<int64_t>(s.rank()) : k;
      if (a < 0 || a >= static_cast<int64_t>(s.rank())) return false;
      if (s.dims[a].is_known() && s.dims[a].value() != 1) continue;
      keep.push_back(a);
    }
    if (keep.empty()) return L.emit_to(n->output(), "Identity", {x.ir}), true;
    *d = keep;
  }
  L.emit_to(n->output(), "Squeeze", {L.as_ir(x), L.const_ints(*d)});
  return true;
}

enum class JoinBy : uint8_t { concat, stack };
template <JoinBy by>
bool lower_cat(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() != 2 || L.in(n, 0).kind != JV::List) return false;
  auto dim = L.known_int(L.in(n, 1));
  if (!dim) return false;
  std::vector<int> ins;
  const AtenValue* o = n->output();
  for (const auto& it : *L.in(n, 0).items) {
    int x = L.as_ir(it);
    if (x < 0) return false;
    if (by == JoinBy::stack) x = L.emit_tmp(o, "unsqueeze", "Unsqueeze", {x, L.const_ints({*dim})});
    ins.push_back(x);
  }
  L.emit_to(o, "Concat", ins, {{"axis", ai(*dim)}});
  return true;
}

// split(x, size, dim) / chunk(x, chunks, dim) / split_with_sizes(x, sizes, dim) / unbind(x, dim): a list
// of tensors. Emitted as one Split with explicit sizes when the dim's size is known now; split/chunk of a
// dim not known yet stay pending until prim::ListUnpack says how many pieces.
enum class SplitOp : uint8_t { split, unsafe_split, chunk, split_with_sizes, unbind, tensor_split };
template <SplitOp kind>
bool lower_split(AtenLowerer& L, const Node* n, const std::string&) {
  const AtenValue* o = n->output();
  if (o->type.is_tensor()) return false;  // tensor_split etc.
  const JV& x = L.in(n, 0);
  if (x.kind != JV::Tensor) return false;
  auto d = norm_dim(L, x, L.in(n, kind == SplitOp::unbind ? 1 : 2));
  if (!d) return false;
  std::optional<int64_t> len;
  if (L.known_rank(x) && *d < static_cast<int64_t>(L.facts(x.ir).shape.rank())) {
    const Dim& dd = L.facts(x.ir).shape.dims[*d];
    if (dd.is_known()) len = dd.value();
  }
  std::vector<int64_t> sizes;
  if (kind == SplitOp::tensor_split) {
    // tensor_split(x, sections, dim): the first len % sections pieces one longer; (x, indices, dim): cut at
    // the indices. A tensor of indices or sections is data: not lowered.
    if (!len || n->input(1)->type.is_tensor()) return false;
    if (n->input(1)->type.is_list()) {
      auto cuts = L.known_ints(L.in(n, 1));
      if (!cuts) return false;
      int64_t at = 0;
      for (auto c : *cuts) {
        int64_t e = std::clamp<int64_t>(c < 0 ? c + *len : c, at, *len);
        sizes.push_back(e - at);
        at = e;
      }
      sizes.push_back(*len - at);
    } else {
      auto k = L.known_int(L.in(n, 1));
      if (!k || *k <= 0) return false;
      for (int64_t i = 0; i < *k; ++i) sizes.push_back(*len / *k + (i < *len % *k ? 1 : 0));
    }
  } else if (kind == SplitOp::split_with_sizes || (kind == SplitOp::split && n->input(1)->type.is_list())) {
    auto s = L.known_ints(L.in(n, 1));
    if (!s) return false;
    sizes = *s;
  } else if (len) {
    if (kind == SplitOp::unbind) {
      sizes.assign(static_cast<size_t>(*len), 1);
    } else {
      auto k = L.known_int(L.in(n, 1));
      if (!k || *k <= 0) return false;
      int64_t piece = kind == SplitOp::chunk ? (*len + *k - 1) / *k : *k;
      for (int64_t at = 0; at < *len; at += piece) sizes.push_back(std::min(piece, *len - at));
    }
  } else {
    if (kind == SplitOp::unbind) return false;
    auto k = L.known_int(L.in(n, 1));
    if (!k) return false;
    JV j;
    j.kind = JV::Split;
    j.ir = x.ir;
    j.split_size = *k;
    j.split_dim = *d;
    j.split_is_chunks = kind == SplitOp::chunk;
    L.set(o, j);
    return true;
  }
  std::vector<std::string> outs;
  for (size_t i = 0; i < sizes.size(); ++i) outs.push_back(L.tmp(o, std::to_string(i)));
  auto res = L.emit("Split", {x.ir, L.const_ints(sizes)}, outs, {{"axis", ai(*d)}});
  std::vector<JV> items;
  for (size_t i = 0; i < res.size(); ++i) {
    int r = res[i];
    if (kind == SplitOp::unbind)
      r = L.emit_tmp(o, std::to_string(i) + "/squeeze", "Squeeze", {r, L.const_ints({*d})});
    items.push_back(JV::of_ir(r));
  }
  L.set(o, JV::list(std::move(items)));
  return true;
}

// Casts: to(x, dtype...) / _to_copy, type_as(x, other), float(x) / long(x) / ...: a dtype fixed by the op.
enum class CastTo : uint8_t { dtype_arg, other, fixed };
template <CastTo to, DType fixed = DType::Undefined>
bool lower_to(AtenLowerer& L, const Node* n, const std::string&) {
  int x = L.as_ir(L.in(n, 0));
  if (x < 0) return false;
  std::optional<DType> t;
  if (to == CastTo::fixed) t = fixed;
  if (to == CastTo::other) {
    DType d = L.facts(L.as_ir(L.in(n, 1))).dtype;
    if (d != DType::Undefined) t = d;
  }
  if (JV* dt = to == CastTo::dtype_arg ? L.arg(n, "dtype") : nullptr)
    if (auto st = L.known_int(*dt)) t = dtype_of_scalar_type(*st);
  if (t) return L.emit_to(n->output(), "Cast", {x}, {{"to", ai(int64_t(*t))}}), true;
  L.emit_to(n->output(), "Identity", {x});
  return true;
}

template <ShapeArg arg>
bool lower_expand(AtenLowerer& L, const Node* n, const std::string&) {
  const AtenValue* o = n->output();
  int shape;
  if (arg == ShapeArg::of_other) {
    shape = L.emit_tmp(o, "shape", "Shape", {L.as_ir(L.in(n, 1))});
  } else if (auto k = L.known_ints(L.in(n, 1))) {
    for (auto& v : *k) v = v == -1 ? 1 : v;  // -1 keeps the dim: 1 broadcasts to it
    shape = L.const_ints(*k);
  } else if (L.in(n, 1).kind == JV::List) {
    std::vector<JV> items = *L.in(n, 1).items;
    for (auto& it : items)
      if (auto v = L.known_int(it); v && *v == -1) it = JV::known(Known::of_int(1));
    shape = L.pack_ints(JV::list(std::move(items)));
  } else {
    shape = L.pack_ints(L.in(n, 1));
  }
  if (shape < 0) return false;
  L.emit_to(o, "Expand", {L.as_ir(L.in(n, 0)), shape});
  return true;
}

// broadcast_tensors([x0, x1, ...]) -> [each xi expanded to the broadcast of all]: ONNX Expand broadcasts both
// ways, so expanding xi by every other input's shape in turn gives the common shape. Layout only.
bool lower_broadcast_tensors(AtenLowerer& L, const Node* n, const std::string&) {
  auto items = L.list_items(L.in(n, 0));
  if (!items) return false;
  std::vector<int> xs, shapes;
  for (const auto& it : *items) {
    int x = L.as_ir(it);
    if (x < 0) return false;
    xs.push_back(x);
  }
  const AtenValue* o = n->output();
  for (size_t j = 0; j < xs.size(); ++j)
    shapes.push_back(L.emit_tmp(o, std::to_string(j) + "/shape", "Shape", {xs[j]}));
  std::vector<JV> outs;
  for (size_t i = 0; i < xs.size(); ++i) {
    int e = xs[i];
    for (size_t j = 0; j < xs.size(); ++j)
      if (j != i)
        e = L.emit_tmp(o, std::to_string(i) + "/expand_" + std::to_string(j), "Expand", {e, shapes[j]});
    outs.push_back(JV::of_ir(e));
  }
  L.set(o, JV::list(std::move(outs)));
  return true;
}

// repeat(x, repeats): Tile, with leading axes added where repeats is longer than x's rank; repeats known or
// symbolic (a .pt2's sizes).
bool lower_repeat(AtenLowerer& L, const Node* n, const std::string&) {
  auto items = L.list_items(L.in(n, 1));
  auto rank = L.known_rank(L.in(n, 0));
  if (!items || !rank) return false;
  int x = L.as_ir(L.in(n, 0));
  const int64_t count = static_cast<int64_t>(items->size());
  if (count > *rank) {
    std::vector<int64_t> axes;
    for (int64_t k = 0; k < count - *rank; ++k) axes.push_back(k);
    x = L.emit_tmp(n->output(), "lead", "Unsqueeze", {x, L.const_ints(axes)});
  }
  int reps = L.pack_ints(L.in(n, 1));
  if (reps < 0) return false;
  L.emit_to(n->output(), "Tile", {x, reps});
  return true;
}

// repeat_interleave(x, repeats: int, dim): each element along dim repeated: Unsqueeze after dim, Tile,
// Reshape merging the two (torch.onnx's export). Without dim the flattened tensor; per-element repeats (a
// tensor of counts) are data: not lowered.
bool lower_repeat_interleave(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() < 3) return false;
  auto reps = L.known_int(L.in(n, 1));  // an int, or a one-element tensor whose value is known (a trace's)
  const AtenValue* o = n->output();
  int x = L.as_ir(L.in(n, 0));
  if (!reps || x < 0) return false;
  int64_t dim = 0;
  if (AtenLowerer::is_none(L.in(n, 2))) {
    x = L.emit_tmp(o, "flat", "Reshape", {x, L.const_ints({-1})});
  } else {
    auto d = norm_dim(L, L.in(n, 0), L.in(n, 2));
    if (!d) return false;
    dim = *d;
  }
  auto rank = L.known_rank(JV::of_ir(x));
  if (!rank) return false;
  int u = L.emit_tmp(o, "unsqueeze", "Unsqueeze", {x, L.const_ints({dim + 1})});
  std::vector<int64_t> tiles(static_cast<size_t>(*rank + 1), 1);
  tiles[static_cast<size_t>(dim + 1)] = *reps;
  int t = L.emit_tmp(o, "tile", "Tile", {u, L.const_ints(tiles)});
  int sh = L.emit_tmp(o, "shape", "Shape", {x});
  int head = L.emit_tmp(o, "head", "Slice", {sh, L.const_ints({0}), L.const_ints({dim})});
  int tail = L.emit_tmp(o, "tail", "Slice", {sh, L.const_ints({dim + 1}), L.const_ints({INT64_MAX})});
  int target = L.emit_tmp(o, "target", "Concat", {head, L.const_ints({-1}), tail}, {{"axis", ai(0)}});
  L.emit_to(o, "Reshape", {t, target});
  return true;
}

// flip(x, dims): Slice with step -1 over each dim, as torch.onnx exports it.
bool lower_flip(AtenLowerer& L, const Node* n, const std::string&) {
  auto dims = L.known_ints(L.in(n, 1));
  if (!dims) return false;
  std::vector<int64_t> starts(dims->size(), -1), ends(dims->size(), INT64_MIN), steps(dims->size(), -1);
  L.emit_to(n->output(), "Slice",
            {L.as_ir(L.in(n, 0)), L.const_ints(starts), L.const_ints(ends), L.const_ints(*dims),
             L.const_ints(steps)});
  return true;
}

// roll(x, shifts, dims): per dim, the last `s` elements moved to the front (two Slices and a Concat, as
// torch.onnx exports it); without dims, the flattened tensor is rolled and reshaped back.
bool lower_roll(AtenLowerer& L, const Node* n, const std::string&) {
  auto shifts = L.known_ints(L.in(n, 1)), dims = L.known_ints(L.in(n, 2));
  if (!shifts || !dims || dims->empty() || shifts->size() != dims->size()) return false;
  const AtenValue* o = n->output();
  int x = L.as_ir(L.in(n, 0));
  for (size_t k = 0; k < dims->size(); ++k) {
    int64_t s = (*shifts)[k], d = (*dims)[k];
    int tail =
        L.emit_tmp(o, "tail", "Slice", {x, L.const_ints({-s}), L.const_ints({INT64_MAX}), L.const_ints({d})});
    int head = L.emit_tmp(o, "head", "Slice", {x, L.const_ints({0}), L.const_ints({-s}), L.const_ints({d})});
    x = k + 1 == dims->size() ? L.emit_to(o, "Concat", {tail, head}, {{"axis", ai(d)}})
                              : L.emit_tmp(o, "rolled", "Concat", {tail, head}, {{"axis", ai(d)}});
  }
  return true;
}

// constant_pad_nd(x, pad, value) / pad(x, pad, mode, value): torch's pad list runs from the last dim
// ([last_begin, last_end, prev_begin, prev_end, ...]); ONNX Pad wants [begin per dim..., end per dim...].
// `mode`: the ONNX mode the op fixes (reflection_pad*, replication_pad*), or pad's mode argument (by_arg).
enum class PadMode : uint8_t { constant, by_arg, reflect, edge };
template <PadMode pm>
bool lower_pad(AtenLowerer& L, const Node* n, const std::string&) {
  auto pad = L.known_ints(L.in(n, 1));
  auto rank = L.known_rank(L.in(n, 0));
  if (!pad || !rank || pad->size() % 2 || static_cast<int64_t>(pad->size() / 2) > *rank) return false;
  std::vector<int64_t> pads(static_cast<size_t>(2 * *rank), 0);
  for (size_t k = 0; k < pad->size() / 2; ++k) {
    size_t d = static_cast<size_t>(*rank) - 1 - k;
    pads[d] = (*pad)[2 * k];
    pads[d + static_cast<size_t>(*rank)] = (*pad)[2 * k + 1];
  }
  std::string mode = pm == PadMode::reflect ? "reflect" : pm == PadMode::edge ? "edge" : "constant";
  if (pm == PadMode::by_arg && n->inputs().size() > 2 && L.in(n, 2).kind == JV::Known &&
      L.in(n, 2).iv.isString())
    mode = L.in(n, 2).iv.toStringRef() == "replicate" ? "edge" : L.in(n, 2).iv.toStringRef();
  L.emit_to(n->output(), "Pad", {L.as_ir(L.in(n, 0)), L.const_ints(pads)}, {{"mode", as(mode)}});
  return true;
}

// Creation ops, by the kind their table row gives: where the shape comes from (size: zeros(size); new_size:
// new_*(self, size), self's dtype unless one is given; like: *_like(self); fill: fill_(self, v) and
// zero_(self), self's shape and dtype), and what the tensor holds (zeros: also empty and random draws, no
// arithmetic of the model's; value: full's fill value, the argument after the size, or fill_'s v, a tensor of
// which broadcasts).
enum class ShapeFrom : uint8_t { size, new_size, like, fill };
enum class Holds : uint8_t { zeros, ones, value };

bool lower_creation_of(AtenLowerer& L, const Node* n, ShapeFrom from, Holds holds) {
  const AtenValue* o = n->output();
  const JV* self = from == ShapeFrom::size ? nullptr : &L.in(n, 0);
  int shape;
  if (from == ShapeFrom::like || from == ShapeFrom::fill) {
    int x = L.as_ir(*self);
    if (x < 0) return false;
    shape = L.emit_tmp(o, "shape", "Shape", {x});
  } else {
    shape = L.pack_ints(L.in(n, from == ShapeFrom::new_size ? 1 : 0));
  }
  if (shape < 0) return false;
  double v = holds == Holds::ones ? 1.0 : 0.0;
  if (holds == Holds::value) {
    auto x = L.known_num(L.in(n, from == ShapeFrom::new_size ? 2 : 1));
    if (!x) {
      if (from != ShapeFrom::fill) return false;
      // fill_(self, tensor value): self's shape, the value broadcast.
      L.emit_to(o, "Expand", {L.as_ir(L.in(n, 1)), shape});
      return true;
    }
    v = *x;
  }
  DType t = from == ShapeFrom::fill ? L.facts(L.as_ir(*self)).dtype : creation_dtype(L, n, self);
  if (t == DType::Undefined) t = DType::Float32;
  if (!is_float(t) && !(std::fabs(v) <= 9.0e18)) return false;  // nan, inf, past int64: torch refuses too
  L.emit_to(o, "ConstantOfShape", {shape}, {{"value", tensor_value(t, v)}});
  return true;
}

template <ShapeFrom from, Holds holds>
bool lower_creation(AtenLowerer& L, const Node* n, const std::string&) {
  return lower_creation_of(L, n, from, holds);
}

// Random draws shaped as self: bernoulli(self[, p]) and bernoulli_ (stochastic depth, dropout written by
// hand), and the in-place fills uniform_, normal_(self, mean, std), exponential_, random_, cauchy_,
// log_normal_, geometric_ (the trailing _ is stripped before the table is asked). No arithmetic of the
// model's (FlopCounterMode counts none either); self's shape and dtype are written.
bool lower_random_like(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().empty() || n->outputs().size() != 1) return false;
  const JV& self = L.in(n, 0);
  int x = L.as_ir(self);
  if (x < 0 || self.kind != JV::Tensor) return false;
  const AtenValue* o = n->output();
  int shape = L.emit_tmp(o, "shape", "Shape", {x});
  DType t = L.facts(x).dtype;
  if (t == DType::Undefined) t = DType::Float32;
  L.emit_to(o, "ConstantOfShape", {shape}, {{"value", tensor_value(t, 0.0)}});
  return true;
}

// copy_(self, src): self's shape, src's values broadcast into it.
bool lower_copy(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() == 1) {  // list.copy()
    auto items = L.list_items(L.in(n, 0));
    if (!items) return false;
    return L.set(n->output(), JV::list(*items)), true;
  }
  int self = L.as_ir(L.in(n, 0)), src = L.as_ir(L.in(n, 1));
  if (self < 0 || src < 0) return false;
  int shape = L.emit_tmp(n->output(), "shape", "Shape", {self});
  L.emit_to(n->output(), "Expand", {src, shape});
  return true;
}

// slice_scatter(self, src, ...), select_scatter, diagonal_scatter, as_strided_scatter (what functionalization
// makes of an in-place write into a view): a copy of self with src written into a part of it; self's shape,
// no arithmetic (src's elements only move).
bool lower_embed_scatter(AtenLowerer& L, const Node* n, const std::string&) {
  const int self = L.as_ir(L.in(n, 0));
  if (self < 0) return false;
  L.emit_to(n->output(), "Identity", {self});
  return true;
}

// index(self, indices): one index tensor at position k (the others None) is a Gather on axis k; a boolean
// mask there selects (aten_datadep.cc).
// x[i0, i1, ...] with several index tensors from the first axis on (advanced indexing): the indices broadcast
// to one shape and stacked on a last axis, then one GatherND (what torch's index kernel gathers).
bool lower_multi_index(AtenLowerer& L, const Node* n, const std::vector<int>& which) {
  const AtenValue* o = n->output();
  int shape = L.emit_tmp(o, "shape0", "Shape", {which[0]});
  for (size_t k = 1; k < which.size(); ++k)
    shape = L.emit_tmp(o, "shape", "Shape", {L.emit_tmp(o, "bcast", "Expand", {which[k], shape})});
  std::vector<int> cols;
  for (int w : which)
    cols.push_back(
        L.emit_tmp(o, "col", "Unsqueeze", {L.emit_tmp(o, "idx", "Expand", {w, shape}), L.const_ints({-1})}));
  int idx = L.emit_tmp(o, "indices", "Concat", cols, {{"axis", ai(-1)}});
  L.emit_to(o, "GatherND", {L.as_ir(L.in(n, 0)), idx});
  return true;
}

bool lower_index(AtenLowerer& L, const Node* n, const std::string&) {
  const JV& idx = L.in(n, 1);
  if (idx.kind != JV::List) return false;
  int axis = -1, which = -1;
  std::vector<int> all;
  bool leading = true;  // every index tensor before any None
  for (size_t k = 0; k < idx.items->size(); ++k) {
    const JV& it = (*idx.items)[k];
    if (AtenLowerer::is_none(it)) {
      leading = leading && all.empty();
      continue;
    }
    if (it.kind != JV::Tensor) return false;
    if (axis < 0) axis = static_cast<int>(k), which = it.ir;
    all.push_back(it.ir);
  }
  if (all.size() > 1) {
    for (int w : all)
      if (is_float(L.facts(w).dtype) || L.facts(w).dtype == DType::Bool) return false;
    return leading && axis == 0 && lower_multi_index(L, n, all);
  }
  if (axis < 0) return L.emit_to(n->output(), "Identity", {L.as_ir(L.in(n, 0))}), true;
  DType t = L.facts(which).dtype;
  if (t == DType::Bool || t == DType::UInt8) return lower_mask_index(L, n, L.as_ir(L.in(n, 0)), which, axis);
  L.emit_to(n->output(), "Gather", {L.as_ir(L.in(n, 0)), which}, {{"axis", ai(axis)}});
  return true;
}

// diff(self, n, dim, prepend, append): the prepended and appended tensors joined on `dim`, then n times the
// difference of neighbours (x[1:] - x[:-1]).
bool lower_diff(AtenLowerer& L, const Node* n, const std::string&) {
  const AtenValue* o = n->output();
  auto times = L.known_int(L.in(n, 1));
  auto dim = L.known_int(L.in(n, 2));
  if (!times || !dim || *times < 0 || *times > 64) return false;
  std::vector<int> parts;
  if (!AtenLowerer::is_none(L.in(n, 3))) parts.push_back(L.as_ir(L.in(n, 3)));
  parts.push_back(L.as_ir(L.in(n, 0)));
  if (!AtenLowerer::is_none(L.in(n, 4))) parts.push_back(L.as_ir(L.in(n, 4)));
  int x = parts.size() == 1 ? parts[0] : L.emit_tmp(o, "joined", "Concat", parts, {{"axis", ai(*dim)}});
  const int axes = L.const_ints({*dim}), step = L.const_ints({1});
  for (int64_t k = 0; k < *times; ++k) {
    int hi = L.emit_tmp(o, "next", "Slice", {x, L.const_ints({1}), L.const_ints({INT64_MAX}), axes, step});
    int lo = L.emit_tmp(o, "prev", "Slice", {x, L.const_ints({0}), L.const_ints({-1}), axes, step});
    x = k + 1 == *times ? L.emit_to(o, "Sub", {hi, lo}) : L.emit_tmp(o, "diff", "Sub", {hi, lo});
  }
  if (*times == 0) L.emit_to(o, "Identity", {x});
  return true;
}

// index_put_(self, indices, values, accumulate): self's shape; accumulate adds (1 per value element).
bool lower_index_put(AtenLowerer& L, const Node* n, const std::string&) {
  const JV& idx = L.in(n, 1);
  if (idx.kind != JV::List) return false;
  int first = -1;
  for (const auto& it : *idx.items)
    if (it.kind == JV::Tensor) first = first < 0 ? it.ir : first;
  if (first < 0) return false;
  auto acc = n->inputs().size() > 3 ? L.known_int(L.in(n, 3)) : std::optional<int64_t>(0);
  Attrs a;
  if (acc && *acc) a["reduction"] = as("add");
  L.emit_to(n->output(), "ScatterND", {L.as_ir(L.in(n, 0)), first, L.as_ir(L.in(n, 2))}, a);
  return true;
}

// index_copy(self, dim, index, source) and index_add(self, dim, index, source, alpha): source's slices along
// dim written (or added) into self at the 1-D index (a static KV cache's update: k.index_copy_(2, pos,
// k_new)). As ScatterElements on that axis with the index laid along dim and expanded to source's shape: its
// cost is source's elements, as the kernel's.
enum class IndexWrite : uint8_t { copy, add };
template <IndexWrite w>
bool lower_index_copy(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() < 4) return false;
  auto dim = L.known_int(L.in(n, 1));
  auto rank = L.known_rank(L.in(n, 3));
  const int self = L.as_ir(L.in(n, 0)), index = L.as_ir(L.in(n, 2));
  int source = L.as_ir(L.in(n, 3));
  if (!dim || !rank || *rank < 1 || self < 0 || index < 0 || source < 0) return false;
  const int64_t d = *dim < 0 ? *dim + *rank : *dim;
  if (d < 0 || d >= *rank) return false;
  const AtenValue* o = n->output();
  if (w == IndexWrite::add && n->inputs().size() > 4) {
    auto alpha = L.known_num(L.in(n, 4));
    if (!alpha) return false;
    if (*alpha != 1.0) source = L.emit_tmp(o, "scaled", "Mul", {source, L.const_float(*alpha)});
  }
  std::vector<int64_t> along(static_cast<size_t>(*rank), 1);
  along[static_cast<size_t>(d)] = -1;
  int laid = L.emit_tmp(o, "index_along", "Reshape", {index, L.const_ints(along)});
  int full = L.emit_tmp(o, "index_full", "Expand", {laid, L.emit_tmp(o, "source_shape", "Shape", {source})});
  L.emit_to(o, "ScatterElements", {self, full, source},
            {{"axis", ai(d)}, {"reduction", as(w == IndexWrite::add ? "add" : "none")}});
  return true;
}

enum class GatherOf : uint8_t { slices, elements };  // index_select, gather
template <GatherOf of>
bool lower_index_select(AtenLowerer& L, const Node* n, const std::string&) {
  auto dim = L.known_int(L.in(n, 1));
  if (!dim) return false;
  L.emit_to(n->output(), of == GatherOf::elements ? "GatherElements" : "Gather",
            {L.as_ir(L.in(n, 0)), L.as_ir(L.in(n, 2))}, {{"axis", ai(*dim)}});
  return true;
}

template <int64_t upper>  // tril 0, triu 1
bool lower_trilu(AtenLowerer& L, const Node* n, const std::string&) {
  int k = n->inputs().size() > 1 ? L.as_ir(L.in(n, 1)) : L.const_int(0);
  L.emit_to(n->output(), "Trilu", {L.as_ir(L.in(n, 0)), k}, {{"upper", ai(upper)}});
  return true;
}

bool lower_cumsum(AtenLowerer& L, const Node* n, const std::string&) {
  auto dim = L.known_int(L.in(n, 1));
  if (!dim) return false;
  L.emit_to(n->output(), "CumSum", {L.as_ir(L.in(n, 0)), L.const_int(*dim)});
  return true;
}

bool lower_arange(AtenLowerer& L, const Node* n, const std::string&) {
  JV* start = L.arg(n, "start");
  JV* end = L.arg(n, "end");
  JV* step = L.arg(n, "step");
  if (!end) return false;
  int s = start ? L.as_ir(*start) : L.const_int(0);
  int e = L.as_ir(*end);
  int st = step ? L.as_ir(*step) : L.const_int(1);
  if (s < 0 || e < 0 || st < 0) return false;
  L.emit_to(n->output(), "Range", {s, e, st});
  return true;
}

bool lower_scalar_tensor(AtenLowerer& L, const Node* n, const std::string&) {
  const JV& x = L.in(n, 0);
  int v = -1;
  if (auto k = L.known_num(x))
    v = L.const_float(*k);
  else if (x.kind == JV::ScalarIR)
    v = x.ir;
  if (v < 0) return false;
  L.emit_to(n->output(), "Identity", {v});
  return true;
}

// scatter(self, dim, index, src | value), scatter_add(self, dim, index, src), scatter_reduce(self, dim,
// index, src, reduce, include_self=True): self with the indexed elements replaced or combined
// (ScatterElements; a scalar value broadcast to the index's shape). `add`: scatter_add's.
template <bool add>
bool lower_scatter(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() < 4) return false;
  auto dim = L.known_int(L.in(n, 1));
  if (!dim) return false;
  const AtenValue* o = n->output();
  const int index = L.as_ir(L.in(n, 2));
  int updates = L.as_ir(L.in(n, 3));
  if (index < 0 || updates < 0) return false;
  if (L.known_rank(L.in(n, 3)).value_or(-1) != L.known_rank(L.in(n, 2)).value_or(-2))
    updates = L.emit_tmp(o, "updates", "Expand", {updates, L.emit_tmp(o, "index_shape", "Shape", {index})});
  static const std::map<std::string, std::string> kReduce = {
      {"sum", "add"}, {"add", "add"}, {"prod", "mul"}, {"multiply", "mul"}, {"amax", "max"}, {"amin", "min"}};
  std::string reduction = add ? "add" : "none";
  const JV* r = L.arg(n, "reduce");
  if (r && !AtenLowerer::is_none(*r)) {
    auto v = L.known_value(*r);
    if (!v || !v->isString()) return false;
    auto it = kReduce.find(v->toStringRef());
    if (it == kReduce.end()) return false;  // "mean": a sum and a count
    reduction = it->second;
  }
  L.emit_to(o, "ScatterElements", {L.as_ir(L.in(n, 0)), index, updates},
            {{"axis", ai(*dim)}, {"reduction", as(reduction)}});
  return true;
}

template <bool shuffle>  // pixel_shuffle: DepthToSpace; pixel_unshuffle: SpaceToDepth
bool lower_pixel_shuffle(AtenLowerer& L, const Node* n, const std::string&) {
  auto r = L.known_int(L.in(n, 1));
  if (!r) return false;
  L.emit_to(n->output(), shuffle ? "DepthToSpace" : "SpaceToDepth", {L.as_ir(L.in(n, 0))},
            {{"blocksize", ai(*r)}, {"mode", as("CRD")}});
  return true;
}

}  // namespace

void register_aten_tensor(AtenTable& t) {
  t.add("select", lower_select);
  t.add("slice", lower_slice);
  t.add("narrow", lower_narrow);
  t.add({"view", "reshape"}, lower_reshape<ShapeArg::sizes>);
  t.add({"view_as", "reshape_as"}, lower_reshape<ShapeArg::of_other>);
  t.add("flatten", lower_flatten);
  t.add("unflatten", lower_unflatten);
  t.add("permute", lower_permute);
  t.add({"transpose", "swapaxes"}, lower_transpose<TransposeOf::dims>);
  t.add("t", lower_transpose<TransposeOf::matrix>);
  t.add("unsqueeze", lower_unsqueeze);
  t.add("squeeze", lower_squeeze);
  t.add({"cat", "concat"}, lower_cat<JoinBy::concat>);
  t.add("stack", lower_cat<JoinBy::stack>);
  t.add("split", lower_split<SplitOp::split>);
  t.add("unsafe_split", lower_split<SplitOp::unsafe_split>);
  t.add({"chunk", "unsafe_chunk"}, lower_split<SplitOp::chunk>);
  t.add("split_with_sizes", lower_split<SplitOp::split_with_sizes>);
  t.add("unbind", lower_split<SplitOp::unbind>);
  t.add("tensor_split", lower_split<SplitOp::tensor_split>);
  t.add("repeat_interleave", lower_repeat_interleave);
  t.add({"to", "_to_copy"}, lower_to<CastTo::dtype_arg>);
  t.add("type_as", lower_to<CastTo::other>);
  t.add("float", lower_to<CastTo::fixed, DType::Float32>);
  t.add("double", lower_to<CastTo::fixed, DType::Float64>);
  t.add("half", lower_to<CastTo::fixed, DType::Float16>);
  t.add("long", lower_to<CastTo::fixed, DType::Int64>);
  t.add("int", lower_to<CastTo::fixed, DType::Int32>);
  t.add("bool", lower_to<CastTo::fixed, DType::Bool>);
  t.add("expand", lower_expand<ShapeArg::sizes>);
  t.add("expand_as", lower_expand<ShapeArg::of_other>);
  t.add("repeat", lower_repeat);
  t.add("broadcast_tensors", lower_broadcast_tensors);
  t.add("flip", lower_flip);
  t.add("roll", lower_roll);
  t.add("constant_pad_nd", lower_pad<PadMode::constant>);
  t.add("pad", lower_pad<PadMode::by_arg>);
  t.add({"reflection_pad1d", "reflection_pad2d", "reflection_pad3d"}, lower_pad<PadMode::reflect>);
  t.add({"replication_pad1d", "replication_pad2d", "replication_pad3d"}, lower_pad<PadMode::edge>);
  t.add({"zeros", "empty", "rand", "randn", "empty_permuted", "empty_strided"},
        lower_creation<ShapeFrom::size, Holds::zeros>);
  t.add("ones", lower_creation<ShapeFrom::size, Holds::ones>);
  t.add("full", lower_creation<ShapeFrom::size, Holds::value>);
  t.add({"new_zeros", "new_empty"}, lower_creation<ShapeFrom::new_size, Holds::zeros>);
  t.add("new_ones", lower_creation<ShapeFrom::new_size, Holds::ones>);
  t.add("new_full", lower_creation<ShapeFrom::new_size, Holds::value>);
  t.add({"zeros_like", "empty_like", "rand_like", "randn_like"},
        lower_creation<ShapeFrom::like, Holds::zeros>);
  t.add("ones_like", lower_creation<ShapeFrom::like, Holds::ones>);
  t.add("full_like", lower_creation<ShapeFrom::like, Holds::value>);
  t.add("zero", lower_creation<ShapeFrom::fill, Holds::zeros>);
  t.add("fill", lower_creation<ShapeFrom::fill, Holds::value>);
  t.add("copy", lower_copy);
  t.add({"bernoulli", "uniform", "exponential", "random", "cauchy", "log_normal", "geometric"},
        lower_random_like);
  t.add({"slice_scatter", "select_scatter", "diagonal_scatter", "as_strided_scatter"}, lower_embed_scatter);
  t.add("index", lower_index);
  t.add("diff", lower_diff);
  t.add("index_put", lower_index_put);
  t.add("index_select", lower_index_select<GatherOf::slices>);
  t.add("gather", lower_index_select<GatherOf::elements>);
  t.add("index_copy", lower_index_copy<IndexWrite::copy>);
  t.add("index_add", lower_index_copy<IndexWrite::add>);
  t.add("tril", lower_trilu<0>);
  t.add("triu", lower_trilu<1>);
  t.add("cumsum", lower_cumsum);
  t.add("arange", lower_arange);
  t.add({"tensor", "scalar_tensor"}, lower_scalar_tensor);
  t.add({"scatter", "scatter_reduce"}, lower_scatter<false>);
  t.add("scatter_add", lower_scatter<true>);
  t.add("pixel_shuffle", lower_pixel_shuffle<true>);
  t.add("pixel_unshuffle", lower_pixel_shuffle<false>);
}

}  // namespace flopwise
