// shape_inference/ops/linalg.cc — linalg family: MatMul, Gemm, Einsum, Det. Contraction ops report MACs;
// FLOPs = 2*MACs plus the per-output-element extras each formula names (bias add, alpha/beta scaling).
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "../helpers.h"

namespace flopwise {

namespace {

// The better-known of two descriptions of one dim: known beats symbolic beats unknown.
Dim best_dim(const Dim& a, const Dim& b) {
  if (a.is_known() || b.is_unknown()) return a;
  if (b.is_known() || a.is_unknown()) return b;
  return a;
}

// ---- MatMul (numpy semantics) ----------------------------------------------------------------
// A [..., M, K] x B [..., K, N] -> [broadcast(...), M, N]; a 1-D A is [K] (M dropped), a 1-D B is
// [K] (N dropped).
struct MatMulDims {
  Dim m, k, n;
  Shape batch;  // broadcast batch dims (rank unknown when either operand's rank is)
  bool a_vec = false, b_vec = false;
};

MatMulDims decode_matmul(InferContext& ctx, const Shape& a, const Shape& b) {
  MatMulDims d;
  if ((a.rank_known && a.rank() == 0) || (b.rank_known && b.rank() == 0))
    ctx.fail("MatMul operands must have rank >= 1 (got " + a.str() + " and " + b.str() + ")");
  if (!a.rank_known || !b.rank_known) {
    d.batch = Shape::unknown_rank();
    return d;
  }
  d.a_vec = a.rank() == 1;
  d.b_vec = b.rank() == 1;
  d.m = d.a_vec ? Dim(1) : a.dims[a.rank() - 2];
  Dim ka = a.dims.back();
  Dim kb = d.b_vec ? b.dims[0] : b.dims[b.rank() - 2];
  d.n = d.b_vec ? Dim(1) : b.dims.back();
  d.k = merge_dim(ctx, ka, kb, "MatMul contraction dim K (A's last vs B's second-to-last)");
  Shape ab(std::vector<Dim>(a.dims.begin(), a.dims.end() - (d.a_vec ? 1 : 2)));
  Shape bb(std::vector<Dim>(b.dims.begin(), b.dims.end() - (d.b_vec ? 1 : 2)));
  d.batch = broadcast_shapes(ctx, {ab, bb});
  return d;
}

void infer_matmul(InferContext& c) {
  MatMulDims d = decode_matmul(c, c.in_shape(0), c.in_shape(1));
  if (!d.batch.rank_known) {
    c.set_output(0, c.in_dtype(0), Shape::unknown_rank());
    return;
  }
  std::vector<Dim> out = d.batch.dims;
  if (!d.a_vec) out.push_back(d.m);
  if (!d.b_vec) out.push_back(d.n);
  c.set_output(0, c.in_dtype(0), Shape(out));
}

// K from whichever operand knows it best.
Dim matmul_k(const Shape& a, const Shape& b) {
  Dim ka, kb;
  if (a.rank_known && a.rank() >= 1) ka = a.dims.back();
  if (b.rank_known && b.rank() >= 1) kb = b.rank() == 1 ? b.dims[0] : b.dims[b.rank() - 2];
  return best_dim(ka, kb);
}

// MACs = batch*M*N*K = (output elements) * K.
OpCost cost_matmul(const CostContext& c) {
  Dim k = matmul_k(c.in_shape(0), c.in_shape(1));
  const Shape& out = c.out_shape(0);
  if (!out.rank_known) return cost_contraction(Count::unknown());
  return cost_contraction(Count::of(c.out_numel_dim(0) * k));
}

// ---- Gemm ------------------------------------------------------------------------------------
// Y = alpha * A' B' + beta * C with A' = transA ? A^T : A ([M, K]), B' = transB ? B^T : B ([K, N]),
// C unidirectionally broadcast to [M, N].
struct GemmDims {
  Dim m, k, n;
};

GemmDims decode_gemm(InferContext* ctx, const Node& node, const Shape& a, const Shape& b) {
  GemmDims d;
  for (const Shape* s : {&a, &b})
    if (s->rank_known && s->rank() != 2 && ctx)
      ctx->fail("Gemm operands must be 2-D (got " + a.str() + " and " + b.str() + ")");
  bool ta = node.attr_i("transA", 0) != 0, tb = node.attr_i("transB", 0) != 0;
  Dim ka, kb;
  if (a.rank_known && a.rank() == 2) {
    d.m = a.dims[ta ? 1 : 0];
    ka = a.dims[ta ? 0 : 1];
  }
  if (b.rank_known && b.rank() == 2) {
    kb = b.dims[tb ? 1 : 0];
    d.n = b.dims[tb ? 0 : 1];
  }
  d.k = ctx ? merge_dim(*ctx, ka, kb, "Gemm contraction dim K (A' columns vs B' rows)") : best_dim(ka, kb);
  return d;
}

void infer_gemm(InferContext& c) {
  GemmDims d = decode_gemm(&c, c.node(), c.in_shape(0), c.in_shape(1));
  if (c.has_input(2)) {
    const Shape& cs = c.in_shape(2);
    if (cs.rank_known) {
      if (cs.rank() > 2) c.fail("Gemm bias C must have rank <= 2 (got " + cs.str() + ")");
      // C broadcasts to [M, N]: each known dim is 1 or the matching output dim.
      std::vector<Dim> target{d.m, d.n};
      for (size_t i = 0; i < cs.rank(); ++i) {
        const Dim& cd = cs.dims[i];
        const Dim& td = target[2 - cs.rank() + i];
        if (cd.is_known() && td.is_known() && cd.value() != 1 && cd.value() != td.value())
          c.fail("Gemm bias C " + cs.str() + " does not broadcast to [" + d.m.str() + ", " + d.n.str() + "]");
      }
    }
  }
  c.set_output(0, c.in_dtype(0), Shape({d.m, d.n}));
}

// FLOPs = 2*M*N*K + M*N (bias add, C present) + M*N (alpha != 1) + M*N (beta != 1, C present).
OpCost cost_gemm(const CostContext& c) {
  GemmDims d = decode_gemm(nullptr, c.node, c.in_shape(0), c.in_shape(1));
  Dim mn = d.m * d.n;
  bool has_c = c.has_input(2);
  int64_t extra = (has_c ? 1 : 0) + (c.node.attr_f("alpha", 1.0) != 1.0 ? 1 : 0) +
                  (has_c && c.node.attr_f("beta", 1.0) != 1.0 ? 1 : 0);
  OpCost cost = cost_contraction(Count::of(mn * d.k), Count::of(mn) * Count{extra});
  if (has_c) cost.bias = Count::of(mn);
  return cost;
}

// ---- Einsum ----------------------------------------------------------------------------------
struct EinsumError {
  std::string msg;
};

struct EinsumTerm {
  std::string letters;  // index letters in order, without the ellipsis
  bool ellipsis = false;
  size_t ellipsis_pos = 0;  // letters before the ellipsis
};

struct EinsumDims {
  std::vector<EinsumTerm> inputs;
  EinsumTerm output;
  std::map<char, Dim> index;  // size per index letter
  bool ellipsis_rank_known = true;
  std::vector<Dim> ellipsis;  // broadcast ellipsis dims (valid when ellipsis_rank_known)
};

EinsumTerm parse_term(const std::string& t) {
  EinsumTerm term;
  for (size_t i = 0; i < t.size();) {
    if (t.compare(i, 3, "...") == 0) {
      if (term.ellipsis) throw EinsumError{"more than one '...' in term '" + t + "'"};
      term.ellipsis = true;
      term.ellipsis_pos = term.letters.size();
      i += 3;
    } else if (std::isalpha(static_cast<unsigned char>(t[i]))) {
      term.letters.push_back(t[i++]);
    } else {
      throw EinsumError{"unexpected character '" + std::string(1, t[i]) + "' in term '" + t + "'"};
    }
  }
  return term;
}

// Sizes two occurrences of one index: equal, or one of them 1 (broadcast).
Dim unify_index(const Dim& a, const Dim& b, char letter) {
  if (a.is_unknown()) return b;
  if (b.is_unknown()) return a;
  if (a.is_known() && a.value() == 1) return b;
  if (b.is_known() && b.value() == 1) return a;
  if (a.is_known() && b.is_known() && a.value() != b.value())
    throw EinsumError{"index '" + std::string(1, letter) + "' has sizes " + std::to_string(a.value()) +
                      " and " + std::to_string(b.value())};
  return a.is_known() ? a : b;
}

EinsumDims decode_einsum(const std::string& equation, const std::vector<Shape>& shapes) {
  std::string eq;
  for (char ch : equation)
    if (!std::isspace(static_cast<unsigned char>(ch))) eq.push_back(ch);
  EinsumDims d;
  auto arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  for (size_t pos = 0;;) {
    size_t comma = lhs.find(',', pos);
    d.inputs.push_back(
        parse_term(lhs.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos)));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (d.inputs.size() != shapes.size())
    throw EinsumError{"equation '" + equation + "' has " + std::to_string(d.inputs.size()) +
                      " terms but the node has " + std::to_string(shapes.size()) + " inputs"};
  bool any_ellipsis = false;
  std::vector<std::vector<Dim>> ell_parts;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const EinsumTerm& t = d.inputs[i];
    any_ellipsis = any_ellipsis || t.ellipsis;
    const Shape& s = shapes[i];
    if (!s.rank_known) {
      if (t.ellipsis) d.ellipsis_rank_known = false;
      continue;
    }
    size_t nl = t.letters.size();
    if (s.rank() < nl || (!t.ellipsis && s.rank() != nl))
      throw EinsumError{"term " + std::to_string(i) + " has " + std::to_string(nl) + " indices but input " +
                        std::to_string(i) + " is " + s.str()};
    size_t ell = s.rank() - nl;
    for (size_t j = 0; j < nl; ++j) {
      size_t axis = j < t.ellipsis_pos || !t.ellipsis ? j : j + ell;
      char l = t.letters[j];
      d.index[l] = d.index.count(l) ? unify_index(d.index[l], s.dims[axis], l) : s.dims[axis];
    }
    if (t.ellipsis)
      ell_parts.emplace_back(s.dims.begin() + t.ellipsis_pos, s.dims.begin() + t.ellipsis_pos + ell);
  }
  // Broadcast the ellipsis parts (right-aligned).
  if (d.ellipsis_rank_known) {
    size_t r = 0;
    for (const auto& p : ell_parts) r = std::max(r, p.size());
    d.ellipsis.assign(r, Dim(1));
    for (size_t j = 0; j < r; ++j) {
      Dim acc(1);
      bool unknown = false;
      for (const auto& p : ell_parts) {
        if (p.size() + j < r) continue;
        const Dim& x = p[p.size() - r + j];
        if (x.is_known() && x.value() == 1) continue;
        if (x.is_unknown()) {
          unknown = true;
          continue;
        }
        if (acc.is_known() && acc.value() == 1) {
          acc = x;
        } else if (!acc.same_as(x)) {
          if (acc.is_known() && x.is_known())
            throw EinsumError{"'...' dims " + std::to_string(acc.value()) + " and " +
                              std::to_string(x.value()) + " do not broadcast"};
          unknown = true;
        }
      }
      d.ellipsis[j] = unknown ? ((acc.is_known() && acc.value() != 1) ? acc : Dim::unknown()) : acc;
    }
  }
  // Output term: explicit, or implicit (ellipsis first, then letters used once, in ASCII order).
  if (arrow != std::string::npos) {
    d.output = parse_term(eq.substr(arrow + 2));
    std::set<char> seen;
    for (char l : d.output.letters) {
      if (!seen.insert(l).second) throw EinsumError{"output index '" + std::string(1, l) + "' repeated"};
      bool used = false;
      for (const auto& t : d.inputs) used = used || t.letters.find(l) != std::string::npos;
      if (!used) throw EinsumError{"output index '" + std::string(1, l) + "' does not appear in any input"};
    }
    if (d.output.ellipsis && !any_ellipsis) throw EinsumError{"output has '...' but no input does"};
  } else {
    std::map<char, int> uses;
    for (const auto& t : d.inputs)
      for (char l : t.letters) ++uses[l];
    d.output.ellipsis = any_ellipsis;
    d.output.ellipsis_pos = 0;
    for (const auto& [l, n] : uses)
      if (n == 1) d.output.letters.push_back(l);
  }
  return d;
}

std::vector<Shape> einsum_shapes_infer(const InferContext& c) {
  std::vector<Shape> v;
  for (size_t i = 0; i < c.num_inputs(); ++i) v.push_back(c.in_shape(i));
  return v;
}

void infer_einsum(InferContext& c) {
  EinsumDims d;
  try {
    d = decode_einsum(c.node().attr_s("equation", ""), einsum_shapes_infer(c));
  } catch (const EinsumError& e) {
    c.fail(e.msg);
  }
  const EinsumTerm& o = d.output;
  if (o.ellipsis && !d.ellipsis_rank_known) {
    c.set_output(0, c.in_dtype(0), Shape::unknown_rank());
    return;
  }
  std::vector<Dim> out;
  for (size_t j = 0; j <= o.letters.size(); ++j) {
    if (o.ellipsis && j == o.ellipsis_pos) out.insert(out.end(), d.ellipsis.begin(), d.ellipsis.end());
    if (j < o.letters.size())
      out.push_back(d.index.count(o.letters[j]) ? d.index[o.letters[j]] : Dim::unknown());
  }
  c.set_output(0, c.in_dtype(0), Shape(out));
}

// Index space P = product of every distinct index size (ellipsis dims included). Two or more
// operands: naive evaluation multiplies the operands at every point, MACs = (operands-1)*P.
// One operand: a reduction (some index summed) reads P points, 1 FLOP each; else layout only.
OpCost cost_einsum(const CostContext& c) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < c.node.inputs.size(); ++i) shapes.push_back(c.in_shape(i));
  EinsumDims d;
  try {
    d = decode_einsum(c.node.attr_s("equation", ""), shapes);
  } catch (const EinsumError&) {
    return cost_unknown(c);
  }
  if (!d.ellipsis_rank_known) return cost_unknown(c);
  Dim p = product(d.ellipsis);
  for (const auto& [l, size] : d.index) p = p * size;
  for (const auto& t : d.inputs)
    for (char l : t.letters)
      if (!d.index.count(l)) p = Dim::unknown();
  if (shapes.size() >= 2)
    return cost_contraction(Count::of(p) * Count{static_cast<int64_t>(shapes.size() - 1)});
  bool reduces = false;
  for (const auto& [l, size] : d.index) reduces = reduces || d.output.letters.find(l) == std::string::npos;
  if (!reduces) return cost_zero(c);
  return OpCost{Count{}, Count::of(p)};
}

// ---- Det -------------------------------------------------------------------------------------
// [*, M, M] -> [*].
void infer_det(InferContext& c) {
  const Shape& s = c.in_shape(0);
  if (!s.rank_known) {
    c.set_output(0, c.in_dtype(0), Shape::unknown_rank());
    return;
  }
  if (s.rank() < 2) c.fail("Det input must have rank >= 2 (got " + s.str() + ")");
  merge_dim(c, s.dims[s.rank() - 2], s.dims[s.rank() - 1], "Det matrices must be square");
  c.set_output(0, c.in_dtype(0), Shape(std::vector<Dim>(s.dims.begin(), s.dims.end() - 2)));
}

}  // namespace

void register_linalg_ops(OpRegistry& r) {
  reg(r, "MatMul", 1, 0, "MACs = batch*M*N*K; FLOPs = 2*MACs", infer_matmul, cost_matmul);
  reg(r, "Gemm", 1, 0,
      "MACs = M*N*K; FLOPs = 2*MACs + M*N (bias, if C) + M*N (alpha != 1) + M*N (beta != 1, if C)",
      infer_gemm, cost_gemm);
  reg(r, "Einsum", 12, 0,
      "P = product of all index sizes; >=2 operands: MACs = (operands-1)*P, FLOPs = 2*MACs; "
      "1 operand: P if it sums an index, else 0 (layout only)",
      infer_einsum, cost_einsum);
  reg(r, "Det", 11, 0, "unknown (algorithm-dependent, ~n^3 per matrix; not counted)", infer_det,
      cost_unknown);
  // --train (flopwise/ops.h, TrainFacts): each operand's gradient a product of the other, as many MACs.
  for (const char* op : {"MatMul", "Gemm"})
    train(r, op, TrainBackward::products, TrainKeeps::other_operand, TrainAutocast::low);
  train(r, "Einsum", TrainBackward::products_of_two, TrainKeeps::other_operand, TrainAutocast::low);
  // Weight facts (flopwise/ops.h, WeightFacts): any operand may be a weight; MatMul and Gemm are the
  // products tensor parallelism splits.
  for (const char* op : {"MatMul", "Gemm"}) weights(r, op, Learned{kAllSlots}, Linear{});
  weights(r, "Einsum", Learned{kAllSlots});
}

}  // namespace flopwise
