// include/flopwise/roofline.h — the roofline on named hardware: per node and per module scope, the time
// bound max(FLOPs / peak, bytes / bandwidth), whether compute or memory bounds it, and the model's latency
// lower bound. The hardware table is src/analysis/hardware.def (each row with its public source); a user's
// device comes from a TOML file (src/analysis/hardware_file.cc); the text is src/writers/roofline_text.cc.
#pragma once

#include <array>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "flopwise/cost.h"

namespace flopwise {

// The rates a roofline picks from: non-tensor FP32, and the tensor-core types.
enum class PeakType { Float32, TF32, Float16, BFloat16, Float8, Int8, Count };
const char* peak_type_name(PeakType t);

struct Hardware {
  std::string name;
  std::array<double, static_cast<size_t>(PeakType::Count)> peak{};  // FLOP/s (ops/s for int8); 0: not given
  double bandwidth = 0;                                             // bytes/s
  double onchip_mb = 0;
  std::vector<std::string> sources;
  bool tf32 = false;  // float32 products on tensor cores (torch.backends.cuda.matmul.allow_tf32)
  // float32 convolutions on tensor cores (torch.backends.cudnn.allow_tf32, LibTorch's default): set by
  // `flopwise run` on CUDA when the runtime reports it, since cuDNN then runs Conv/ConvTranspose in TF32
  bool tf32_conv = false;
};

std::vector<std::string> hardware_names();  // the table's devices
std::string hardware_names_text();          // "a100-40gb, a100-80gb, ...": the same, for help text
// A device of the table by name; with ":tf32" appended float32 products use the TF32 rate. Throws UsageError
// naming the known devices.
Hardware find_hardware(const std::string& name);
// A user's device from TOML:  name = "my-gpu"  bandwidth_gbs = 900  [peak_tflops] float32 = 30  float16 = 120
// ... Throws UsageError naming the file and key.
Hardware load_hardware_file(const std::string& path);
// What --hardware NAME or --hardware-file F names (exactly one of them); throws UsageError for both.
Hardware hardware_of(const std::string& name, const std::string& file);

struct RooflineEntry {
  std::string scope;  // full path; "" for the whole model
  double flops = 0, bytes = 0;
  double seconds = 0;  // the sum of its nodes' bounds
  double compute_seconds = 0,
         memory_seconds = 0;  // the parts of `seconds` spent in compute- / memory-bound nodes
  int64_t nodes = 0, compute_bound = 0, memory_bound = 0;
  double intensity() const { return bytes > 0 ? flops / bytes : 0; }
};

struct RooflineReport {
  Hardware hw;
  RooflineEntry total;                // latency lower bound: the sum of every node's bound
  std::vector<RooflineEntry> scopes;  // every scope of the report's tree, in tree order
  int64_t unbounded_nodes = 0;        // counts not known (symbolic or unknown) or no peak for their type
};

// The peak a node runs at: its MAC type's tensor rate (float32 at the FP32 rate, or TF32), else FP32.
PeakType node_peak_type(const NodeReport& n, bool tf32);
// The row a node runs on with hw: node_peak_type with TF32 for a convolution when hw.tf32_conv.
PeakType node_peak_type(const NodeReport& n, const Hardware& hw);
// A node's bound: max(flops / peak, bytes / bandwidth), and whether compute is the larger.
double node_bound_seconds(double flops, double bytes, double peak, double bandwidth, bool* compute_bound);

// One node's bound on `hw`: false where its counts are not numbers or its type has no peak.
bool node_bound(const NodeReport& n, const Hardware& hw, double* seconds, bool* compute_bound);

// The bound of report node `i`: a control-flow node (Report::body_work) is the nodes of its bodies, each at
// its own precision's peak, summed; any other node as above. False where a count is not a number, a type
// has no peak, or a control-flow node's bodies are not known.
struct NodeBound {
  double seconds = 0, compute_seconds = 0;  // compute_seconds: the part spent in compute-bound nodes
  double flops = 0, bytes = 0;
  bool compute_bound() const { return compute_seconds > seconds - compute_seconds; }
};
bool node_bound(const Report& r, size_t i, const Hardware& hw, NodeBound* out);

RooflineReport roofline(const Report& r, const Hardware& hw);
void write_roofline_text(std::ostream& os, const RooflineReport& rf, int top);

}  // namespace flopwise
