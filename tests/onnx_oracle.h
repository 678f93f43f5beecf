// tests/onnx_oracle.h — ONNX backend node tests and ONNX's own shape inference as oracles.
// Owns: preparing a backend test case the way a user meeting the model would (declared shapes
// stripped, integer inputs and tiny float inputs pinned by value), judging flopwise's and ONNX's
// inferred output shapes against the reference outputs, and collecting fully known shapes per value
// for the agreement test. Used by tests/test_conformance.cc, tests/test_onnx_agreement.cc and
// tools/conformance_report.cc; it touches no library internals.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fwconf {

// Where the Debian package libonnx-testdata puts the node tests; FLOPWISE_ONNX_NODE_TESTS overrides.
std::string backend_node_dir();

// Sorted test_* directory names under `root` (empty when `root` does not exist).
std::vector<std::string> list_backend_cases(const std::string& root);

struct BackendCase {
  std::string name;                            // "test_conv_with_strides_padding"
  bool tensor_outputs = false;                 // every graph output is a tensor (the judged set)
  onnx::ModelProto model;                      // prepared: declared shapes stripped, inputs pinned
  std::string bytes;                           // `model` serialised once
  std::vector<std::vector<int64_t>> expected;  // dims of output_<k>.pb per graph output
  std::vector<std::string> pinned;             // inputs turned into initializers
  std::string load_error;                      // non-empty: the case could not be prepared
};

// Loads <root>/<name>/model.onnx and test_data_set_0, and prepares it:
//  - graph.output shapes cleared (elem_type kept), value_info cleared in every graph;
//  - integer/bool inputs and float inputs of at most 4 elements become initializers holding the
//    values of input_<k>.pb (IR < 4: also kept as inputs, as that IR requires);
//  - other tensor inputs keep their declared shape unless it has a symbolic/unknown dim, in which
//    case input_<k>.pb's dims are used.
BackendCase load_backend_case(const std::string& root, const std::string& name);

struct Verdict {
  bool pass = false;
  std::string reason;  // why not: "unsupported op: X", "output 0 'y': got 2x?, want 2x3", "exception: ..."
};

// flopwise::import_onnx_bytes + flopwise::infer_shapes on the prepared model.
Verdict judge_flopwise(const BackendCase& c);
// onnx::shape_inference::InferShapes (data propagation on, errors per node suppressed) on a copy.
Verdict judge_onnx(const BackendCase& c);

// Fully known shapes (every dim a known int) by value name, top-level graph only.
using ShapeMap = std::map<std::string, std::vector<int64_t>>;
// Runs ONNX's InferShapes on a copy of `m`; throws what ONNX throws.
ShapeMap onnx_full_shapes(const onnx::ModelProto& m);
// Imports `bytes` with flopwise and runs infer_shapes; throws what flopwise throws.
ShapeMap flopwise_full_shapes(const std::string& bytes, const std::string& name);

// Clears value_info in every graph (subgraphs included) and the shapes of the top-level outputs.
void strip_declared_shapes(onnx::ModelProto& m);

// Reads `path` whole; throws std::runtime_error when it cannot.
std::string read_file(const std::string& path);

// tests/conformance_expectations.txt: `test_name<TAB>reason` lines, '#' comments, blank lines.
// Throws std::runtime_error for a line without a reason.
std::map<std::string, std::string> read_expectations(const std::string& path);

std::string dims_str(const std::vector<int64_t>& dims);  // "2x3", "scalar"

}  // namespace fwconf
