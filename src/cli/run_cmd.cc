// src/cli/run_cmd.cc — `flopwise run MODEL.pt`: the static report beside measured latency per module scope.
// Owns: the request to the runtime harness (flopwise-runtime, a separate executable linked to LibTorch:
// crashes and ABI differences stay out of this process, and it can be built against any LibTorch), spawning
// it under a timeout, and which join and writer each input takes: the joins of measured time with the
// static scope tree are src/measured/run_join.cc's (flopwise/run.h), the run report's writers
// src/writers/run_report*.cc's. Sees no LibTorch.
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "commands.h"
#include "flopwise/analyse.h"
#include "flopwise/cost.h"
#include "flopwise/errors.h"
#include "flopwise/formats.h"
#include "flopwise/json_text.h"
#include "flopwise/ort_profile.h"
#include "flopwise/roofline.h"
#include "flopwise/run.h"
#include "flopwise/run_report.h"
#include "flopwise/torch_trace.h"
#include "flopwise/verify.h"
#include "flopwise/writers.h"
#include "output.h"

namespace flopwise {
namespace {

using json = nlohmann::json;

struct RunOptions {
  std::string model, device = "auto", format = "text", output, trace, profile;
  std::vector<std::string> inputs, dims, values;
  int threads = 0, warmup = 3, iters = 20, profile_iters = 3, depth = -1, seed = 0;
  int64_t int_range = 0;
  double peak_tflops = 0, timeout = 300;
  bool backward = false, verify = false;
  std::string hardware, hardware_file;     // a roofline bound per scope beside the measured time
  std::map<std::string, double> bound_ms;  // scope -> its roofline bound (filled by with_bounds)
};

// The options with each static scope's roofline bound on --hardware (or --hardware-file): a measured time
// below its bound is a counting or timing error.
// `rt`, a LibTorch runtime's response: on CUDA, its TF32 flags choose the rows convolutions and matrix
// products are bound by (cuDNN runs float32 convolutions in TF32 by default).
RunOptions with_bounds(const RunOptions& o, const Report& rep, const json* rt = nullptr) {
  RunOptions r = o;
  if (o.hardware.empty() && o.hardware_file.empty()) return r;
  Hardware hw = hardware_of(o.hardware, o.hardware_file);
  if (rt && rt->value("device", "") == "cuda" && rt->contains("tf32") && (*rt)["tf32"].is_object()) {
    hw.tf32_conv = (*rt)["tf32"].value("cudnn", false);
    hw.tf32 = hw.tf32 || (*rt)["tf32"].value("cublas", false);
  }
  const RooflineReport rf = roofline(rep, hw);
  for (const auto& e : rf.scopes)
    if (e.nodes > 0) r.bound_ms[e.scope] = e.seconds * 1e3;
  return r;
}

// $FLOPWISE_RUNTIME, else next to this executable, else ../lib/flopwise/.
std::string find_runtime() {
  auto exists = [](const std::string& p) { return access(p.c_str(), X_OK) == 0; };
  if (const char* env = std::getenv("FLOPWISE_RUNTIME"); env && *env) return exists(env) ? env : "";
  for (const std::string& p :
       {exe_dir() + "/flopwise-runtime", exe_dir() + "/../lib/flopwise/flopwise-runtime"})
    if (exists(p)) return p;
  return "";
}

// Exclusive upper bound for an integer input: --int-range, else the rows of the embedding table it indexes
// (a Gather of an initializer on axis 0 with this input as indices), else 2.
int64_t int_high(const Model& m, int input, int64_t user) {
  if (user > 0) return user;
  const Graph& g = m.graph;
  for (const auto& n : g.nodes) {
    if (n.op != "Gather" || n.inputs.size() < 2 || n.inputs[1] != input || n.attr_i("axis", 0) != 0) continue;
    const Value& table = g.values[n.inputs[0]];
    if (table.is_initializer && table.shape.rank_known && table.shape.rank() >= 1 &&
        table.shape.dims[0].is_known())
      return table.shape.dims[0].value();
  }
  return 2;
}

json make_request(const RunOptions& o, const Model& m) {
  json ins = json::array();
  for (int i : m.graph.inputs) {
    const Value& v = m.graph.values[i];
    if (!v.shape.fully_known())
      throw UsageError("input '" + v.name + "' has shape " + v.shape.str() +
                       ": running needs every dim known (give it with --input or bind symbols with --dim)");
    json d = {{"name", v.name}, {"dtype", dtype_name(v.dtype)}, {"shape", json::array()}};
    for (const auto& x : v.shape.dims) d["shape"].push_back(x.value());
    if (is_integer(v.dtype) && v.dtype != DType::Bool) {
      d["low"] = 0;
      d["high"] = int_high(m, i, o.int_range);
    }
    ins.push_back(d);
  }
  return {{"schema", "flopwise.runtime-request/1"},
          {"model", o.model},
          {"inputs", ins},
          {"device", o.device},
          {"threads", o.threads},
          {"warmup", o.warmup},
          {"iters", o.iters},
          {"profile_iters", o.profile_iters},
          {"backward", o.backward},
          {"verify", o.verify},
          {"seed", o.seed}};
}

// Runs `exe request` with stdout into `out`; kills it after `timeout` seconds. Returns its exit status
// (-1: killed by the timeout, 128+N: killed by signal N); `err` gets its first stderr line.
int spawn(const std::string& exe, const std::string& request, const std::string& out, double timeout,
          std::string& err) {
  std::string err_file = out + ".err";
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) throw Error("cannot start " + exe);
  if (pid == 0) {
    // The runtime ends with flopwise, however flopwise ends (a caller's timeout sends SIGKILL).
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
    FILE* o = std::freopen(out.c_str(), "w", stdout);
    FILE* e = std::freopen(err_file.c_str(), "w", stderr);
    if (!o || !e) _exit(127);
    execl(exe.c_str(), exe.c_str(), request.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::ifstream ef(err_file);
  std::string line;
  while (std::getline(ef, line))
    if (!line.empty()) err = line;  // the last non-empty line is the runtime's one-line message
  std::remove(err_file.c_str());
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

// Pins for a model profiled by ONNX Runtime: the user's, else its symbolic input dims bound to what the
// profile's kernels saw (a whole input shape where a dim has no name).
Pins profile_pins(const LoadedModel& loaded, Pins pins, const OrtProfile& prof,
                  std::vector<std::string>& notes) {
  if (!pins.inputs.empty() || !pins.dims.empty()) return pins;
  Analysis first = analyse(loaded, pins, find_convention("default"));
  const Graph& g = first.model->graph;
  std::map<std::string, int64_t> bound;
  ProfileAttribution at = attribute_profile(*first.model, first.report, prof);
  for (const auto& [name, dims] : profile_input_shapes(*first.model, prof, at)) {
    const Shape& s = g.values[g.find(name)].shape;
    bool by_symbol = s.rank_known && s.rank() == dims.size();
    for (size_t d = 0; by_symbol && d < dims.size(); ++d) {
      const Dim& x = s.dims[d];
      by_symbol = x.is_known() ? x.value() == dims[d]
                               : x.is_symbolic() && x.terms().size() == 1 && x.terms()[0].first.size() == 1 &&
                                     x.terms()[0].second == 1;
    }
    if (by_symbol) {
      for (size_t d = 0; d < dims.size(); ++d)
        if (s.dims[d].is_symbolic()) bound.emplace(s.dims[d].terms()[0].first[0], dims[d]);
    } else {
      InputPin pin;
      pin.name = name;
      pin.shape = Shape(std::vector<Dim>(dims.begin(), dims.end()));
      pins.inputs.push_back(pin);
      notes.push_back(name + " " + pin.shape->str());
    }
  }
  for (const auto& [sym, v] : bound) {
    pins.dims.emplace_back(sym, v);
    notes.push_back(sym + "=" + std::to_string(v));
  }
  return pins;
}

// What the joins take from the options: the model, the profile, the scope table's depth, --peak-tflops and
// the scopes' roofline bounds.
RunJoinOptions join_options(const RunOptions& o) {
  RunJoinOptions j;
  j.model = o.model;
  j.profile = o.profile;
  j.depth = o.depth;
  j.peak_tflops = o.peak_tflops;
  j.bound_ms = o.bound_ms;
  return j;
}

// The run's writers: text (with --verify's result), json, html (the static page with measured latency per
// scope).
struct RunOutput {
  const AnalysedReport& rep;
  const RunJoin& joined;
  RunTextOptions text;
};
void run_text(std::ostream& os, const RunOutput& r) {
  write_run_text(os, r.rep, r.joined.report, r.text);
  if (r.joined.report.verify) write_verify_text(os, *r.joined.report.verify);
}
void run_json(std::ostream& os, const RunOutput& r) { os << run_report_json(r.joined.report); }
void run_html(std::ostream& os, const RunOutput& r) { write_html(os, r.rep, nullptr, &r.joined.scope_ms); }
using RunWriter = void (*)(std::ostream& os, const RunOutput& r);
const FormatTable<RunWriter>& run_writers() {
  using F = OutputFormat;
  static const FormatTable<RunWriter> table("run", {
                                                       {F::Text, run_text},
                                                       {F::Json, run_json},
                                                       {F::Html, run_html},
                                                   });
  return table;
}

// The report in --format.
void write_run(const RunOptions& o, const AnalysedReport& rep, const RunJoin& joined,
               const RunTextOptions& text) {
  const RunWriter write = run_writers().writer(parse_format(o.format));
  std::ofstream file;
  std::ostream& out = output_stream(o.output, file);
  write(out, RunOutput{rep, joined, text});
}

// `flopwise run MODEL.onnx --profile PROFILE.json`: the static report beside the time ONNX Runtime
// measured, per module scope (join_ort_profile).
int run_ort(const RunOptions& o) {
  OrtProfile prof = read_ort_profile(o.profile);
  std::vector<std::string> bound;
  Pins user = parse_pins(o.inputs, o.dims, o.values);
  const LoadedModel loaded = load(o.model, user);  // read once for both analyses
  Pins pins = profile_pins(loaded, user, prof, bound);
  Analysis analysis = analyse(loaded, pins, find_convention("default"));
  const AnalysedReport& rep = analysis.report;
  ProfileAttribution at = attribute_profile(*analysis.model, rep, prof);
  RunJoin joined = join_ort_profile(*analysis.model, rep, prof, at, bound, join_options(with_bounds(o, rep)));
  write_run(o, rep, joined, RunTextOptions{o.peak_tflops, 0});
  return kExitOk;
}

// `flopwise run MODEL --profile TRACE.pt.trace.json[.gz]`: a PyTorch profiler trace's GPU time on MODEL's
// static module tree, per step (join_torch_trace).
int run_torch_profile(const RunOptions& o) {
  TraceReport tr = analyse_trace_file(o.profile);
  Analysis analysis = analyse(o.model, parse_pins(o.inputs, o.dims, o.values), find_convention("default"));
  const AnalysedReport& rep = analysis.report;
  size_t matched = 0;
  RunJoin joined = join_torch_trace(rep, tr, join_options(with_bounds(o, rep)), &matched);
  write_run(o, rep, joined, RunTextOptions{o.peak_tflops, matched});
  return kExitOk;
}

int run(const RunOptions& o) {
  if (!o.profile.empty() && looks_like_torch_trace(o.profile)) return run_torch_profile(o);
  std::string lower = o.model;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  bool onnx = detect_format(o.model) == ModelFormat::Onnx ||
              (lower.size() >= 5 && lower.compare(lower.size() - 5, 5, ".onnx") == 0);
  if (onnx && o.profile.empty())
    throw UsageError(
        o.model +
        ": flopwise run measures TorchScript (.pt) models with LibTorch; an ONNX model is measured by "
        "ONNX Runtime: profile it (SessionOptions.enable_profiling) and give the profile with --profile");
  if (!o.profile.empty()) {
    if (!onnx)
      throw UsageError("--profile reads an ONNX Runtime profile of a .onnx model; " + o.model +
                       " is measured by running it (leave out --profile)");
    return run_ort(o);
  }
  std::string exe = find_runtime();
  if (exe.empty()) {
    print_error(
        "flopwise: error: ", "RunError",
        "the runtime harness flopwise-runtime is not built (it needs LibTorch: install libtorch-dev, or "
        "configure with -DCMAKE_PREFIX_PATH=<LibTorch>, and rebuild)");
    return kExitNoRuntime;
  }
  Pins io = parse_pins(o.inputs, o.dims, o.values);
  Analysis analysis = analyse(o.model, io, find_convention("default"));
  const Model& model = *analysis.model;
  json request = make_request(o, model);
  const AnalysedReport& rep = analysis.report;

  char tmpl[] = "/tmp/flopwise-run-XXXXXX";
  if (!mkdtemp(tmpl)) throw Error("cannot create a temporary directory");
  std::string dir = tmpl, req = dir + "/request.json", out = dir + "/response.json";
  std::ofstream(req) << json_text(request);
  std::string err;
  int rc = spawn(exe, req, out, o.timeout, err);
  std::ifstream rf(out);
  json rt;
  try {
    rt = json::parse(rf);
  } catch (const std::exception&) {
    rt = json();
  }
  std::remove(req.c_str());
  std::remove(out.c_str());
  rmdir(dir.c_str());
  if (rc == -1) {
    std::ostringstream msg;
    msg << o.model << ": the run did not finish within --timeout " << o.timeout << " s";
    print_error("flopwise: error: ", "RunError", msg.str());
    return kExitRunFailed;
  }
  if (rc != 0) {
    std::string msg = rt.is_object() && rt.contains("error") && rt["error"].is_object()
                          ? rt["error"].value("message", err)
                          : err;
    if (rt.is_object() && rt["error"].is_object() && !rt["error"].value("op", "").empty())
      msg += " (op " + rt["error"].value("op", "") + " in scope '" + rt["error"].value("scope", "") + "')";
    if (rc == 2) throw InputError(msg.empty() ? o.model + ": the runtime could not load it" : msg);
    // Seen on a GPU with traces made on the CPU (torch.arange in GPT-2's positions, an LSTM's zero state):
    // torch.jit.trace records a tensor the model creates with the device it was traced on.
    if (rt.is_object() && rt.value("device", "") == "cuda" &&
        (msg.find("on the same device") != std::string::npos ||
         msg.find("at the same device") != std::string::npos))
      msg +=
          "; a traced module keeps the device of the tensors it creates (torch.arange, torch.zeros) as they "
          "were when traced: trace it on the GPU, or script it";
    print_error("flopwise: error: ", "RunError",
                msg.empty() ? "flopwise-runtime failed (exit " + std::to_string(rc) + ")" : msg);
    return kExitRunFailed;
  }
  RunJoin joined = join_runtime_response(rep, rt, join_options(with_bounds(o, rep, &rt)));
  if (!o.trace.empty()) write_trace(o.trace, rt);
  if (o.verify) joined.report.verify = verify_shapes(model, rt.at("verify").at("ops"));
  const std::optional<VerifyResult>& ver = joined.report.verify;
  write_run(o, rep, joined, RunTextOptions{o.peak_tflops, 0});
  if (ver && !ver->ok()) {
    print_error(
        "flopwise: error: ", "RunError",
        "--verify: " + std::to_string(ver->disagreements.size()) +
            " shape(s) differ between the run and the static analysis, first: " + ver->disagreements[0]);
    return kExitVerifyFailed;
  }
  return kExitOk;
}

}  // namespace

int run_run(int argc, char** argv) {
  RunOptions o;
  CLI::App app{
      "flopwise run: measure a TorchScript model with LibTorch, or read an ONNX Runtime profile of an ONNX "
      "model, beside its static counts, by module scope"};
  app.footer(
      "Exit codes: 0 done, 2 bad input or usage, 4 the runtime harness is not built, 5 the run failed (the "
      "model raised, --timeout, or the device is not available), 6 --verify found a shape disagreement.");
  app.add_option("model", o.model, "TorchScript model (.pt), or ONNX model (.onnx) with --profile")
      ->required();
  app.add_option(
      "--profile", o.profile,
      "report measured time by module scope instead of running: an ONNX Runtime profile "
      "(SessionOptions.enable_profiling) of MODEL.onnx, or a PyTorch profiler trace (.json[.gz]) of MODEL");
  app.add_option("--input,-i", o.inputs, "pin an input: NAME:1x3x224x224[:dtype]");
  app.add_option("--dim,-d", o.dims, "bind a symbolic dim: batch=8");
  app.add_option("--value", o.values, "pin the contents of a shape-like input");
  app.add_option("--device", o.device, "cpu | cuda | auto")->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  app.add_option("--threads", o.threads, "intra-op threads (0: LibTorch's default)");
  app.add_option("--warmup", o.warmup, "untimed runs first")->check(CLI::NonNegativeNumber);
  app.add_option("--iters", o.iters, "timed runs (clean phase)")->check(CLI::PositiveNumber);
  app.add_option("--profile-iters", o.profile_iters, "runs of the profiled phase")
      ->check(CLI::PositiveNumber);
  app.add_flag("--backward", o.backward, "also time backward of the sum of the outputs");
  app.add_option("--int-range", o.int_range,
                 "integer inputs drawn from [0, N) (default: the embedding's rows)");
  app.add_option("--seed", o.seed, "seed of the random inputs");
  app.add_option("--peak-tflops", o.peak_tflops, "the device's peak: adds % of peak per scope");
  app.add_option("--hardware", o.hardware,
                 "a device of the roofline table (" + hardware_names_text() +
                     "): each scope's bound beside its measured time; a time below its bound is flagged");
  app.add_option("--hardware-file", o.hardware_file, "the roofline device from a TOML file");
  app.add_option("--timeout", o.timeout, "seconds before the run is stopped");
  app.add_option("--format,-f", o.format,
                 run_writers().help() + " (html: the static page with measured latency per scope)")
      ->check(CLI::IsMember(run_writers().choices()));
  app.add_option("--output,-o", o.output, "write the report to FILE");
  app.add_option("--trace", o.trace,
                 "write a Chrome trace (Perfetto, chrome://tracing) of the profiled runs");
  app.add_option("--depth", o.depth, "depth of the scope table (-1: all)");
  app.add_flag("--verify", o.verify,
               "compare every executed op's input and output shapes with the static analysis; exit 6 on a "
               "disagreement");
  if (auto code = parse_command_line(app, argc, argv, "run")) return *code;
  return run(o);
}

}  // namespace flopwise
