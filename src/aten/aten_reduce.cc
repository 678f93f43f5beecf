// src/aten/aten_reduce.cc — aten reductions: mean/sum/amax/amin/prod/any/all, max/min (over all, over a dim
// with indices, or of two tensors), argmax/argmin, norms (ReduceL1/L2), and topk, sort, histc.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "aten_table.h"

namespace flopwise {
namespace {

using Node = AtenNode;

// mean/sum/amax/amin(x[, dims, keepdim]); max/min(x) over all; max/min(x, dim, keepdim) -> (values, indices);
// argmax/argmin(x, dim, keepdim). `by` says which of those an op is (the ONNX reduction by name, below).
enum class ReduceBy : uint8_t { reduce, max, min, argmax, argmin };
template <ReduceBy by>
bool lower_reduce(AtenLowerer& L, const Node* n, const std::string& op) {
  static const std::map<std::string, std::string> onnx = {
      {"mean", "ReduceMean"}, {"sum", "ReduceSum"}, {"amax", "ReduceMax"},  {"amin", "ReduceMin"},
      {"max", "ReduceMax"},   {"min", "ReduceMin"}, {"prod", "ReduceProd"}, {"any", "ReduceMax"},
      {"all", "ReduceMin"}};  // any / all of bools: a max / min of them
  size_t nin = n->inputs().size();
  const AtenValue* o = n->output(0);
  int x = L.as_ir(L.in(n, 0));
  if (x < 0) return false;
  if (by == ReduceBy::argmax || by == ReduceBy::argmin) {
    if (nin < 3 || AtenLowerer::is_none(L.in(n, 1))) return false;
    auto d = L.known_int(L.in(n, 1)), k = L.known_int(L.in(n, 2));
    if (!d || !k) return false;
    L.emit_to(o, by == ReduceBy::argmax ? "ArgMax" : "ArgMin", {x}, {{"axis", ai(*d)}, {"keepdims", ai(*k)}});
    return true;
  }
  if ((by == ReduceBy::max || by == ReduceBy::min) && nin == 2) {  // elementwise max/min of two tensors
    L.emit_to(o, by == ReduceBy::max ? "Max" : "Min", {x, L.as_ir(L.in(n, 1))});
    return true;
  }
  // Over all elements when the second argument is no dims (sum(x), sum(x, dtype), dims None).
  bool all_elements = nin == 1 || AtenLowerer::is_none(L.in(n, 1));
  if (!all_elements) {
    const AtenType& t = n->input(1)->type;
    all_elements = t.kind != AtenType::List && t.kind != AtenType::Int;
  }
  if (all_elements) {
    L.emit_to(o, onnx.at(op), {x}, {{"keepdims", ai(0)}});  // all elements
    return true;
  }
  auto dims = L.known_ints(L.in(n, 1));
  auto keep = nin > 2 ? L.known_int(L.in(n, 2)) : std::optional<int64_t>(0);
  if (!dims || !keep) return false;
  if (n->outputs().size() == 2) {  // max.dim / min.dim: values and indices
    L.emit_to(o, onnx.at(op), {x, L.const_ints(*dims)}, {{"keepdims", ai(*keep)}});
    L.emit_to(n->output(1), by == ReduceBy::max ? "ArgMax" : "ArgMin", {x},
              {{"axis", ai((*dims)[0])}, {"keepdims", ai(*keep)}});
    return true;
  }
  L.emit_to(o, onnx.at(op), {x, L.const_ints(*dims)}, {{"keepdims", ai(*keep)}});
  return true;
}

// norm(x, p, dim, keepdim) with p 1 or 2 (F.normalize's): ReduceL1 / ReduceL2.
bool lower_norm(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() < 4) return false;
  auto p = L.known_num(L.in(n, 1));
  auto dims = L.known_ints(L.in(n, 2));
  auto keep = L.known_int(L.in(n, 3));
  if (!p || !dims || !keep || (*p != 1.0 && *p != 2.0)) return false;
  L.emit_to(n->output(), *p == 1.0 ? "ReduceL1" : "ReduceL2", {L.as_ir(L.in(n, 0)), L.const_ints(*dims)},
            {{"keepdims", ai(*keep)}});
  return true;
}

// linalg_vector_norm(x, ord=2, dim=None, keepdim=False, dtype=None), ord 1 or 2: what torch 2.x's
// F.normalize calls (Swin V2's cosine attention); dim None reduces every dim.
bool lower_vector_norm(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() < 4) return false;
  auto p = L.known_num(L.in(n, 1));
  auto keep = L.known_int(L.in(n, 3));
  if (!p || !keep || (*p != 1.0 && *p != 2.0)) return false;
  if (n->inputs().size() > 4 && !AtenLowerer::is_none(L.in(n, 4)))
    return false;  // a dtype cast first: not read
  std::vector<int> ins{L.as_ir(L.in(n, 0))};
  if (!AtenLowerer::is_none(L.in(n, 2))) {
    auto dims = L.known_ints(L.in(n, 2));
    if (!dims) return false;
    ins.push_back(L.const_ints(*dims));
  }
  L.emit_to(n->output(), *p == 1.0 ? "ReduceL1" : "ReduceL2", ins, {{"keepdims", ai(*keep)}});
  return true;
}

bool lower_topk(AtenLowerer& L, const Node* n, const std::string&) {
  auto k = L.known_int(L.in(n, 1)), dim = L.known_int(L.in(n, 2));
  if (!k || !dim) return false;
  auto r =
      L.emit("TopK", {L.as_ir(L.in(n, 0)), L.const_ints({*k})},
             {AtenLowerer::ir_name(n->output(0)), AtenLowerer::ir_name(n->output(1))}, {{"axis", ai(*dim)}});
  L.set_ir(n->output(0), r[0]);
  L.set_ir(n->output(1), r[1]);
  return true;
}

// sort(self, dim=-1, descending=False) and sort.stable(self, *, stable, dim=-1, descending=False): values and
// indices; argsort the indices alone; msort along dim 0.
enum class SortOp : uint8_t { sort, argsort, msort };
template <SortOp sort>
bool lower_sort(AtenLowerer& L, const Node* n, const std::string&) {
  const JV* dim_arg = L.arg(n, "dim");
  const JV* desc_arg = L.arg(n, "descending");
  auto dim = sort == SortOp::msort ? std::optional<int64_t>(0)
             : dim_arg             ? L.known_int(*dim_arg)
                                   : std::optional<int64_t>(-1);
  auto desc = desc_arg ? L.known_bool(*desc_arg) : std::optional<bool>(false);
  if (!dim || !desc) return false;
  const AtenValue* o = n->output(0);
  const bool indices_only = sort == SortOp::argsort;
  auto r = L.emit("Sort", {L.as_ir(L.in(n, 0))},
                  {indices_only ? L.tmp(o, "values") : AtenLowerer::ir_name(o),
                   indices_only ? AtenLowerer::ir_name(o) : L.tmp(o, "indices")},
                  {{"axis", ai(*dim)}, {"descending", ai(*desc ? 1 : 0)}}, "flopwise");
  L.set_ir(o, indices_only ? r[1] : r[0]);
  if (!indices_only && n->outputs().size() > 1) L.set_ir(n->output(1), r[1]);
  return true;
}

// histc(self, bins=100, min=0, max=0): the counts of `bins` equal bins over [min, max] (the data's own range
// where min = max).
bool lower_histc(AtenLowerer& L, const Node* n, const std::string&) {
  auto bins = L.known_int(L.in(n, 1));
  auto lo = L.known_num(L.in(n, 2)), hi = L.known_num(L.in(n, 3));
  if (!bins || !lo || !hi) return false;
  L.emit_to(n->output(), "Histogram", {L.as_ir(L.in(n, 0))},
            {{"bins", ai(*bins)}, {"min", af(*lo)}, {"max", af(*hi)}}, "flopwise");
  return true;
}

}  // namespace

void register_aten_reduce(AtenTable& t) {
  t.add({"mean", "sum", "amax", "amin", "prod", "any", "all"}, lower_reduce<ReduceBy::reduce>);
  t.add("max", lower_reduce<ReduceBy::max>);
  t.add("min", lower_reduce<ReduceBy::min>);
  t.add("argmax", lower_reduce<ReduceBy::argmax>);
  t.add("argmin", lower_reduce<ReduceBy::argmin>);
  t.add("norm", lower_norm);
  t.add("linalg_vector_norm", lower_vector_norm);
  t.add("topk", lower_topk);
  t.add("sort", lower_sort<SortOp::sort>);
  t.add("argsort", lower_sort<SortOp::argsort>);
  t.add("msort", lower_sort<SortOp::msort>);
  t.add("histc", lower_histc);
}

}  // namespace flopwise
