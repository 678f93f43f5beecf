// tests/onnx_oracle.cc — ONNX backend node tests and ONNX's own shape inference as oracles (onnx_oracle.h): a
// case loaded and stripped as a user would meet it, flopwise's and ONNX's inferred shapes judged against the
// reference outputs.
#include "onnx_oracle.h"

#include <dirent.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "flopwise/infer.h"
#include "flopwise/onnx_import.h"

namespace fwconf {

namespace {

bool is_dir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool is_file(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_integer_elem(int t) {
  using T = onnx::TensorProto;
  switch (t) {
    case T::INT8:
    case T::UINT8:
    case T::INT16:
    case T::UINT16:
    case T::INT32:
    case T::UINT32:
    case T::INT64:
    case T::UINT64:
    case T::BOOL:
      return true;
    default:
      return false;
  }
}
bool is_float_elem(int t) {
  using T = onnx::TensorProto;
  return t == T::FLOAT || t == T::DOUBLE || t == T::FLOAT16 || t == T::BFLOAT16;
}

// Float inputs this small are pinned by value (Resize scales, Clip bounds, ...).
constexpr int64_t kPinnedFloatElements = 4;

void strip_graph_value_info(onnx::GraphProto* g) {
  g->clear_value_info();
  for (auto& n : *g->mutable_node())
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) strip_graph_value_info(a.mutable_g());
      for (auto& sg : *a.mutable_graphs()) strip_graph_value_info(&sg);
    }
}

bool has_full_shape(const onnx::TypeProto& t, std::vector<int64_t>* dims) {
  if (!t.has_tensor_type() || !t.tensor_type().has_shape()) return false;
  dims->clear();
  for (const auto& d : t.tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return false;
    dims->push_back(d.dim_value());
  }
  return true;
}

std::string onnx_shape_str(const onnx::TypeProto& t) {
  if (!t.has_tensor_type()) return "(not a tensor)";
  if (!t.tensor_type().has_shape()) return "*";
  const auto& s = t.tensor_type().shape();
  if (s.dim_size() == 0) return "scalar";
  std::string out;
  for (int i = 0; i < s.dim_size(); ++i) {
    if (i) out += "x";
    const auto& d = s.dim(i);
    out += d.has_dim_value() ? std::to_string(d.dim_value()) : d.has_dim_param() ? d.dim_param() : "?";
  }
  return out;
}

onnx::ShapeInferenceOptions onnx_options() {
  // check_type=false, error_mode=0 (node errors suppressed), data propagation on.
  return onnx::ShapeInferenceOptions(false, 0, true);
}

}  // namespace

std::string backend_node_dir() {
  const char* env = std::getenv("FLOPWISE_ONNX_NODE_TESTS");
  return env && *env ? env : "/usr/share/libonnx-testdata/data/node";
}

std::vector<std::string> list_backend_cases(const std::string& root) {
  std::vector<std::string> out;
  DIR* d = ::opendir(root.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n.rfind("test_", 0) == 0 && is_dir(root + "/" + n)) out.push_back(n);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string dims_str(const std::vector<int64_t>& dims) {
  if (dims.empty()) return "scalar";
  std::string out;
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? "x" : "") + std::to_string(dims[i]);
  return out;
}

void strip_declared_shapes(onnx::ModelProto& m) {
  auto* g = m.mutable_graph();
  strip_graph_value_info(g);
  for (auto& o : *g->mutable_output())
    if (o.type().has_tensor_type()) o.mutable_type()->mutable_tensor_type()->clear_shape();
}

BackendCase load_backend_case(const std::string& root, const std::string& name) {
  BackendCase c;
  c.name = name;
  const std::string dir = root + "/" + name;
  try {
    if (!c.model.ParseFromString(read_file(dir + "/model.onnx"))) {
      c.load_error = "model.onnx does not parse";
      return c;
    }
  } catch (const std::exception& e) {
    c.load_error = e.what();
    return c;
  }
  auto* g = c.model.mutable_graph();
  c.tensor_outputs = true;
  for (const auto& o : g->output()) c.tensor_outputs &= o.type().has_tensor_type();
  strip_declared_shapes(c.model);

  std::vector<std::string> init_names;
  for (const auto& t : g->initializer()) init_names.push_back(t.name());
  auto is_init = [&](const std::string& n) {
    return std::find(init_names.begin(), init_names.end(), n) != init_names.end();
  };
  const bool inputs_list_initializers = c.model.ir_version() < 4;
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  int k = 0;  // index among the graph inputs that are fed data (input_<k>.pb)
  for (const auto& in : g->input()) {
    if (is_init(in.name())) {
      *kept.Add() = in;
      continue;
    }
    const std::string pb = dir + "/test_data_set_0/input_" + std::to_string(k++) + ".pb";
    onnx::TensorProto t;
    if (!in.type().has_tensor_type() || !is_file(pb) || !t.ParseFromString(read_file(pb))) {
      *kept.Add() = in;  // sequences, optionals, or no data: as declared
      continue;
    }
    int64_t numel = 1;
    for (auto d : t.dims()) numel *= d;
    const int elem = in.type().tensor_type().elem_type();
    const bool pin = is_integer_elem(elem) || (is_float_elem(elem) && numel <= kPinnedFloatElements);
    onnx::ValueInfoProto vi = in;
    std::vector<int64_t> declared;
    if (pin || !has_full_shape(in.type(), &declared)) {
      auto* shape = vi.mutable_type()->mutable_tensor_type()->mutable_shape();
      shape->clear_dim();
      for (auto d : t.dims()) shape->add_dim()->set_dim_value(d);
    }
    if (pin) {
      t.set_name(in.name());
      // The test data stores bfloat16 as uint16 (numpy has no bfloat16): same bytes, declared type wins.
      if (elem != 0 && elem != t.data_type()) t.set_data_type(elem);
      *g->add_initializer() = t;
      c.pinned.push_back(in.name());
      if (!inputs_list_initializers) continue;
    }
    *kept.Add() = vi;
  }
  g->mutable_input()->Swap(&kept);

  if (c.tensor_outputs) {
    for (int i = 0; i < g->output_size(); ++i) {
      const std::string pb = dir + "/test_data_set_0/output_" + std::to_string(i) + ".pb";
      onnx::TensorProto t;
      if (!is_file(pb) || !t.ParseFromString(read_file(pb))) {
        c.load_error = "output_" + std::to_string(i) + ".pb is missing or not a TensorProto";
        return c;
      }
      c.expected.emplace_back(t.dims().begin(), t.dims().end());
    }
  }
  c.bytes = c.model.SerializeAsString();
  return c;
}

Verdict judge_flopwise(const BackendCase& c) {
  Verdict v;
  if (!c.load_error.empty()) {
    v.reason = "load: " + c.load_error;
    return v;
  }
  try {
    flopwise::Model m = flopwise::import_onnx_bytes(c.bytes, c.name);
    flopwise::InferResult r = flopwise::infer_shapes(m, {});
    const auto& g = m.graph;
    std::string wrong;  // first failing output, prefixed "unknown: " or "wrong: "
    for (size_t i = 0; i < g.outputs.size() && i < c.expected.size() && wrong.empty(); ++i) {
      const flopwise::Value& val = g.values[g.outputs[i]];
      const auto& want = c.expected[i];
      bool ok = val.shape.fully_known() && val.shape.rank() == want.size();
      for (size_t d = 0; ok && d < want.size(); ++d) ok = val.shape.dims[d].value() == want[d];
      if (!ok)
        wrong = std::string(val.shape.fully_known() ? "wrong: " : "unknown: ") + "output " +
                std::to_string(i) + " '" + val.name + "': got " + val.shape.str() + ", want " +
                dims_str(want);
    }
    if (g.outputs.size() != c.expected.size())
      wrong = "wrong: graph has " + std::to_string(g.outputs.size()) + " outputs, reference has " +
              std::to_string(c.expected.size());
    if (wrong.empty()) {
      v.pass = true;
      return v;
    }
    v.reason = wrong;
    if (!r.unsupported.empty()) {
      std::string ops;
      for (const auto& [op, nodes] : r.unsupported) ops += (ops.empty() ? "" : ", ") + op;
      v.reason = "unsupported op: " + ops + " (" + wrong + ")";
    } else {
      for (const auto& w : r.warnings)
        if (w.rfind("shape contradiction", 0) == 0) {
          v.reason = w + " (" + wrong + ")";
          break;
        }
    }
  } catch (const std::exception& e) {
    v.reason = std::string("exception: ") + e.what();
  }
  return v;
}

Verdict judge_onnx(const BackendCase& c) {
  Verdict v;
  if (!c.load_error.empty()) {
    v.reason = "load: " + c.load_error;
    return v;
  }
  onnx::ModelProto m = c.model;
  try {
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), onnx_options());
  } catch (const std::exception& e) {
    v.reason = std::string("exception: ") + e.what();
    return v;
  }
  const auto& g = m.graph();
  for (int i = 0; i < g.output_size() && i < static_cast<int>(c.expected.size()); ++i) {
    std::vector<int64_t> got;
    if (!has_full_shape(g.output(i).type(), &got) || got != c.expected[i]) {
      v.reason = "output " + std::to_string(i) + " '" + g.output(i).name() + "': got " +
                 onnx_shape_str(g.output(i).type()) + ", want " + dims_str(c.expected[i]);
      return v;
    }
  }
  v.pass = true;
  return v;
}

ShapeMap onnx_full_shapes(const onnx::ModelProto& model) {
  onnx::ModelProto m = model;
  onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), onnx_options());
  ShapeMap out;
  std::vector<int64_t> dims;
  const auto& g = m.graph();
  for (const auto* list : {&g.input(), &g.value_info(), &g.output()})
    for (const auto& vi : *list)
      if (has_full_shape(vi.type(), &dims)) out[vi.name()] = dims;
  return out;
}

ShapeMap flopwise_full_shapes(const std::string& bytes, const std::string& name) {
  flopwise::Model m = flopwise::import_onnx_bytes(bytes, name);
  flopwise::infer_shapes(m, {});
  ShapeMap out;
  for (const auto& v : m.graph.values) {
    if (v.synthetic || !v.shape.fully_known()) continue;
    std::vector<int64_t> dims;
    for (const auto& d : v.shape.dims) dims.push_back(d.value());
    out[v.name] = dims;
  }
  return out;
}

std::map<std::string, std::string> read_expectations(const std::string& path) {
  std::map<std::string, std::string> out;
  std::istringstream in(read_file(path));
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    auto tab = line.find('\t');
    std::string reason = tab == std::string::npos ? "" : line.substr(tab + 1);
    if (reason.find_first_not_of(" \t") == std::string::npos)
      throw std::runtime_error(path + ":" + std::to_string(line_no) + ": expected 'test_name<TAB>reason'");
    std::string name = line.substr(0, tab);
    if (out.count(name))
      throw std::runtime_error(path + ":" + std::to_string(line_no) + ": duplicate " + name);
    out[name] = reason;
  }
  return out;
}

}  // namespace fwconf
