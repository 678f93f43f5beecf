// Agreement with ONNX's own shape inference (onnx::shape_inference::InferShapes, data propagation on):
// for every value both infer to a fully known shape, the shapes must be equal. Runs over every *.onnx
// under models/ (value_info and output shapes stripped; external weights are never read) and over a
// few multi-node ONNX backend test models prepared as in the conformance test.
#include <doctest/doctest.h>
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>

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
  std::vector<std::string> disagreements;
};

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
    if (it == ours.end()) continue;
    ++a->compared;
    if (it->second != dims)
      a->disagreements.push_back(label + ": '" + name + "' flopwise " + fwconf::dims_str(it->second) +
                                 ", ONNX " + fwconf::dims_str(dims));
  }
}

// Multi-node backend models (intermediate values to compare) and a few single-op staples.
const char* const kBackendCases[] = {
    "test_layer_normalization_4d_axis1_expanded",
    "test_layer_normalization_3d_axis_negative_2_epsilon_expanded",
    "test_softmax_axis_1_expanded",
    "test_logsoftmax_negative_axis_expanded",
    "test_sce_NCd1d2d3d4d5_mean_weight_expanded",
    "test_nllloss_NCd1d2_with_weight_reduction_mean_expanded",
    "test_range_float_type_positive_delta_expanded",
    "test_hardswish_expanded",
    "test_mvn_expanded",
    "test_dynamicquantizelinear_expanded",
    "test_conv_with_strides_and_asymmetric_padding",
    "test_gemm_all_attributes",
    "test_reshape_reordered_all_dims",
    "test_resize_upsample_sizes_nearest",
    "test_maxpool_2d_same_upper",
    "test_lstm_defaults",
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
  }

  const std::string root = fwconf::backend_node_dir();
  int backend = 0;
  for (const char* name : kBackendCases) {
    fwconf::BackendCase c = fwconf::load_backend_case(root, name);
    if (!c.load_error.empty()) continue;  // test data not installed
    ++backend;
    compare(name, c.model, c.bytes, &a);
  }
  MESSAGE("agreement: " << files.size() << " models/ files, " << backend << " backend models, " << a.compared
                        << " shapes compared");
  std::string list;
  for (const auto& s : a.disagreements) list += "\n  " + s;
  INFO("disagreements:" << list);
  CHECK(a.disagreements.empty());
  if (!files.empty() || backend > 0) CHECK(a.compared > 0);
}
