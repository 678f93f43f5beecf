// tests/test_onnx_agreement.cc — agreement with ONNX's own shape inference
// (onnx::shape_inference::InferShapes, data propagation on): for every value both infer to a fully known
// shape, the shapes must be equal. Runs over every *.onnx under models/ (value_info and output shapes
// stripped; external weights are never read), once as declared and once with every symbolic input dim pinned
// to a small distinct value (so that both sides reach full shapes throughout), and over every ONNX backend
// node test prepared as in the conformance test (intermediate values of the multi-node *_expanded cases
// included).
#include <dirent.h>
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "onnx_oracle.h"

namespace {

void find_onnx_files(const std::string& dir, std::vector<std::string>* out) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    std::string p = dir + "/" + n;
    struct stat st;
    if (::stat(p.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode))
      find_onnx_files(p, out);
    else if (n.size() > 5 && n.compare(n.size() - 5, 5, ".onnx") == 0)
      out->push_back(p);
  }
  ::closedir(d);
}

struct Agreement {
  int compared = 0;
  int onnx_only = 0;  // ONNX knows the full shape, flopwise does not
  std::vector<std::string> disagreements;
};

// Replaces every dim_param of the graph inputs by a value: the n-th distinct name gets kPinValues[n]
// (distinct primes, so a dim taken from the wrong symbol shows as a disagreement).
void pin_symbolic_input_dims(onnx::ModelProto& m) {
  static const int64_t kPinValues[] = {2, 7, 5, 3, 11, 13};
  std::map<std::string, int64_t> bound;
  for (auto& in : *m.mutable_graph()->mutable_input()) {
    if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) continue;
    for (auto& d : *in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (d.has_dim_value()) continue;
      std::string key = d.has_dim_param() ? d.dim_param() : "?" + in.name();
      if (!bound.count(key)) bound[key] = kPinValues[bound.size() % 6];
      d.set_dim_value(bound[key]);
    }
  }
}

void compare(const std::string& label, const onnx::ModelProto& stripped, const std::string& bytes,
             Agreement* a) {
  fwconf::ShapeMap theirs;
  try {
    theirs = fwconf::onnx_full_shapes(stripped);
  } catch (const std::exception& e) {
    MESSAGE(label << ": ONNX shape inference throws (" << e.what() << "); not compared");
    return;
  }
  fwconf::ShapeMap ours;
  try {
    ours = fwconf::flopwise_full_shapes(bytes, label);
  } catch (const std::exception& e) {
    a->disagreements.push_back(label + ": flopwise throws: " + e.what());
    return;
  }
  for (const auto& [name, dims] : theirs) {
    auto it = ours.find(name);
    if (it == ours.end()) {
      ++a->onnx_only;
      continue;
    }
    ++a->compared;
    if (it->second != dims)
      a->disagreements.push_back(label + ": '" + name + "' flopwise " + fwconf::dims_str(it->second) +
                                 ", ONNX " + fwconf::dims_str(dims));
  }
}

// Backend cases where ONNX 1.12's own inference is wrong (checked against the reference outputs).
const std::map<std::string, std::string> kOnnxWrong = {
    {"test_stft", "ONNX 1.12 STFT ignores onesided: says 1x15x16x2, reference output is 1x15x9x2"},
    {"test_stft_with_window",
     "ONNX 1.12 STFT ignores onesided: says 1x15x16x2, reference output is 1x15x9x2"},
};

}  // namespace

TEST_CASE("agreement: flopwise and ONNX InferShapes agree on every fully known shape") {
  Agreement a;
  std::vector<std::string> files;
  find_onnx_files(FLOPWISE_SOURCE_DIR "/models", &files);
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    onnx::ModelProto m;
    std::ifstream in(path, std::ios::binary);
    if (!m.ParseFromIstream(&in)) {
      a.disagreements.push_back(path + ": does not parse as ONNX");
      continue;
    }
    fwconf::strip_declared_shapes(m);
    compare(path, m, m.SerializeAsString(), &a);
    pin_symbolic_input_dims(m);
    compare(path + " (symbolic input dims pinned)", m, m.SerializeAsString(), &a);
  }

  const std::string root = fwconf::backend_node_dir();
  int backend = 0;
  for (const auto& name : fwconf::list_backend_cases(root)) {
    if (kOnnxWrong.count(name)) continue;
    fwconf::BackendCase c = fwconf::load_backend_case(root, name);
    if (!c.load_error.empty()) continue;
    ++backend;
    compare(name, c.model, c.bytes, &a);
  }
  MESSAGE("agreement: " << files.size() << " models/ files, " << backend << " backend models, " << a.compared
                        << " shapes compared; " << a.onnx_only << " shapes only ONNX knows fully");
  std::string list;
  for (const auto& s : a.disagreements) list += "\n  " + s;
  INFO("disagreements:" << list);
  CHECK(a.disagreements.empty());
  if (!files.empty() || backend > 0) CHECK(a.compared > 0);
}
