// src/runtime/op_recorder.cc — see op_recorder.h.
#include "op_recorder.h"

#include <ATen/record_function.h>
#include <torch/csrc/jit/runtime/interpreter.h>

#include <cmath>
#include <cstdint>
#include <exception>

#include "torch_load.h"
#include "torch_types.h"

namespace flopwise::runtime {
namespace {

OpRecorder* g_recorder = nullptr;  // RecordFunction callbacks are plain function pointers
thread_local int t_depth = 0;      // RecordFunction nesting on this thread while installed

struct TopLevel : at::ObserverContext {
  explicit TopLevel(size_t i) : index(i) {}
  size_t index;
};

ArgShapes shapes_of(const c10::IValue& v) {
  ArgShapes a;
  auto dims = [](const at::Tensor& t) { return std::vector<int64_t>(t.sizes().begin(), t.sizes().end()); };
  if (v.isTensor()) {
    if (v.toTensor().defined()) a.kind = ArgShapes::Tensor, a.shapes.push_back(dims(v.toTensor()));
  } else if (v.isTensorList()) {
    a.kind = ArgShapes::TensorList;
    for (const at::Tensor& t : v.toTensorList().vec())
      a.shapes.push_back(t.defined() ? dims(t) : std::vector<int64_t>{});
  }
  return a;
}

int64_t since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::pair<std::string, std::string> parse_hierarchy_entry(const std::string& entry) {
  // Entries are "instance(Class)::method"; the first frame's instance is "TOP", a method of the same
  // module "SELF". The class is the unqualified type name.
  size_t colons = entry.rfind("::");
  std::string head = colons == std::string::npos ? entry : entry.substr(0, colons);
  size_t open = head.find('(');
  if (open == std::string::npos || head.back() != ')') return {head, ""};
  return {head.substr(0, open), head.substr(open + 1, head.size() - open - 2)};
}

OpRecorder::OpRecorder(const torch::jit::Module& root, bool outputs, CudaEvents* events)
    : root_(root),
      root_class_(clean_class(root.type()->name()->qualifiedName())),
      outputs_(outputs),
      events_(events) {
  scopes_.push_back({"", root_class_});
  scope_ids_[""] = 0;
}

OpRecorder::~OpRecorder() { remove(); }

void OpRecorder::install() {
  if (installed_) return;
  g_recorder = this;
  thread_ = std::this_thread::get_id();
  t_depth = 0;
  handle_ = at::addThreadLocalCallback(at::RecordFunctionCallback(&OpRecorder::on_start, &OpRecorder::on_end)
                                           .needsInputs(true)
                                           .needsOutputs(outputs_)
                                           .scopes({at::RecordScope::FUNCTION}));
  installed_ = true;
}

void OpRecorder::remove() {
  if (!installed_) return;
  at::removeCallback(handle_);
  installed_ = false;
  g_recorder = nullptr;
}

void OpRecorder::begin_iter(int iter, std::chrono::steady_clock::time_point t0) {
  iter_ = iter;
  t_depth = 0;
  t0_ = t0;
  iter_first_op_ = ops_.size();
  if (events_) {
    events_->reset();
    iter_mark_ = events_->mark();
  }
}

bool OpRecorder::end_iter() {
  if (!events_) return true;
  bool ok = events_->wait();
  for (size_t i = iter_first_op_; i < ops_.size(); ++i) {
    OpRecord& op = ops_[i];
    const double a = events_->ms(iter_mark_, op.start_mark), b = events_->ms(iter_mark_, op.end_mark);
    if (std::isnan(a) || std::isnan(b)) {
      ok = false;
      continue;
    }
    op.start_ns = static_cast<int64_t>(std::llround(a * 1e6));
    op.end_ns = static_cast<int64_t>(std::llround(b * 1e6));
  }
  return ok;
}

int OpRecorder::current_scope() {
  std::vector<std::string> h = torch::jit::currentModuleHierarchy();
  std::string key;
  for (const auto& e : h) key += e + "\n";
  auto it = scope_ids_.find(key);
  if (it != scope_ids_.end()) return it->second;
  std::vector<std::pair<std::string, std::string>> calls;
  for (const auto& e : h) calls.push_back(parse_hierarchy_entry(e));
  auto levels = module_scope(root_, calls);
  Scope s = levels.empty() ? Scope{"", root_class_} : Scope{levels.back().first, levels.back().second};
  int id = -1;
  for (size_t i = 0; i < scopes_.size() && id < 0; ++i)
    if (scopes_[i].path == s.path) id = static_cast<int>(i);
  if (id < 0) {
    id = static_cast<int>(scopes_.size());
    scopes_.push_back(s);
  }
  scope_ids_[key] = id;
  return id;
}

size_t OpRecorder::argument_count(const at::RecordFunction& fn) {
  const char* name = fn.name();  // of a dispatcher op: points into its registered schema (one per overload)
  auto it = arg_counts_.find(name);
  if (it != arg_counts_.end()) return it->second;
  auto schema = fn.operator_schema();
  if (!schema) return SIZE_MAX;  // named by a string, not a schema: not cached (the name may not outlive it)
  size_t n = schema->is_vararg() ? SIZE_MAX : schema->arguments().size();
  arg_counts_[name] = n;
  return n;
}

size_t OpRecorder::return_count(const at::RecordFunction& fn) {
  auto schema = fn.operator_schema();
  return schema ? schema->returns().size() : SIZE_MAX;
}

std::unique_ptr<at::ObserverContext> OpRecorder::on_start(const at::RecordFunction& fn) {
  OpRecorder* r = g_recorder;
  if (!r || std::this_thread::get_id() != r->thread_) return nullptr;
  if (t_depth++ != 0) return nullptr;
  OpRecord op;
  op.iter = r->iter_;
  op.name = fn.name();
  op.scope = r->current_scope();
  // A boxed call (the TorchScript interpreter's) hands RecordFunction the whole interpreter stack, which
  // may hold values below the op's arguments: keep the last `arguments` entries.
  auto inputs = fn.inputs();
  size_t n = r->argument_count(fn);
  for (const auto& v : inputs.slice(n < inputs.size() ? inputs.size() - n : 0))
    op.inputs.push_back(shapes_of(v));
  r->ops_.push_back(std::move(op));
  r->ops_.back().start_ns = since(r->t0_);  // last: the bookkeeping above is not the op's time
  if (r->events_) r->ops_.back().start_mark = r->events_->mark();
  return std::make_unique<TopLevel>(r->ops_.size() - 1);
}

void OpRecorder::on_end(const at::RecordFunction& fn, at::ObserverContext* ctx) {
  OpRecorder* r = g_recorder;
  if (!r || std::this_thread::get_id() != r->thread_) return;
  const int mark =
      ctx && r->events_ ? r->events_->mark() : -1;  // a top-level op: after its kernels' launches
  int64_t t = since(r->t0_);
  if (t_depth > 0) --t_depth;
  if (!ctx) return;  // not top-level: only on_start makes contexts, and only for top-level ops
  auto* top = static_cast<TopLevel*>(ctx);
  OpRecord& op = r->ops_[top->index];
  op.end_ns = t;
  op.end_mark = mark;
  if (r->outputs_) {
    // Like the inputs, a boxed call's outputs may sit above other stack values: keep the last `returns`.
    const auto& outs = fn.outputs();
    size_t n = r->return_count(fn);
    for (size_t i = n < outs.size() ? outs.size() - n : 0; i < outs.size(); ++i)
      op.outputs.push_back(shapes_of(outs[i]));
  }
  // The end of a top-level op that runs while an exception unwinds: the op the model failed in.
  if (std::uncaught_exceptions() > 0 && !r->failure_) r->failure_ = Failure{op.name, op.scope};
}

}  // namespace flopwise::runtime
