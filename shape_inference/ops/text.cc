// shape_inference/ops/text.cc — text family: StringNormalizer (opset 10), TfIdfVectorizer (opset 9),
// RegexFullMatch (opset 20). String processing is not floating-point arithmetic: those ops count 0 FLOPs,
// stated in their formula. TfIdfVectorizer counts 1 FLOP per output element for the weight scaling of
// IDF/TFIDF modes (TF writes integer counts: 0).
#include <algorithm>

#include "../helpers.h"

namespace flopwise {

namespace {

// StringNormalizer takes [C] or [1, C]. Stop-word removal drops a data-dependent number of
// elements (at least one is kept: an all-dropped input gives one empty string), so the last dim
// is unknown when stopwords are given; case changes alone keep the shape.
void infer_string_normalizer(InferContext& c) {
  c.set_output_dtype(0, DType::String);
  const Shape& x = c.in_shape(0);
  if (!x.rank_known) return;
  if (x.rank() != 1 && x.rank() != 2) c.fail("input must be [C] or [1, C], got " + x.str());
  if (x.rank() == 2 && x.dims[0].is_known() && x.dims[0].value() != 1)
    c.fail("input must be [C] or [1, C], got " + x.str());
  Shape out = x;
  if (x.rank() == 2) out.dims[0] = Dim(1);
  auto sw = c.node().attrs.find("stopwords");
  if (sw != c.node().attrs.end() && !sw->second.strings.empty()) out.dims.back() = Dim::unknown();
  c.set_output(0, DType::String, out);
}

// Output [max(ngram_indexes) + 1] for [C] input, [B, max + 1] for [B, C].
void infer_tfidf(InferContext& c) {
  c.set_output_dtype(0, DType::Float32);
  std::vector<int64_t> idx = c.node().attr_ints("ngram_indexes");
  if (idx.empty()) c.fail("ngram_indexes must be non-empty");
  int64_t mx = -1;
  for (int64_t i : idx) {
    if (i < 0) c.fail("ngram_indexes must be non-negative, got " + std::to_string(i));
    mx = std::max(mx, i);
  }
  const Shape& x = c.in_shape(0);
  if (!x.rank_known) return;
  if (x.rank() == 1)
    c.set_output(0, DType::Float32, Shape({Dim(mx + 1)}));
  else if (x.rank() == 2)
    c.set_output(0, DType::Float32, Shape({x.dims[0], Dim(mx + 1)}));
  else
    c.fail("input must be 1-D or 2-D, got " + x.str());
}

OpCost cost_tfidf(const CostContext& c) {
  return c.node.attr_s("mode", "TF") == "TF" ? cost_zero(c) : cost_per_out_elem_1(c);
}

void infer_regex_full_match(InferContext& c) { c.set_output(0, DType::Bool, c.in_shape(0)); }

}  // namespace

void register_text_ops(OpRegistry& r) {
  reg(r, "StringNormalizer", 10, 0, "0: string processing, no floating-point arithmetic",
      infer_string_normalizer, cost_zero);
  reg(r, "TfIdfVectorizer", 9, 0, "TF: 0 (integer counts); IDF/TFIDF: 1 per output element (weight scaling)",
      infer_tfidf, cost_tfidf);
  reg(r, "RegexFullMatch", 20, 0, "0: string matching, no floating-point arithmetic", infer_regex_full_match,
      cost_zero);
}

}  // namespace flopwise
