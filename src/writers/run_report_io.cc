// src/writers/run_report_io.cc — the run report (flopwise/run.h) as JSON, flopwise.run/1: its one writer and
// its one reader (flopwise/run_report.h), beside the static report's (report_io.cc).
#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "flopwise/errors.h"
#include "flopwise/input_file.h"
#include "flopwise/json_text.h"
#include "flopwise/run_report.h"

namespace flopwise {

namespace {

using json = nlohmann::json;

template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json latency_json(const RunLatency& l) {
  return {{"median", l.median}, {"p10", l.p10}, {"p90", l.p90}, {"min", l.min}};
}

json runtime_json(const RunRuntime& h) {
  switch (h.engine) {
    case RunEngine::OnnxRuntime:
      return {{"engine", run_engine_name(h.engine)},
              {"profile", h.profile},
              {"providers", h.providers},
              {"runs", h.runs},
              {"warmup_runs", h.warmup_runs},
              {"measured_runs", h.measured_runs},
              {"timing", h.timing},
              {"input_bindings", h.input_bindings}};
    case RunEngine::PyTorchTrace:
      return {{"engine", run_engine_name(h.engine)},
              {"profile", h.profile},
              {"device", h.device},
              {"steps", h.steps},
              {"timing", h.timing},
              {"matched_scopes", h.matched_scopes},
              {"trace_scopes", h.trace_scopes}};
    case RunEngine::LibTorch:
      break;
  }
  // A LibTorch run's header names no engine (the reader's default).
  return {{"device", h.device},
          {"device_name", h.device_name},
          {"torch_version", h.torch_version},
          {"blas", h.blas},
          {"threads", h.threads},
          {"timing", h.timing},
          {"op_clock", h.op_clock},
          {"tf32", h.tf32 ? json{{"cudnn", h.tf32->cudnn}, {"cublas", h.tf32->cublas}} : json(nullptr)},
          {"warmup", h.warmup},
          {"iters", h.iters},
          {"profile_iters", h.profile_iters}};
}

json summary_json(const RunSummary& s) {
  json j = {{"fwd_latency_ms", latency_json(s.fwd_latency_ms)},
            {"samples_per_s", s.samples_per_s},
            {"batch", s.batch},
            {"fwd_flops_per_s", s.fwd_flops_per_s},
            {"profiled_fwd_ms", s.profiled_fwd_ms},
            {"profiled_op_sum_ms", s.profiled_op_sum_ms},
            {"coverage", s.coverage}};
  if (s.profiling_overhead) j["profiling_overhead"] = *s.profiling_overhead;
  if (s.bwd_latency_ms) {
    j["bwd_latency_ms"] = latency_json(*s.bwd_latency_ms);
    j["fwd_bwd_flops_per_s"] = s.fwd_bwd_flops_per_s;
    j["backward_note"] = s.backward_note;
  }
  if (s.peak_tflops) j["peak_tflops"] = *s.peak_tflops;
  if (s.warmup_run_ms) j["warmup_run_ms"] = *s.warmup_run_ms;
  return j;
}

json scope_row_json(const RunScopeRow& r) {
  json j = {{"name", r.name},
            {"class", r.cls},
            {"depth", r.depth},
            {"params", or_null(r.params)},
            {"macs", or_null(r.macs)},
            {"flops", or_null(r.flops)},
            {"latency_ms", r.latency_ms},
            {"self_ms", r.self_ms},
            {"pct", r.pct},
            {"calls", r.calls},
            {"flops_per_s", or_null(r.flops_per_s)}};
  if (r.pct_of_peak) {
    j["pct_of_peak"] = *r.pct_of_peak;
    j["exceeds_peak"] = r.exceeds_peak;
  }
  if (r.bound_ms) {
    j["bound_ms"] = *r.bound_ms;
    j["below_bound"] = r.below_bound;
  }
  if (r.warmup_ms) j["warmup_ms"] = *r.warmup_ms;
  if (r.providers) j["providers"] = *r.providers;
  return j;
}

json op_json(const RunOpRow& r) {
  json j = {{"op", r.op},
            {"latency_ms", r.latency_ms},
            {"pct", r.pct},
            {"flops", or_null(r.flops)},
            {"flops_per_s", or_null(r.flops_per_s)}};
  if (r.nodes) j["nodes"] = *r.nodes;
  return j;
}

json attribution_json(const RunAttribution& a) {
  json methods = json::object(), listed = json::array(), kernels = json::array();
  for (const auto& [m, pct] : a.by_method) methods[m] = pct;
  for (const RunKernel& k : a.listed)
    listed.push_back({{"kernel", k.kernel},
                      {"op", k.op},
                      {"provider", k.provider},
                      {"method", k.method},
                      {"latency_ms", k.latency_ms},
                      {"counted_to", or_null(k.counted_to)}});
  for (const RunKernel& k : a.kernels) {
    json nodes = json::array();
    for (const auto& [node, share] : k.nodes) nodes.push_back({{"node", node}, {"share", share}});
    kernels.push_back({{"kernel", k.kernel},
                       {"op", k.op},
                       {"provider", k.provider},
                       {"method", k.method},
                       {"latency_ms", k.latency_ms},
                       {"nodes", nodes}});
  }
  return {{"node_time_ms", a.node_time_ms},
          {"attributed_pct", a.attributed_pct},
          {"by_method_pct", methods},
          {"split_kernels", a.split_kernels},
          {"outside_runs_ms", a.outside_runs_ms},
          {"listed", listed},
          {"kernels", kernels}};
}

json units_json(const RunUnits& mu) {
  json units = json::array();
  for (const RunUnit& ru : mu.units) {
    const CostUnit& u = ru.unit;
    json unit = {{"name", u.name},     {"op", u.op},       {"variant", u.variant},         {"flops", u.flops},
                 {"bytes", u.bytes},   {"calls", u.calls}, {"param_bytes", u.param_bytes}, {"ms", ru.ms},
                 {"min_ms", ru.min_ms}};
    if (!u.parts.empty()) {  // a module's nodes by op and variant: calibrate fits each part by its own op
      json parts = json::array();
      for (const CostPart& p : u.parts)
        parts.push_back({{"op", p.op},
                         {"variant", p.variant},
                         {"flops", p.flops},
                         {"bytes", p.bytes},
                         {"calls", p.calls},
                         {"param_bytes", p.param_bytes}});
      unit["parts"] = std::move(parts);
    }
    units.push_back(std::move(unit));
  }
  return {
      {"granularity", granularity_name(mu.granularity)}, {"not_numbers", mu.not_numbers}, {"units", units}};
}

json verify_json(const VerifyResult& v) {
  return {{"ok", v.ok()},
          {"executed_ops", v.executed},
          {"matched_ops", v.matched},
          {"shapes_checked", v.shapes_checked},
          {"unknown_static", v.unknown_static},
          {"disagreements", v.disagreements},
          {"unmatched", v.unmatched}};
}

}  // namespace

const char* run_engine_name(RunEngine e) {
  static const char* const kNames[] = {"libtorch", "onnxruntime", "pytorch-trace"};
  return kNames[static_cast<int>(e)];
}

std::string run_report_json(const RunReport& r) {
  json doc = {{"schema", "flopwise.run/1"},
              {"flopwise_version", flopwise_version()},
              {"model", {{"path", r.model}, {"format", r.model_format}}},
              {"convention", r.convention},
              {"runtime", runtime_json(r.runtime)},
              {"static_totals",
               {{"params", r.static_totals.params},
                {"macs", r.static_totals.macs},
                {"flops", r.static_totals.flops},
                {"complete", r.static_totals.complete}}},
              {"summary", summary_json(r.summary)},
              {"scopes", json::array()},
              {"op_types", json::array()},
              {"unattributed_ms", r.unattributed_ms}};
  for (const auto& s : r.scopes) doc["scopes"].push_back(scope_row_json(s));
  for (const auto& o : r.op_types) doc["op_types"].push_back(op_json(o));
  if (r.attribution) doc["attribution"] = attribution_json(*r.attribution);
  if (r.measured_units) doc["measured_units"] = units_json(*r.measured_units);
  if (r.verify) doc["verify"] = verify_json(*r.verify);
  return json_text(doc, 1) + "\n";
}

namespace {

// A number, or NaN for null or absent.
double num(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_number() ? it->get<double>() : NAN;
}
std::optional<double> opt_num(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_number() ? std::optional<double>(it->get<double>()) : std::nullopt;
}
std::optional<int64_t> opt_int(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_number() ? std::optional<int64_t>(it->get<int64_t>()) : std::nullopt;
}
int64_t int_of(const json& o, const char* key) { return opt_int(o, key).value_or(0); }
std::vector<std::string> strings(const json& o, const char* key) {
  std::vector<std::string> v;
  if (o.contains(key) && o[key].is_array())
    for (const auto& x : o[key])
      if (x.is_string()) v.push_back(x.get<std::string>());
  return v;
}
const json& object_at(const json& o, const char* key) {
  static const json empty = json::object();
  return o.contains(key) && o[key].is_object() ? o[key] : empty;
}

RunLatency read_latency(const json& l) {
  return {num(l, "median"), num(l, "p10"), num(l, "p90"), num(l, "min")};
}

RunRuntime read_runtime(const json& rt) {
  RunRuntime h;
  const std::string engine = rt.value("engine", "libtorch");
  for (RunEngine e : {RunEngine::LibTorch, RunEngine::OnnxRuntime, RunEngine::PyTorchTrace})
    if (engine == run_engine_name(e)) h.engine = e;
  h.timing = rt.value("timing", "");
  h.profile = rt.value("profile", "");
  h.device = rt.value("device", "");
  h.device_name =
      rt.contains("device_name") && rt["device_name"].is_string() ? rt["device_name"].get<std::string>() : "";
  h.torch_version = rt.value("torch_version", "");
  h.blas = rt.value("blas", "");
  h.op_clock = rt.value("op_clock", "");
  h.threads = rt.contains("threads") && rt["threads"].is_number() ? rt["threads"].get<int>() : -1;
  h.warmup = int_of(rt, "warmup");
  h.iters = int_of(rt, "iters");
  h.profile_iters = int_of(rt, "profile_iters");
  if (rt.contains("tf32") && rt["tf32"].is_object())
    h.tf32 = RunRuntime::Tf32{rt["tf32"].value("cudnn", false), rt["tf32"].value("cublas", false)};
  h.providers = strings(rt, "providers");
  h.input_bindings = strings(rt, "input_bindings");
  h.runs = int_of(rt, "runs");
  h.warmup_runs = int_of(rt, "warmup_runs");
  h.measured_runs = int_of(rt, "measured_runs");
  h.steps = int_of(rt, "steps");
  h.matched_scopes = int_of(rt, "matched_scopes");
  h.trace_scopes = int_of(rt, "trace_scopes");
  return h;
}

RunSummary read_summary(const json& s) {
  RunSummary r;
  r.fwd_latency_ms = read_latency(object_at(s, "fwd_latency_ms"));
  r.samples_per_s = num(s, "samples_per_s");
  r.batch = int_of(s, "batch");
  r.fwd_flops_per_s = num(s, "fwd_flops_per_s");
  r.profiled_fwd_ms = num(s, "profiled_fwd_ms");
  r.profiled_op_sum_ms = num(s, "profiled_op_sum_ms");
  r.coverage = num(s, "coverage");
  r.profiling_overhead = opt_num(s, "profiling_overhead");
  if (s.contains("bwd_latency_ms")) r.bwd_latency_ms = read_latency(object_at(s, "bwd_latency_ms"));
  r.fwd_bwd_flops_per_s = num(s, "fwd_bwd_flops_per_s");
  r.backward_note = s.value("backward_note", "");
  r.peak_tflops = opt_num(s, "peak_tflops");
  r.warmup_run_ms = opt_num(s, "warmup_run_ms");
  return r;
}

RunScopeRow read_scope(const json& o) {
  RunScopeRow r;
  r.name = o.at("name").get<std::string>();
  r.cls = o.value("class", "");
  r.depth = int_of(o, "depth");
  r.params = opt_int(o, "params");
  r.macs = opt_int(o, "macs");
  r.flops = opt_int(o, "flops");
  r.latency_ms = num(o, "latency_ms");
  r.self_ms = num(o, "self_ms");
  r.pct = num(o, "pct");
  r.calls = num(o, "calls");
  r.flops_per_s = opt_num(o, "flops_per_s");
  r.pct_of_peak = opt_num(o, "pct_of_peak");
  r.exceeds_peak = o.value("exceeds_peak", false);
  r.bound_ms = opt_num(o, "bound_ms");
  r.below_bound = o.value("below_bound", false);
  r.warmup_ms = opt_num(o, "warmup_ms");
  if (o.contains("providers")) r.providers = strings(o, "providers");
  return r;
}

RunOpRow read_op(const json& o) {
  RunOpRow r;
  r.op = o.at("op").get<std::string>();
  r.nodes = opt_int(o, "nodes");
  r.latency_ms = num(o, "latency_ms");
  r.pct = num(o, "pct");
  r.flops = opt_int(o, "flops");
  r.flops_per_s = opt_num(o, "flops_per_s");
  return r;
}

// A measured unit's count: a number >= 0, else the file is refused naming the key.
double unit_count(const json& u, const char* k, const std::string& where) {
  if (!u.contains(k) || !u[k].is_number()) throw InputError(where + "'" + k + "' is not a number");
  const double v = u[k].get<double>();
  if (!std::isfinite(v) || v < 0) throw InputError(where + "'" + k + "' is negative");
  return v;
}

RunUnit read_unit(const json& u, const std::string& path) {
  if (!u.is_object()) throw InputError(path + ": a measured unit is not an object");
  const std::string where = path + ": a measured unit's ";
  RunUnit ru;
  CostUnit& c = ru.unit;
  c.name = u.value("name", "");
  c.op = u.value("op", "");
  c.variant = u.value("variant", "");
  c.scope = c.name;
  c.flops = unit_count(u, "flops", where);
  c.bytes = unit_count(u, "bytes", where);
  c.calls = unit_count(u, "calls", where);
  // Since stop 49: the parameters' bytes, and a module's parts (absent: no parameter bytes told apart; the
  // unit is one part).
  if (u.contains("param_bytes")) c.param_bytes = std::min(unit_count(u, "param_bytes", where), c.bytes);
  if (u.contains("parts")) {
    if (!u["parts"].is_array()) throw InputError(path + ": a measured unit's 'parts' is not an array");
    double flops = 0, bytes = 0;
    for (const auto& p : u["parts"]) {
      if (!p.is_object() || !p.contains("op") || !p["op"].is_string())
        throw InputError(path + ": a measured unit's part is not an object with an op");
      const std::string pwhere = path + ": a measured unit's part's ";
      CostPart& part = c.parts.emplace_back();
      part.op = p["op"].get<std::string>();
      part.variant = p.contains("variant") && p["variant"].is_string() ? p["variant"].get<std::string>() : "";
      part.flops = unit_count(p, "flops", pwhere);
      part.bytes = unit_count(p, "bytes", pwhere);
      part.calls = unit_count(p, "calls", pwhere);
      part.param_bytes =
          p.contains("param_bytes") ? std::min(unit_count(p, "param_bytes", pwhere), part.bytes) : 0.0;
      flops += part.flops;
      bytes += part.bytes;
    }
    // The parts are the unit: their sums are its counts (within rounding), else the file was edited.
    if (std::abs(flops - c.flops) > 1e-6 * std::max(1.0, c.flops) ||
        std::abs(bytes - c.bytes) > 1e-6 * std::max(1.0, c.bytes))
      throw InputError(path + ": the parts of measured unit '" + c.name + "' do not sum to its counts");
    if (c.parts.size() < 2) c.parts.clear();
  }
  ru.has_min = u.contains("min_ms");
  ru.ms = unit_count(u, "ms", where);
  if (ru.has_min) ru.min_ms = unit_count(u, "min_ms", where);
  return ru;
}

RunUnits read_units(const json& mu, const std::string& path) {
  RunUnits r;
  const std::string g = mu.value("granularity", "");
  if (g != "node" && g != "module") throw InputError(path + ": measured_units granularity '" + g + "'");
  r.granularity = g == "node" ? Granularity::Node : Granularity::Module;
  r.not_numbers = int_of(mu, "not_numbers");
  if (!mu.contains("units") || !mu["units"].is_array())
    throw InputError(path + ": measured_units has no units");
  for (const auto& u : mu["units"]) r.units.push_back(read_unit(u, path));
  return r;
}

RunReport read_run_json(const json& d, const std::string& path) {
  if (!d.is_object() || d.value("schema", "") != "flopwise.run/1")
    throw InputError(path +
                     ": not a run report (schema \"flopwise.run/1\", from flopwise run ... --format json)");
  if (!d.contains("scopes") || !d["scopes"].is_array() || !d.contains("summary") || !d["summary"].is_object())
    throw InputError(path + ": a run report without \"scopes\" or \"summary\"");
  RunReport r;
  const json& model = object_at(d, "model");
  r.model = model.value("path", "");
  r.model_format = model.value("format", "");
  r.convention = d.value("convention", "");
  r.runtime = read_runtime(object_at(d, "runtime"));
  const json& t = object_at(d, "static_totals");
  r.static_totals = {int_of(t, "params"), int_of(t, "macs"), int_of(t, "flops"), t.value("complete", false)};
  r.summary = read_summary(d["summary"]);
  for (const auto& s : d["scopes"]) r.scopes.push_back(read_scope(s));
  r.has_op_types = d.contains("op_types") && d["op_types"].is_array();
  if (r.has_op_types)
    for (const auto& o : d["op_types"]) r.op_types.push_back(read_op(o));
  r.unattributed_ms = num(d, "unattributed_ms");
  if (d.contains("measured_units") && d["measured_units"].is_object())
    r.measured_units = read_units(d["measured_units"], path);
  return r;
}

}  // namespace

bool is_run_report(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;  // never open a FIFO
  // The schema key may come anywhere in the object (run reports sort their keys): scan until either
  // schema shows (a static report writes its own first).
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  const std::string needle = "\"flopwise.run/1\"";
  std::string buf(1 << 16, '\0'), carry;
  char first = 0;
  while (f) {
    f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    std::string chunk = carry + buf.substr(0, static_cast<size_t>(f.gcount()));
    if (!first)
      for (char c : chunk)
        if (!std::isspace(static_cast<unsigned char>(c))) {
          first = c;
          break;
        }
    if (first && first != '{') return false;
    if (chunk.find(needle) != std::string::npos) return true;
    if (chunk.find("\"flopwise.report/1\"") != std::string::npos) return false;  // a static report: stop here
    carry = chunk.size() > needle.size() ? chunk.substr(chunk.size() - needle.size()) : chunk;
  }
  return false;
}

RunReport read_run_report(const std::string& path) {
  const std::string text = read_input_file(path, " the run report");
  json d = json::parse(text, nullptr, false);
  if (d.is_discarded()) throw InputError(path + ": not JSON (truncated?)");
  try {
    return read_run_json(d, path);
  } catch (const json::exception& e) {
    throw InputError(path + ": not a run report as flopwise run writes it (" + e.what() + ")");
  }
}

}  // namespace flopwise
