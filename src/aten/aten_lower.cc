// src/aten/aten_lower.cc — the AtenLowerer (flopwise/aten_lower.h): values at import, constants, shape
// facts from the incremental shape pass, emitting IR nodes in the current scope, and one aten call lowered
// through the aten table.
#include "flopwise/aten_lower.h"

#include <cmath>
#include <stdexcept>

#include "aten_table.h"
#include "flopwise/limits.h"

namespace flopwise {

const AtenValue* AtenNode::output() const {
  if (outs.size() != 1)
    throw std::out_of_range(kind + ": " + std::to_string(outs.size()) + " outputs, not 1");
  return outs[0];
}

bool AtenLowerer::lower_aten(const AtenNode& n) {
  // A library op (vllm::, _C::, aiter::) by its full name: its arguments are not its aten namesake's.
  const bool library = n.kind.find("::") != std::string::npos && n.kind.rfind("aten::", 0) != 0;
  std::string op = library ? n.kind : n.kind.substr(n.kind.rfind("::") + 2);
  bool inplace = !library && op.size() > 1 && op.back() == '_' && op.rfind("__", 0) != 0;
  if (inplace) op.pop_back();
  AtenLowering fn = aten_table().find(op);
  bool lowered = false;
  try {
    lowered = fn && fn(*this, &n, op);
  } catch (const std::out_of_range&) {  // an overload with fewer arguments than the lowering reads
    lowered = false;
  }
  // An in-place op returns the tensor it mutated: later readers of its input see the result. Its node is
  // marked: the result shares its input's storage (what --train counts as kept for backward).
  if (lowered && inplace && !n.outs.empty() && !n.ins.empty() && env_.count(n.outs[0])) {
    const JV& out = env_[n.outs[0]];
    if (out.kind == JV::Tensor && out.ir >= 0 && static_cast<size_t>(out.ir) < g_.values.size()) {
      const int producer = g_.values[static_cast<size_t>(out.ir)].producer;
      if (producer >= 0) g_.nodes[static_cast<size_t>(producer)].attrs[kInplaceAttr] = Attribute::of_int(1);
    }
    env_[n.ins[0]] = out;
  }
  return lowered;
}

// ---- values -------------------------------------------------------------------------------------
JV& AtenLowerer::get(const AtenValue* v) {
  auto it = env_.find(v);
  if (it == env_.end()) it = env_.emplace(v, unbound(v)).first;
  return it->second;
}

JV* AtenLowerer::arg(const AtenNode* n, const std::string& name) {
  if (!n->arg_names) return nullptr;
  const auto& names = *n->arg_names;
  for (size_t i = 0; i < names.size() && i < n->ins.size(); ++i)
    if (names[i] == name) return &get(n->ins[i]);
  return nullptr;
}

// `name`, else the first of name_1, name_2, ... not taken. Names are never removed, so the search for a name
// goes on from where it stopped last time (thousands of "pack" values: linear, not quadratic).
int AtenLowerer::new_value(const std::string& name) {
  const size_t before = g_.values.size();
  const int vi = g_.add_value(name);  // the existing value's index when the name is taken
  if (g_.values.size() > before) return vi;
  int& k = next_suffix_[name];
  std::string n;
  do n = name + "_" + std::to_string(++k);
  while (g_.find(n) >= 0);
  return g_.add_value(n);
}

int AtenLowerer::const_value(DType t, Shape s, ConstData d) {
  int vi = new_value("const_" + std::to_string(const_count_++));
  flopwise::Value& v = g_.values[vi];
  v.dtype = t;
  v.shape = std::move(s);
  v.data = std::move(d);
  v.synthetic = true;
  return vi;
}
int AtenLowerer::const_ints(const std::vector<int64_t>& xs) {
  ConstData d;
  for (auto x : xs) d.ints.push_back(Dim(x));
  return const_value(DType::Int64, Shape({Dim(static_cast<int64_t>(xs.size()))}), d);
}
int AtenLowerer::const_int(int64_t x) {
  ConstData d;
  d.ints.push_back(Dim(x));
  return const_value(DType::Int64, Shape::scalar(), d);
}
int AtenLowerer::const_float(double x) {
  ConstData d;
  d.is_float = true;
  d.floats.push_back(x);
  return const_value(DType::Float32, Shape::scalar(), d);
}

int AtenLowerer::tensor_const(const TensorConst& t) {
  std::vector<Dim> dims;
  for (auto x : t.sizes) dims.push_back(Dim(x));
  int vi = new_value("const_" + std::to_string(const_count_++));
  flopwise::Value& v = g_.values[vi];
  v.dtype = t.dtype;
  v.shape = Shape(dims);
  if (t.data) v.data = *t.data;
  v.synthetic = true;
  return vi;
}

int AtenLowerer::as_ir(const JV& j) {
  switch (j.kind) {
    case JV::Tensor:
    case JV::ScalarIR:
    case JV::IntsIR:
      return j.ir;
    case JV::Known:
      if (j.iv.isInt()) return const_int(j.iv.toInt());
      if (j.iv.isBool()) {
        ConstData d;
        d.ints.push_back(Dim(j.iv.toBool() ? 1 : 0));
        return const_value(DType::Bool, Shape::scalar(), d);
      }
      if (j.iv.isDouble()) return const_float(j.iv.toDouble());
      if (j.iv.isIntList()) return const_ints(j.iv.toIntVector());
      if (j.iv.isTensor()) return tensor_const(j.iv.toTensor());
      return -1;
    case JV::List:
      return pack_ints(j);
    default:
      return -1;
  }
}

int AtenLowerer::pack_ints(const JV& j) {
  if (j.kind == JV::IntsIR) return j.ir;
  if (j.kind == JV::Known && j.iv.isIntList()) return const_ints(j.iv.toIntVector());
  if (j.kind == JV::Known && j.iv.isInt()) return const_ints({j.iv.toInt()});
  if (j.kind == JV::ScalarIR || j.kind == JV::Tensor)
    return emit("PackScalars", {j.ir}, {"pack"}, {}, "flopwise")[0];
  if (j.kind != JV::List) return -1;
  if (auto k = known_ints(j)) return const_ints(*k);
  std::vector<int> ins;
  for (const auto& it : *j.items) {
    if (it.kind != JV::Known && it.kind != JV::ScalarIR && it.kind != JV::Tensor) return -1;
    ins.push_back(as_ir(it));
  }
  return emit("PackScalars", ins, {"pack"}, {}, "flopwise")[0];
}

std::optional<int64_t> AtenLowerer::known_int(const JV& j) {
  if (j.kind == JV::Known && j.iv.isInt()) return j.iv.toInt();
  if (j.kind == JV::Known && j.iv.isBool()) return j.iv.toBool() ? 1 : 0;
  if (j.kind == JV::ScalarIR || j.kind == JV::Tensor) return known_scalar(j);
  return std::nullopt;
}
std::optional<double> AtenLowerer::known_num(const JV& j) {
  if (j.kind == JV::ScalarIR || j.kind == JV::Tensor) {
    const auto& v = facts(j.ir);
    if (v.shape.rank_known && v.shape.rank() == 0 && v.data && v.data->is_float && v.data->floats.size() == 1)
      return v.data->floats[0];
    if (auto x = known_scalar(j)) return static_cast<double>(*x);
    return std::nullopt;
  }
  if (j.kind != JV::Known) return std::nullopt;
  if (j.iv.isDouble()) return j.iv.toDouble();
  if (j.iv.isInt()) return static_cast<double>(j.iv.toInt());
  if (j.iv.isBool()) return j.iv.toBool() ? 1.0 : 0.0;
  return std::nullopt;
}
std::optional<std::vector<int64_t>> AtenLowerer::known_ints(const JV& j) {
  if (j.kind == JV::Known && j.iv.isIntList()) return j.iv.toIntVector();
  if (j.kind == JV::Known && j.iv.isInt()) return std::vector<int64_t>{j.iv.toInt()};
  if (j.kind == JV::List) {
    std::vector<int64_t> r;
    for (const auto& it : *j.items) {
      auto x = known_int(it);
      if (!x) return std::nullopt;
      r.push_back(*x);
    }
    return r;
  }
  return std::nullopt;
}
std::optional<std::vector<double>> AtenLowerer::known_doubles(const JV& j) {
  if (j.kind == JV::Known && j.iv.isDoubleList()) return j.iv.toDoubleVector();
  if (j.kind == JV::Known && j.iv.isIntList()) {
    std::vector<double> r;
    for (auto x : j.iv.toIntVector()) r.push_back(static_cast<double>(x));
    return r;
  }
  if (j.kind == JV::List) {
    std::vector<double> r;
    for (const auto& it : *j.items) {
      auto x = known_num(it);
      if (!x) return std::nullopt;
      r.push_back(*x);
    }
    return r;
  }
  return std::nullopt;
}

std::optional<Known> AtenLowerer::known_value(const JV& j) {
  if (j.kind == JV::Known) return j.iv;
  if (j.kind == JV::ScalarIR || j.kind == JV::Tensor) {
    const auto& v = facts(j.ir);
    if (!v.shape.rank_known || v.shape.rank() != 0) return std::nullopt;
    if (v.dtype == DType::Bool) {
      if (auto x = known_scalar(j)) return Known::of_bool(*x != 0);
      return std::nullopt;
    }
    if (is_float(v.dtype)) {
      if (auto x = known_num(j)) return Known::of_double(*x);
      return std::nullopt;
    }
    if (auto x = known_scalar(j)) return Known::of_int(*x);
    return std::nullopt;
  }
  if (j.kind != JV::List) return std::nullopt;
  bool ints = true;
  std::vector<Known> xs;
  for (const auto& it : *j.items) {
    auto x = known_value(it);
    if (!x) return std::nullopt;
    ints = ints && x->isInt();
    xs.push_back(*x);
  }
  if (ints && !xs.empty()) {
    std::vector<int64_t> v;
    for (const auto& x : xs) v.push_back(x.toInt());
    return Known::of_ints(std::move(v));
  }
  return Known::of_tuple(std::move(xs));
}

// Items of a list value: a list, a known list, or a runtime int list (aten::size) of known length, whose
// elements are then its scalars (known when the shape pass computed them).
std::optional<std::vector<JV>> AtenLowerer::list_items(const JV& j) {
  if (j.kind == JV::List) return *j.items;
  std::vector<JV> xs;
  if (j.kind == JV::Known) {
    auto e = j.iv.elements();
    if (!e) return std::nullopt;
    for (auto& x : *e) xs.push_back(JV::known(std::move(x)));
    return xs;
  }
  if (j.kind != JV::IntsIR) return std::nullopt;
  const auto& v = facts(j.ir);
  if (!v.shape.rank_known || v.shape.rank() != 1 || !v.shape.dims[0].is_known()) return std::nullopt;
  for (int64_t i = 0; i < v.shape.dims[0].value(); ++i) {
    if (v.data && !v.data->is_float && v.data->ints[i].is_known()) {
      xs.push_back(JV::known(Known::of_int(v.data->ints[i].value())));
      continue;
    }
    int r = emit("Gather", {j.ir, const_int(i)}, {"item"}, {{"axis", ai(0)}})[0];
    xs.push_back(JV::of_ir(r, JV::ScalarIR));
  }
  return xs;
}

// ---- shape facts ----------------------------------------------------------------------------------
const flopwise::Value& AtenLowerer::facts(int ir) {
  if (inferred_upto_ < g_.nodes.size()) {
    infer_node_range(g_, inferred_upto_, g_.nodes.size(), facts_result_);
    inferred_upto_ = g_.nodes.size();
  }
  return g_.values[ir];
}

std::optional<int64_t> AtenLowerer::known_rank(const JV& j) {
  if (j.kind != JV::Tensor && j.kind != JV::ScalarIR && j.kind != JV::IntsIR) return std::nullopt;
  const auto& s = facts(j.ir).shape;
  if (!s.rank_known) return std::nullopt;
  return static_cast<int64_t>(s.rank());
}

std::optional<int64_t> AtenLowerer::known_scalar(const JV& j) {
  if (j.kind == JV::Known) {
    if (j.iv.isInt()) return j.iv.toInt();
    if (j.iv.isBool()) return j.iv.toBool() ? 1 : 0;
    return std::nullopt;
  }
  if (j.kind != JV::Tensor && j.kind != JV::ScalarIR) return std::nullopt;
  const auto& v = facts(j.ir);
  if (!v.data || v.data->size() != 1 || !v.shape.rank_known || v.shape.rank() > 1) return std::nullopt;
  if (v.data->is_float) {
    double f = v.data->floats[0];
    if (!std::isfinite(f) || f != std::floor(f) || std::fabs(f) > 9.0e18) return std::nullopt;
    return static_cast<int64_t>(f);
  }
  if (!v.data->ints[0].is_known()) return std::nullopt;
  return v.data->ints[0].value();
}

std::optional<bool> AtenLowerer::known_bool(const JV& j) {
  if (j.kind == JV::Known && j.iv.isBool()) return j.iv.toBool();
  if (j.kind == JV::Known && j.iv.isDouble()) return j.iv.toDouble() != 0.0;  // `if self.dropout:`
  if (j.kind == JV::Known && j.iv.isNone()) return false;
  if (j.kind == JV::Known && j.iv.isString()) return !j.iv.toStringRef().empty();
  if (auto x = known_scalar(j)) return *x != 0;
  return std::nullopt;
}

// ---- emission -----------------------------------------------------------------------------------
flopwise::Node& AtenLowerer::add_node(const std::string& op, const std::vector<int>& ins, Attrs attrs,
                                      const std::string& domain, int opset) {
  flopwise::Node& n = g_.nodes.emplace_back();  // built in place
  n.op = op;
  n.domain = domain;
  n.opset = opset ? opset : (domain.empty() ? kTorchOpset : 1);
  n.inputs = ins;
  n.attrs = std::move(attrs);
  n.scope = scope_;
  n.scope_classes = classes_;
  name_buf_.clear();
  if (!scope_.empty()) name_buf_ += scope_.back();
  name_buf_ += '/';
  name_buf_ += op;
  int c = name_count_[name_buf_]++;
  n.name = c ? name_buf_ + "_" + std::to_string(c) : name_buf_;
  return n;
}

std::vector<int> AtenLowerer::emit(const std::string& op, const std::vector<int>& ins,
                                   const std::vector<std::string>& outs, Attrs attrs,
                                   const std::string& domain, int opset) {
  const int idx = static_cast<int>(g_.nodes.size());
  add_node(op, ins, std::move(attrs), domain, opset);
  std::vector<int> res;
  res.reserve(outs.size());
  for (const auto& o : outs) {
    int vi = new_value(o);
    g_.values[vi].producer = idx;
    res.push_back(vi);
  }
  g_.nodes[static_cast<size_t>(idx)].outputs = res;
  return res;
}

int AtenLowerer::emit_one(const std::string& op, const std::vector<int>& ins, const std::string& out,
                          Attrs attrs, const std::string& domain, int opset) {
  const int idx = static_cast<int>(g_.nodes.size());
  add_node(op, ins, std::move(attrs), domain, opset);
  const int vi = new_value(out);
  g_.values[vi].producer = idx;
  g_.nodes[static_cast<size_t>(idx)].outputs.push_back(vi);
  return vi;
}

int AtenLowerer::emit_to(const AtenValue* o, const std::string& op, const std::vector<int>& ins, Attrs attrs,
                         const std::string& domain, int opset) {
  int r = emit_one(op, ins, ir_name(o), std::move(attrs), domain, opset);
  set_ir(o, r);
  return r;
}

int AtenLowerer::emit_tmp(const AtenValue* o, const std::string& what, const std::string& op,
                          const std::vector<int>& ins, Attrs attrs, const std::string& domain, int opset) {
  return emit_one(op, ins, tmp(o, what), std::move(attrs), domain, opset);
}

void AtenLowerer::set_ir(const AtenValue* o, int ir, JV::Kind k) {
  auto [it, fresh] = env_.try_emplace(o);
  if (!fresh) it->second = JV();
  it->second.kind = k;
  it->second.ir = ir;
}

// The IR nodes of one call, and consecutive calls of one module, share one list.
void AtenLowerer::set_scope(std::vector<std::string> scope, std::vector<std::string> classes) {
  if (!(scope_ == scope)) scope_ = std::move(scope);
  if (!(classes_ == classes)) classes_ = std::move(classes);
}

}  // namespace flopwise
