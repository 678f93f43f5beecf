// src/runtime/op_recorder.h — per-op timing with module scopes, for the profiled phase of flopwise-runtime.
// Owns: a RecordFunction callback (scope FUNCTION, this thread only) that records the TOP-LEVEL ops of a
// forward call (a thread-local depth counter: ops an op calls are inside its time), each with its name,
// input and output shapes, ns steady_clock start/end relative to the iteration start, and the module scope it
// ran in: jit::currentModuleHierarchy() read at the op's start, mapped through flopwise::module_scope() to
// the static tree's dotted names ("layer1.0.conv1"; "" for the root). Also locates a failure: the top-level
// op whose end runs while an exception unwinds. Sees LibTorch.
#pragma once

#include <torch/script.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "device_info.h"

namespace flopwise::runtime {

// The shape(s) of one argument or result of an op.
struct ArgShapes {
  enum Kind { Other, Tensor, TensorList } kind = Other;  // Other: not a (defined) tensor
  std::vector<std::vector<int64_t>> shapes;              // Tensor: one; TensorList: one per element
};

struct OpRecord {
  int iter = 0;
  std::string name;
  int scope = 0;                       // index into OpRecorder::scopes()
  int64_t start_ns = 0, end_ns = 0;    // relative to the iteration's start: steady_clock, or CUDA events
  int start_mark = -1, end_mark = -1;  // with CUDA events: the pool's marks, read by end_iter()
  std::vector<ArgShapes> inputs, outputs;
};

struct Scope {
  std::string path;  // dotted, "" for the root
  std::string cls;   // class of the innermost level
};

struct Failure {
  std::string op;
  int scope = -1;  // -1: not known
};

class OpRecorder {
 public:
  // `outputs`: also record each op's output shapes (the verify phase; costs a copy of the outputs per op).
  // `events`: time ops on the device (CUDA) instead of the host clock: an event recorded at the iteration's
  // start and at each top-level op's start and end, read once after the forward (end_iter), so an op's time
  // is its kernels' span on the device and launches still overlap execution.
  explicit OpRecorder(const torch::jit::Module& root, bool outputs = false, CudaEvents* events = nullptr);
  ~OpRecorder();  // removes the callback if still installed
  OpRecorder(const OpRecorder&) = delete;
  OpRecorder& operator=(const OpRecorder&) = delete;

  void install();  // adds the callback on this thread
  void remove();
  // Marks the start of iteration `iter` at `t0` (op times are relative to it).
  void begin_iter(int iter, std::chrono::steady_clock::time_point t0);
  // After the iteration's forward: with events, waits for the device and turns the marks of this
  // iteration's ops into times. False when an event could not be recorded or read (those ops keep their
  // host-clock times).
  bool end_iter();

  const std::vector<OpRecord>& ops() const { return ops_; }
  const std::vector<Scope>& scopes() const { return scopes_; }
  const std::optional<Failure>& failure() const { return failure_; }
  bool records_outputs() const { return outputs_; }

 private:
  static std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn);
  static void on_end(const at::RecordFunction& fn, at::ObserverContext* ctx);
  int current_scope();
  size_t argument_count(const at::RecordFunction& fn);       // the op schema's arguments; SIZE_MAX: unknown
  static size_t return_count(const at::RecordFunction& fn);  // the op schema's results; SIZE_MAX: unknown

  const torch::jit::Module& root_;
  std::string root_class_;
  std::thread::id thread_;
  at::CallbackHandle handle_ = 0;
  bool installed_ = false;
  bool outputs_ = false;
  CudaEvents* events_ = nullptr;
  int iter_ = 0;
  int iter_mark_ = -1;
  size_t iter_first_op_ = 0;
  std::chrono::steady_clock::time_point t0_;
  std::vector<OpRecord> ops_;
  std::vector<Scope> scopes_;
  std::map<std::string, int> scope_ids_;                // joined hierarchy -> index into scopes_
  std::unordered_map<const char*, size_t> arg_counts_;  // by the name pointer of the op's schema
  std::optional<Failure> failure_;
};

// "layer1(Sequential)::forward" -> ("layer1", "Sequential"); exposed for the parser's own checks.
std::pair<std::string, std::string> parse_hierarchy_entry(const std::string& entry);

}  // namespace flopwise::runtime
