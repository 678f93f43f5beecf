// src/runtime/runtime_main.cc — flopwise-runtime: runs a TorchScript model with LibTorch and measures it.
// Owns: the request/response contract with `flopwise run` (src/cli/run_cmd.cc), making the inputs, and the
// three measured phases. Sees LibTorch; shares no C++ types with the CLI, only this JSON.
//
//   flopwise-runtime REQUEST.json   -> response JSON on stdout, diagnostics on stderr.
//
// Request (flopwise.runtime-request/1):
//   {"schema": "flopwise.runtime-request/1", "model": "/path/m.pt",
//    "inputs": [{"name": "x", "shape": [1,3,224,224], "dtype": "float32"},
//               {"name": "ids", "shape": [1,16], "dtype": "int64", "low": 0, "high": 1000}],
//    "device": "cpu" | "cuda" | "auto", "threads": 0, "warmup": 3, "iters": 20, "profile_iters": 3,
//    "backward": false, "verify": false, "seed": 0}
//   Inputs are matched to the forward's arguments by name; one with no name ("" or absent) takes the next
//   tensor argument no input names. Arguments the request leaves out use the archive's recorded example
//   shapes (flopwise_inputs.json) or, when not tensors, their defaults. Float inputs are torch::randn,
//   integer ones torch::randint(low, high) (default [0, 2)), bool ones zeros, all after
//   torch::manual_seed(seed).
//
// Method: flopwise::prepare() picks it (forward, or the tensor overload forward__0 of a scripted nn.LSTM)
// and the inputs; the ORIGINAL module method runs, in eval mode, under NoGradGuard unless backward.
//
// Phases:
//   clean:    `warmup` untimed runs, then `iters` runs, each timed with steady_clock (CUDA: after
//             torch::cuda::synchronize()). With backward: each run is a forward with grad, then the backward
//             of the sum of the floating outputs, timed apart (bwd_ms); grads are cleared between runs.
//   profiled: `profile_iters` forwards with a RecordFunction callback (op_recorder.h), each right after an
//             unprofiled forward timed the same way (paired_clean_ms: the overhead's baseline): top-level ops
//             only, each with name, module scope (the static tree's dotted name), class, start/duration
//             relative to the iteration's start (CUDA: from device events recorded at each op's start and end
//             and read after the forward's one synchronisation, so launches still overlap execution), input
//             and output shapes.
//   verify:   (with "verify") one forward of a second copy of the module, loaded afresh and run with the
//   graph
//             executor's optimizations off, so the ops that run are the saved graph's (no CSE, peephole or
//             concat rewrites), recorded like the profiled ones.
//
// Response (flopwise.runtime/1):
//   {"schema": "flopwise.runtime/1", "model", "method", "device": "cpu"|"cuda", "device_name",
//    "torch_version", "blas", "parallel", "threads", "timing": "steady_clock"|"cuda synchronize +
//    steady_clock", "tf32": {"cudnn", "cublas"} (CUDA only), "warmup", "iters", "inputs":
//    [{"name","shape","dtype"[,"low","high"]}], "fwd_ms": [...], "bwd_ms": [...], "backward_note": "..."
//    (only with backward), "profiled": {"iters", "fwd_ms": [...], "paired_clean_ms": [...], "op_clock",
//                 "ops": [{"iter","name","scope","class","start_us",
//                 "dur_us","input_shapes": [[1,64,56,56], null, {"list": [[2,3],[2,3]]}, ...],
//                 "output_shapes": [...] (verify phase only)}]},
//    "verify": {"executor_optimize": false, "ops": [...]} (only with verify),
//    "warnings": [...], "error": null}
//   On failure: {"schema", "model", ..., "error": {"message"[, "op", "scope"]}} ("op"/"scope" only when
//   known).
//
// Exit: 0 done; 2 bad request, or the model cannot be loaded; 5 the model threw while running;
//       6 CUDA requested but unavailable (built without CUDA / no device visible). One line on stderr.
#include <ATen/Parallel.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/cuda.h>
#include <torch/script.h>
#include <torch/version.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "device_info.h"
#include "flopwise/errors.h"
#include "flopwise/json_text.h"
#include "op_recorder.h"
#include "torch_load.h"
#include "torch_types.h"

namespace fr = flopwise::runtime;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

namespace {

enum Exit : int { kOk = 0, kBadRequest = 2, kModelFailed = 5, kNoDevice = 6 };

// A failure with its exit code; `op`/`scope` name where the model failed, when known.
struct Failed : std::runtime_error {
  Failed(int c, const std::string& m, std::optional<std::string> o = {}, std::optional<std::string> s = {})
      : std::runtime_error(m), code(c), op(std::move(o)), scope(std::move(s)) {}
  int code;
  std::optional<std::string> op, scope;
};

struct InputSpec {
  std::string name;  // "": the next tensor argument no input names
  std::vector<int64_t> shape;
  flopwise::DType dtype = flopwise::DType::Float32;
  std::optional<int64_t> low, high;
};

struct Request {
  std::string model;
  std::vector<InputSpec> inputs;
  std::string device = "cpu";
  int threads = 0, warmup = 3, iters = 20, profile_iters = 3;
  bool backward = false, verify = false;
  int64_t seed = 0;
};

Failed bad(const std::string& m) { return Failed(kBadRequest, m); }

int int_field(const json& j, const char* key, int def, int min) {
  if (!j.contains(key)) return def;
  const json& v = j[key];
  if (!v.is_number_integer() || v.get<int64_t>() < min || v.get<int64_t>() > 1000000000)
    throw bad(std::string("request: \"") + key + "\" must be an integer >= " + std::to_string(min) +
              ", not " + v.dump());
  return v.get<int>();
}

Request parse_request(const std::string& path, ojson& resp) {
  std::ifstream f(path);
  if (!f) throw bad(path + ": cannot open the request");
  json j;
  try {
    j = json::parse(f);
  } catch (const std::exception& e) {
    throw bad(path + ": the request is not JSON: " + flopwise::first_line(e.what()));
  }
  if (!j.is_object()) throw bad(path + ": the request is not a JSON object");
  if (j.value("schema", json()) != "flopwise.runtime-request/1")
    throw bad(path + ": request schema " + j.value("schema", json()).dump() +
              ", expected \"flopwise.runtime-request/1\"");
  Request r;
  if (!j.contains("model") || !j["model"].is_string() || j["model"].get<std::string>().empty())
    throw bad("request: \"model\" (a path) is missing");
  r.model = j["model"].get<std::string>();
  resp["model"] = r.model;
  if (j.contains("inputs")) {
    if (!j["inputs"].is_array()) throw bad("request: \"inputs\" must be an array");
    for (const auto& x : j["inputs"]) {
      InputSpec s;
      size_t index = r.inputs.size();
      if (!x.is_object()) throw bad("request: an input is not an object: " + x.dump());
      if (x.contains("name") && !x["name"].is_null()) {
        if (!x["name"].is_string()) throw bad("request: input name " + x["name"].dump() + " is not a string");
        s.name = x["name"].get<std::string>();
      }
      std::string what = s.name.empty() ? "request: input #" + std::to_string(index + 1) + " (unnamed)"
                                        : "request: input '" + s.name + "'";
      if (!x.contains("shape") || !x["shape"].is_array()) throw bad(what + " has no \"shape\" array");
      for (const auto& d : x["shape"]) {
        if (!d.is_number_integer() || d.get<int64_t>() < 0)
          throw bad(what + ": shape entry " + d.dump() + " is not a non-negative integer");
        s.shape.push_back(d.get<int64_t>());
      }
      if (x.contains("dtype")) {
        auto t = x["dtype"].is_string() ? flopwise::parse_dtype(x["dtype"].get<std::string>()) : std::nullopt;
        if (!t || *t == flopwise::DType::Undefined) throw bad(what + ": unknown dtype " + x["dtype"].dump());
        s.dtype = *t;
      }
      for (const char* k : {"low", "high"}) {
        if (!x.contains(k) || x[k].is_null()) continue;
        if (!x[k].is_number_integer()) throw bad(what + ": \"" + k + "\" must be an integer");
        (std::string(k) == "low" ? s.low : s.high) = x[k].get<int64_t>();
      }
      if (s.low.value_or(0) >= s.high.value_or(2) && flopwise::is_integer(s.dtype) &&
          s.dtype != flopwise::DType::Bool)
        throw bad(what + ": empty range [low " + std::to_string(s.low.value_or(0)) + ", high " +
                  std::to_string(s.high.value_or(2)) + ")");
      r.inputs.push_back(s);
    }
  }
  if (j.contains("device")) {
    r.device = j["device"].is_string() ? j["device"].get<std::string>() : "";
    if (r.device != "cpu" && r.device != "cuda" && r.device != "auto")
      throw bad("request: \"device\" must be \"cpu\", \"cuda\" or \"auto\", not " + j["device"].dump());
  }
  r.threads = int_field(j, "threads", 0, 0);
  r.warmup = int_field(j, "warmup", 3, 0);
  r.iters = int_field(j, "iters", 20, 1);
  r.profile_iters = int_field(j, "profile_iters", 3, 0);
  if (j.contains("backward")) {
    if (!j["backward"].is_boolean()) throw bad("request: \"backward\" must be true or false");
    r.backward = j["backward"].get<bool>();
  }
  if (j.contains("verify")) {
    if (!j["verify"].is_boolean()) throw bad("request: \"verify\" must be true or false");
    r.verify = j["verify"].get<bool>();
  }
  if (j.contains("seed")) {
    if (!j["seed"].is_number_integer()) throw bad("request: \"seed\" must be an integer");
    r.seed = j["seed"].get<int64_t>();
  }
  return r;
}

flopwise::Prepared load(const Request& rq) {
  flopwise::InferOptions pins;
  for (const auto& s : rq.inputs) {
    flopwise::InputPin pin;
    pin.name = s.name;
    std::vector<flopwise::Dim> dims(s.shape.begin(), s.shape.end());
    pin.shape = flopwise::Shape(dims);
    pin.dtype = s.dtype;
    pins.inputs.push_back(pin);
  }
  try {
    return flopwise::prepare(rq.model, pins);
  } catch (const flopwise::Error& e) {
    throw bad(e.what());
  } catch (const c10::Error& e) {
    throw bad(rq.model + ": " + flopwise::first_line(e.what_without_backtrace()));
  } catch (const std::exception& e) {
    throw bad(rq.model + ": " + flopwise::first_line(e.what()));
  }
}

bool is_tensor_arg(const c10::FunctionSchema& schema, size_t input) {
  return input + 1 < schema.arguments().size() &&
         schema.arguments()[input + 1].type()->cast<c10::TensorType>() != nullptr;
}

// The request input for each prepared input (nullptr: none), by name, else the next unnamed request input
// for a tensor argument: the rule prepare()'s pins follow, so shapes and ranges come from the same entry.
std::vector<const InputSpec*> match_inputs(const Request& rq, const flopwise::Prepared& p) {
  const auto& schema = p.module.get_method(p.method).function().getSchema();
  std::string names;
  for (const auto& d : p.inputs) names += (names.empty() ? "" : ", ") + d.name;
  for (const auto& s : rq.inputs) {
    if (s.name.empty()) continue;
    bool found = false;
    for (const auto& d : p.inputs) found = found || d.name == s.name;
    if (!found)
      throw bad("request: input '" + s.name + "' names no argument of " + p.method + " (arguments: " + names +
                ")");
  }
  std::vector<const InputSpec*> unnamed;
  for (const auto& s : rq.inputs)
    if (s.name.empty()) unnamed.push_back(&s);
  std::vector<const InputSpec*> out(p.inputs.size(), nullptr);
  size_t positional = 0;
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    for (const auto& s : rq.inputs)
      if (!s.name.empty() && s.name == p.inputs[i].name) out[i] = &s;
    if (out[i] || !is_tensor_arg(schema, i)) continue;
    if (positional < unnamed.size()) out[i] = unnamed[positional];
    positional++;
  }
  size_t used = 0;
  for (size_t i = 0; i < p.inputs.size(); ++i) used += out[i] && out[i]->name.empty();
  if (used < unnamed.size())
    throw bad("request: " + std::to_string(unnamed.size()) + " unnamed inputs, but " + p.method +
              " has only " + std::to_string(used) + " tensor argument(s) left for them (arguments: " + names +
              ")");
  return out;
}

// The forward's arguments (after self), and their description for the response.
std::vector<c10::IValue> make_inputs(const Request& rq, const flopwise::Prepared& p,
                                     const c10::Device& device, ojson& described) {
  auto specs = match_inputs(rq, p);
  torch::manual_seed(static_cast<uint64_t>(rq.seed));
  std::vector<c10::IValue> args;
  described = ojson::array();
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    const auto& d = p.inputs[i];
    if (d.value) {
      args.push_back(*d.value);
      continue;
    }
    if (!d.shape || !d.shape->fully_known())
      throw bad(rq.model + ": input '" + d.name + "' has no known shape; give it in the request");
    std::vector<int64_t> dims;
    for (const auto& x : d.shape->dims) dims.push_back(x.value());
    auto st = flopwise::scalar_type_of(d.dtype);
    ojson desc = {{"name", d.name}, {"shape", dims}, {"dtype", flopwise::dtype_name(d.dtype)}};
    torch::Tensor t;
    try {
      if (flopwise::is_float(d.dtype)) {
        t = torch::randn(dims, torch::kFloat).to(st);
      } else if (d.dtype == flopwise::DType::Bool) {
        t = torch::zeros(dims, torch::TensorOptions().dtype(torch::kBool));
      } else {
        int64_t lo = specs[i] ? specs[i]->low.value_or(0) : 0, hi = specs[i] ? specs[i]->high.value_or(2) : 2;
        t = torch::randint(lo, hi, dims, torch::TensorOptions().dtype(st));
        desc["low"] = lo;
        desc["high"] = hi;
      }
    } catch (const c10::Error& e) {
      throw bad("input '" + d.name + "': " + flopwise::first_line(e.what_without_backtrace()));
    }
    args.push_back(t.to(device));
    described.push_back(desc);
  }
  return args;
}

// Tensors of an output (tuples, lists, dicts, nested).
void collect_tensors(const c10::IValue& v, std::vector<torch::Tensor>& out) {
  if (v.isTensor()) {
    out.push_back(v.toTensor());
  } else if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) collect_tensors(e, out);
  } else if (v.isList()) {
    for (const auto& e : v.toListRef()) collect_tensors(e, out);
  } else if (v.isGenericDict()) {
    for (const auto& kv : v.toGenericDict()) collect_tensors(kv.value(), out);
  }
}

torch::Tensor floating_loss(const c10::IValue& out, const torch::jit::Module& module) {
  std::vector<torch::Tensor> ts;
  collect_tensors(out, ts);
  torch::Tensor loss;
  for (const auto& t : ts)
    if (t.defined() && t.is_floating_point()) loss = loss.defined() ? loss + t.sum() : t.sum();
  if (!loss.defined()) throw Failed(kModelFailed, "backward: the model has no floating-point output");
  if (!loss.requires_grad()) {
    size_t n = 0, with_grad = 0;
    for (const auto& p : module.parameters()) n++, with_grad += p.requires_grad();
    throw Failed(kModelFailed, "backward: no floating output depends on a parameter that requires grad (" +
                                   std::to_string(with_grad) + " of the archive's " + std::to_string(n) +
                                   " parameters were saved with requires_grad=True)");
  }
  return loss;
}

// The message of an exception from a running model: the interpreter wraps the op's error in a heading and
// a TorchScript traceback; the line that says what went wrong is the "SomethingError: ..." one after it.
std::string run_message(const std::string& what) {
  if (what.find("The following operation failed in the TorchScript interpreter") == std::string::npos)
    return flopwise::first_line(what);
  std::istringstream in(what);
  std::string line, found;
  while (std::getline(in, line)) {
    size_t colon = line.find(": ");
    if (found.empty() && colon != std::string::npos && colon > 0 && line[0] != ' ' &&
        (line.compare(0, colon, "RuntimeError") == 0 ||
         line.substr(0, colon).find("Error") != std::string::npos ||
         line.substr(0, colon).find("Exception") != std::string::npos) &&
        line.find(' ') >= colon)
      found = line;
  }
  return found.empty() ? flopwise::first_line(what) : found;
}

ojson ops_json(const fr::OpRecorder& recorder);

int run(const Request& rq, ojson& resp) {
  if (rq.threads > 0) at::set_num_threads(rq.threads);
  bool cuda = false;
  if (rq.device == "cuda") {
    if (auto why = fr::cuda_unavailable_reason()) throw Failed(kNoDevice, *why);
    cuda = true;
  } else if (rq.device == "auto") {
    cuda = torch::cuda::is_available();
  }
  c10::Device device = cuda ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);

  flopwise::Prepared p = load(rq);
  for (const auto& w : p.warnings) std::cerr << "flopwise-runtime: warning: " << w << "\n";
  ojson inputs_desc;
  std::vector<c10::IValue> args = make_inputs(rq, p, device, inputs_desc);
  torch::jit::Module& module = p.module;
  module.eval();
  if (cuda) module.to(device);
  torch::jit::Method method = module.get_method(p.method);

  resp["method"] = p.method;
  resp["device"] = cuda ? "cuda" : "cpu";
  resp["device_name"] = cuda ? fr::cuda_device_name(0) : fr::cpu_name();
  resp["torch_version"] = TORCH_VERSION;
  resp["blas"] = fr::blas_line();
  resp["parallel"] = fr::parallel_line();
  resp["threads"] = at::get_num_threads();
  resp["timing"] = cuda ? "cuda synchronize + steady_clock" : "steady_clock";
  if (cuda) {
    const fr::Tf32Flags tf32 = fr::tf32_flags();
    resp["tf32"] = {{"cudnn", tf32.cudnn}, {"cublas", tf32.cublas}};
  }
  resp["warmup"] = rq.warmup;
  resp["iters"] = rq.iters;
  resp["inputs"] = inputs_desc;

  auto sync = [&] {
    if (cuda) fr::synchronize_cuda();
  };
  auto ms = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  std::optional<torch::NoGradGuard> no_grad;
  if (!rq.backward) no_grad.emplace();

  std::vector<double> fwd_ms, bwd_ms, prof_ms, paired_ms;
  // CUDA: top-level ops timed by device events (op_recorder.h); without them, by the host clock alone.
  std::string no_events;
  std::unique_ptr<fr::CudaEvents> events = cuda ? fr::CudaEvents::open(&no_events) : nullptr;
  bool events_ok = true;
  std::optional<flopwise::Prepared> fresh;  // before the recorders that refer to its module
  std::optional<fr::OpRecorder> recorder, verifier;
  try {
    // Clean phase.
    auto once = [&](bool record) {
      if (rq.backward)
        for (auto param : module.parameters())
          if (param.grad().defined()) param.mutable_grad().reset();
      sync();
      auto t0 = Clock::now();
      c10::IValue out = method(args);
      sync();
      auto t1 = Clock::now();
      if (record) fwd_ms.push_back(ms(t0, t1));
      if (rq.backward) {
        torch::Tensor loss = floating_loss(out, module);
        sync();
        auto t2 = Clock::now();
        loss.backward();
        sync();
        auto t3 = Clock::now();
        if (record) bwd_ms.push_back(ms(t2, t3));
      }
    };
    for (int i = 0; i < rq.warmup; ++i) once(false);
    for (int i = 0; i < rq.iters; ++i) once(true);

    // Profiled phase: forward only, each profiled run right after an unprofiled one (paired_ms), so the
    // profiling overhead is a ratio of neighbours, not of two phases a noisy machine may run at different
    // speeds.
    recorder.emplace(module, /*outputs=*/false, events.get());
    for (int k = 0; k < rq.profile_iters; ++k) {
      sync();
      auto t0 = Clock::now();
      method(args);
      sync();
      paired_ms.push_back(ms(t0, Clock::now()));
      recorder->install();
      sync();
      t0 = Clock::now();
      recorder->begin_iter(k, t0);
      c10::IValue out = method(args);
      sync();
      prof_ms.push_back(ms(t0, Clock::now()));
      recorder->remove();
      if (!recorder->end_iter()) events_ok = false;
    }

    // Verify phase: one forward of the graph as saved (the executor's optimizations off: no CSE, no
    // peephole rewrites, no concat merging), every top-level op with its shapes, for `flopwise run --verify`.
    // The executor keeps the plan it optimized on the first runs, so this runs a second copy of the module,
    // loaded afresh: the measured one is untouched.
    if (rq.verify) {
      torch::jit::GraphOptimizerEnabledGuard saved_graph(false);
      fresh.emplace(load(rq));
      fresh->module.eval();
      if (cuda) fresh->module.to(device);
      torch::jit::Method m = fresh->module.get_method(fresh->method);
      verifier.emplace(fresh->module, /*outputs=*/true);
      verifier->install();
      verifier->begin_iter(0, Clock::now());
      m(args);
      verifier->remove();
    }
  } catch (const Failed&) {
    throw;
  } catch (const std::exception& e) {
    auto* ce = dynamic_cast<const c10::Error*>(&e);
    std::string msg = run_message(ce ? ce->what_without_backtrace() : e.what());
    // Where it failed: the recorder saw it if the profiled phase threw; else one more run, recorded.
    if (!recorder || !recorder->failure()) {
      if (recorder) recorder->remove();
      recorder.emplace(module);
      recorder->install();
      try {
        recorder->begin_iter(-1, Clock::now());
        method(args);
      } catch (const std::exception&) {
      }
    }
    recorder->remove();
    const auto& f = recorder->failure();
    if (f) {
      std::string scope = f->scope >= 0 ? recorder->scopes()[static_cast<size_t>(f->scope)].path : "";
      throw Failed(kModelFailed, msg, f->op, scope);
    }
    throw Failed(kModelFailed, msg);
  }

  resp["fwd_ms"] = fwd_ms;
  if (rq.backward) {
    resp["bwd_ms"] = bwd_ms;
    resp["backward_note"] = "backward of the sum of the floating outputs; parameters requiring grad";
  }
  resp["profiled"] = {
      {"iters", rq.profile_iters},
      {"fwd_ms", prof_ms},
      {"paired_clean_ms", paired_ms},
      {"op_clock", !cuda    ? "steady_clock"
                   : events ? (events_ok ? "cuda events at each top-level op's start and end"
                                         : "cuda events at each top-level op's start and end; "
                                           "some could not be read: those ops have host times")
                            : "steady_clock of the launches (no cuda events: " + no_events + ")"},
      {"ops", ops_json(*recorder)}};
  if (verifier) resp["verify"] = {{"executor_optimize", false}, {"ops", ops_json(*verifier)}};
  resp["warnings"] = p.warnings;
  resp["error"] = nullptr;
  return kOk;
}

ojson ops_json(const fr::OpRecorder& recorder) {
  ojson ops = ojson::array();
  for (const auto& op : recorder.ops()) {
    const auto& sc = recorder.scopes()[static_cast<size_t>(op.scope)];
    auto shapes = [](const std::vector<fr::ArgShapes>& args) {
      ojson a = ojson::array();
      for (const auto& s : args) {
        if (s.kind == fr::ArgShapes::Tensor)
          a.push_back(s.shapes[0]);
        else if (s.kind == fr::ArgShapes::TensorList)
          a.push_back({{"list", s.shapes}});
        else
          a.push_back(nullptr);
      }
      return a;
    };
    ojson o = {{"iter", op.iter},
               {"name", op.name},
               {"scope", sc.path},
               {"class", sc.cls},
               {"start_us", static_cast<double>(op.start_ns) / 1000.0},
               {"dur_us", static_cast<double>(op.end_ns - op.start_ns) / 1000.0},
               {"input_shapes", shapes(op.inputs)}};
    if (recorder.records_outputs()) o["output_shapes"] = shapes(op.outputs);
    ops.push_back(std::move(o));
  }
  return ops;
}

}  // namespace

int main(int argc, char** argv) {
  ojson resp = {{"schema", "flopwise.runtime/1"}, {"model", nullptr}};
  int code = kOk;
  try {
    if (argc != 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")
      throw bad(
          "usage: flopwise-runtime REQUEST.json (a flopwise.runtime-request/1 document; the response is "
          "written to stdout)");
    Request rq = parse_request(argv[1], resp);
    code = run(rq, resp);
  } catch (const Failed& f) {
    code = f.code;
    ojson err = {{"message", f.what()}};
    if (f.op) err["op"] = *f.op;
    if (f.scope) err["scope"] = *f.scope;
    resp["error"] = err;
    std::cerr << "flopwise-runtime: error: " << f.what();
    if (f.op) std::cerr << " (in " << *f.op << ", scope '" << f.scope.value_or("") << "')";
    std::cerr << "\n";
  } catch (const std::exception& e) {
    code = kModelFailed;
    auto* ce = dynamic_cast<const c10::Error*>(&e);
    std::string msg = flopwise::first_line(ce ? ce->what_without_backtrace() : e.what());
    resp["error"] = {{"message", msg}};
    std::cerr << "flopwise-runtime: error: " << msg << "\n";
  }
  std::cout << flopwise::json_text(resp) << "\n";
  std::cout.flush();
  return code;
}
