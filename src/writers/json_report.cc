// src/writers/json_report.cc — JSON writer: schema "flopwise.report/1" (documented in the README). Exact
// integers; null = unknown.
// Streamed: written while walking the Report (no DOM), byte-identical to nlohmann's dump(2) of the same
// document, in time and memory linear in the report.
#include <algorithm>
#include <array>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "flopwise/attention.h"
#include "flopwise/calibration.h"
#include "flopwise/errors.h"
#include "flopwise/json_text.h"
#include "flopwise/llm.h"
#include "flopwise/moe.h"
#include "flopwise/peak_memory.h"
#include "flopwise/roofline.h"
#include "flopwise/shape_key.h"
#include "flopwise/training.h"
#include "flopwise/writers.h"
#include "json_writer.h"
#include "poly_text.h"

namespace flopwise {

namespace {

using writers_detail::JsonWriter;

void write_shape(JsonWriter& w, const Shape& s) {
  if (!s.rank_known) return w.null();
  w.begin_array();
  for (const auto& d : s.dims) {
    if (d.is_known())
      w.value(d.value());
    else if (d.is_symbolic())
      w.value(w.dim_text(d));
    else
      w.null();
  }
  w.end_array();
}

// A shape's text by the depth it is written at and its dims (a known one's value, a symbolic one's identity:
// dims of the report, which outlives the memo): a report's nodes repeat a few dozen shapes thousands of
// times. A shape ShapeKey has no key for (rank above 7, a negative dim) is written each time.
class ShapeTextMemo {
 public:
  void write(JsonWriter& w, const Shape& s) {
    ShapeKey k;
    if (!s.rank_known || !w.keyed_value() || !ShapeKey::of(s.dims, w.depth(), k, /*unknown_ok=*/true))
      return write_shape(w, s);
    if (auto it = memo_.find(k); it != memo_.end()) return w.keyed_raw(it->second);
    const size_t mark = w.mark();
    write_shape(w, s);
    if (const auto text = w.since(mark)) memo_.emplace(k, std::string(*text));
  }

 private:
  std::unordered_map<ShapeKey, std::string, ShapeKey::Hash> memo_;
};

void write_totals(JsonWriter& w, const Totals& t, bool joint) {
  w.begin_object();
  w.member("params", t.params);
  w.member("buffers", t.buffers);
  w.member("macs", t.macs);
  w.member("flops", t.flops);
  w.member("memory_bytes", t.memory_bytes);
  w.member("backward_flops", t.backward_flops);
  if (joint) {  // a joint program: its own backward, not the 2 x forward rule
    w.member("backward_macs", t.backward_macs);
    w.member("backward_from", "program");
  }
  w.member("uncounted_nodes", t.uncounted);
  w.member("complete", t.complete());
  w.end_object();
}

// The scope tree, depth first with an explicit stack (no recursion on the model's nesting depth).
void write_scope(JsonWriter& w, const ScopeNode& root) {
  std::vector<std::pair<const ScopeNode*, size_t>> open;  // scope, next child to write
  auto begin = [&](const ScopeNode& s) {
    w.begin_object();
    w.member("name", s.name);
    w.member("label", s.label);
    w.key("class");
    if (s.cls.empty())
      w.null();
    else
      w.value(s.cls);
    w.member("params", s.cost.params);
    w.key("params_held");
    w.value(s.params_held);
    w.member("macs", s.cost.macs);
    w.member("flops", s.cost.flops);
    w.member("memory_bytes", s.cost.memory_bytes);
    w.member("uncounted_nodes", s.cost.uncounted);
    w.member("complete", s.cost.complete());
    w.key("children");
    w.begin_array();
    open.push_back({&s, 0});
  };
  begin(root);
  while (!open.empty()) {
    const ScopeNode* s = open.back().first;
    const size_t i = open.back().second++;
    if (i < s->children.size()) {
      begin(*s->children[i]);
    } else {
      w.end_array();
      w.end_object();
      open.pop_back();
    }
  }
}

void write_values(JsonWriter& w, const std::vector<std::pair<std::string, std::pair<DType, Shape>>>& vs) {
  w.begin_array();
  for (const auto& [name, ts] : vs) {
    w.begin_object();
    w.member("name", name);
    w.member("dtype", dtype_name(ts.first));
    w.key("shape");
    write_shape(w, ts.second);
    w.end_object();
  }
  w.end_array();
}

// --hardware: the device, its rates and sources, the latency lower bound and every scope's bound.
void write_roofline(JsonWriter& w, const RooflineReport& rf) {
  w.begin_object();
  w.member("hardware", rf.hw.name);
  w.member("tf32", rf.hw.tf32);
  w.member("bandwidth_bytes_per_s", rf.hw.bandwidth);
  w.key("peak_flops_per_s");
  w.begin_object();
  for (size_t t = 0; t < rf.hw.peak.size(); ++t)
    if (rf.hw.peak[t] > 0) w.member(peak_type_name(static_cast<PeakType>(t)), rf.hw.peak[t]);
  w.end_object();
  w.key("sources");
  w.begin_array();
  for (const auto& s : rf.hw.sources) w.value(s);
  w.end_array();
  w.member("lower_bound_seconds", rf.total.seconds);
  w.member("compute_bound_nodes", rf.total.compute_bound);
  w.member("memory_bound_nodes", rf.total.memory_bound);
  w.member("unbounded_nodes", rf.unbounded_nodes);
  w.key("scopes");
  w.begin_array();
  for (const auto& e : rf.scopes) {
    w.begin_object();
    w.member("name", e.scope);
    w.member("seconds", e.seconds);
    w.member("flops", e.flops);
    w.member("bytes", e.bytes);
    w.member("intensity", e.intensity());
    w.member("bound", e.compute_seconds > e.memory_seconds ? "compute" : "memory");
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

// --phase, --prompt/--generate: the phase, the KV cache and a generation's totals (README: LLM phases).
void write_llm(JsonWriter& w, const LlmSection& llm) {
  w.begin_object();
  w.key("phase");
  if (llm.phase == Phase::None)
    w.null();
  else
    w.value(phase_name(llm.phase));
  w.key("kv_cache");
  if (!llm.kv) {
    w.null();
  } else {
    const KvCache& kv = *llm.kv;
    w.begin_object();
    w.member("found_by", kv.found_by);
    w.member("past_dim", kv.past_dim);
    w.member("seq_dim", kv.seq_dim);
    w.key("tensors");
    w.begin_array();
    for (const auto& p : kv.pairs) {
      w.begin_object();
      w.member("past", p.past);
      w.member("present", p.present);
      w.member("axis", p.axis);
      w.end_object();
    }
    w.end_array();
    w.member("bytes_per_token", kv.bytes_per_token);
    w.end_object();
  }
  if (llm.generation) {
    const Generation& g = *llm.generation;
    auto counts = [&w](const char* k, const Count& macs, const Count& flops, const Count& bytes) {
      w.key(k);
      w.begin_object();
      w.member("macs", macs);
      w.member("flops", flops);
      w.member("memory_bytes", bytes);
      w.end_object();
    };
    auto formula = [&w](const char* k, const RationalPoly& p) {
      w.key(k);
      if (p.valid)
        w.value(p.str());
      else
        w.null();
    };
    w.key("generation");
    w.begin_object();
    w.member("prompt", g.prompt);
    w.member("generated", g.generated);
    w.member("decode_steps", std::max<int64_t>(g.generated - 1, 0));
    counts("prefill", g.prefill_macs, g.prefill_flops, g.prefill_bytes);
    counts("decode", g.decode_macs, g.decode_flops, g.decode_bytes);
    counts("total", g.total_macs, g.total_flops, g.total_bytes);
    w.member("kv_bytes_end", llm.kv ? g.kv_bytes_end : Count::unknown());
    w.key("decode_step");
    w.begin_object();
    w.member("dim", g.step_dim);
    w.member("macs", g.step_macs);
    w.member("flops", g.step_flops);
    w.member("memory_bytes", g.step_bytes);
    w.end_object();
    w.key("formulas");
    w.begin_object();
    w.member("prompt_symbol", g.prompt_symbol);
    w.member("generated_symbol", g.generated_symbol);
    formula("macs", g.total_macs_formula);
    formula("flops", g.total_flops_formula);
    formula("memory_bytes", g.total_bytes_formula);
    formula("kv_bytes_end", llm.kv ? kv_bytes_end_formula(*llm.kv, g) : RationalPoly{});
    w.end_object();
    w.end_object();
  }
  w.end_object();
}

void write_string_array(JsonWriter& w, const std::vector<std::string>& vs) {
  w.begin_array();
  for (const auto& s : vs) w.value(s);
  w.end_array();
}

// --train: the step's figures, per scope too (flopwise/training.h).
void write_training(JsonWriter& w, const TrainingReport& t, const Report& r) {
  auto counts = [&](const TrainCounts& c) {
    w.member("forward_extra_flops", c.forward_extra_flops);
    w.member("backward_macs", c.backward_macs);
    w.member("backward_flops", c.backward_flops);
    w.member("trainable_params", c.trainable_params);
    w.member("saved_activation_bytes", c.saved_bytes);
  };
  w.begin_object();
  w.member("optimizer", std::string(optimizer_name(t.optimizer)));
  w.member("precision", std::string(precision_name(t.precision)));
  w.member("device", std::string(device_name(t.device)));
  w.key("freeze");
  write_string_array(w, t.freeze);
  w.key("checkpoint");
  write_string_array(w, t.checkpoint);
  counts(t.total);
  w.member("forward_flops", t.forward_flops);
  w.member("frozen_params", t.frozen_params);
  w.member("optimizer_flops", t.optimizer_flops);
  w.member("gradient_bytes", t.gradient_bytes);
  w.member("optimizer_state_bytes", t.optimizer_state_bytes);
  w.member("param_bytes", t.param_bytes);
  w.key("backward_transient");
  w.begin_object();
  w.member("bytes", t.backward_transient_bytes);
  w.member("at", t.transient_at);
  w.member("scope", t.transient_scope);
  w.end_object();
  w.member("memory_estimate_bytes", t.memory_estimate_bytes);
  if (t.fit_limit >= 0) {
    w.key("fit");
    w.begin_object();
    w.member("limit_bytes", t.fit_limit);
    w.key("dim");
    if (t.fit_dim.empty())
      w.null();
    else
      w.value(t.fit_dim);
    w.key("max_value");
    if (t.fit_max < 0)
      w.null();
    else
      w.value(t.fit_max);
    w.member("estimate_bytes", t.fit_bytes);
    w.member("fits", t.fit_dim.empty() ? t.fit_bytes.known && t.fit_bytes.v <= t.fit_limit : t.fit_max > 0);
    w.end_object();
  }
  w.member("step_flops", t.forward_flops + t.total.backward_flops + t.optimizer_flops);
  if (t.per_token) {
    w.key("per_token");
    w.begin_object();
    w.member("tokens", t.tokens);
    w.member("flops", t.flops_per_token);
    w.member("attention_flops", t.attention_flops_per_token);
    w.member("six_params", t.six_params);
    w.end_object();
  }
  w.member("estimate_backward_flops", t.estimate_backward_flops);
  w.key("estimated_nodes");
  write_string_array(w, t.estimated);
  w.key("scopes");
  w.begin_array();
  for (const auto& [name, c] : t.scopes) {
    w.begin_object();
    w.member("name", name);
    counts(c);
    w.end_object();
  }
  w.end_array();
  w.key("nodes");  // nodes with a backward or trainable params, in graph order
  w.begin_array();
  for (size_t i = 0; i < t.nodes.size() && i < r.nodes.size(); ++i) {
    const TrainCounts& c = t.nodes[i];
    const Count zero;
    if (c.backward_flops == zero && c.backward_macs == zero && c.trainable_params == zero &&
        c.saved_bytes == zero && c.forward_extra_flops == zero)
      continue;
    w.begin_object();
    w.member("name", r.nodes[i].name);
    counts(c);
    w.end_object();
  }
  w.end_array();
  w.key("warnings");
  write_string_array(w, t.warnings);
  w.end_object();
}

// Which of the report's top-level members write_members writes: all of them, as the members of the open
// document object; one member's value alone, as the whole document; or none, collecting the keys the report
// has. The one list of members (their order and when each is there) is write_members'.
class Members {
 public:
  static Members all() { return Members(Mode::All, {}, nullptr); }
  static Members one(std::string_view key) { return Members(Mode::One, key, nullptr); }
  static Members keys(std::vector<std::string>* out) { return Members(Mode::Keys, {}, out); }

  // Whether member `k`'s value is to be written now (its key already placed when writing all).
  bool want(JsonWriter& w, std::string_view k) {
    switch (mode_) {
      case Mode::All:
        w.key(k);
        return true;
      case Mode::One:
        if (k != key_) return false;
        found_ = true;
        return true;
      case Mode::Keys:
        keys_->emplace_back(k);
        return false;
    }
    return false;
  }
  bool found() const { return found_; }

 private:
  enum class Mode { All, One, Keys };
  Members(Mode m, std::string_view key, std::vector<std::string>* keys) : mode_(m), key_(key), keys_(keys) {}
  Mode mode_;
  std::string_view key_;
  std::vector<std::string>* keys_;
  bool found_ = false;
};

// The report's top-level members, in the order of the schema, each where `m` wants it.
void write_members(JsonWriter& w, const AnalysedReport& r, Members& m) {
  if (m.want(w, "schema")) w.value("flopwise.report/1");
  if (m.want(w, "flopwise_version")) w.value(flopwise_version());

  if (m.want(w, "model")) {
    w.begin_object();
    w.member("path", r.path);
    w.member("format", r.format);
    w.member("producer", r.producer);
    // The default domain "" is spelled "ai.onnx"; should both appear, one key, the later value, the
    // first position (as assigning into a JSON object does).
    std::vector<std::pair<std::string, int64_t>> opsets;
    for (const auto& [d, v] : r.opsets) {
      std::string k = d.empty() ? "ai.onnx" : d;
      auto it = opsets.begin();
      while (it != opsets.end() && it->first != k) ++it;  // a handful of domains
      if (it == opsets.end())
        opsets.emplace_back(std::move(k), v);
      else
        it->second = v;
    }
    w.key("opset");
    w.begin_object();
    for (const auto& [k, v] : opsets) w.member(k, v);
    w.end_object();
    w.end_object();
  }

  if (m.want(w, "convention")) w.value(r.convention);
  if (!r.notes.empty() && m.want(w, "notes")) write_string_array(w, r.notes);  // only when there are
  if (m.want(w, "inputs")) write_values(w, r.inputs);
  if (m.want(w, "outputs")) write_values(w, r.outputs);
  if (m.want(w, "totals")) write_totals(w, r.totals, r.joint);
  if (m.want(w, "totals_complete")) w.value(r.totals.complete());
  if (m.want(w, "by_dtype")) {
    w.begin_array();
    for (const auto& d : r.by_dtype) {
      w.begin_object();
      w.member("dtype", dtype_name(d.dtype));
      w.member("params", d.params);
      w.member("weight_bytes", d.weight_bytes);
      w.member("macs", d.macs);
      w.end_object();
    }
    w.end_array();
  }
  if (!r.branch_params.empty() && m.want(w, "branch_params")) {  // only when there are
    w.begin_array();
    for (const auto& b : r.branch_params) {
      w.begin_object();
      w.member("node", b.node);
      w.member("branch", b.branch);
      w.member("params", b.params);
      w.end_object();
    }
    w.end_array();
  }
  if (m.want(w, "scopes")) write_scope(w, *r.scopes);

  if (m.want(w, "op_types")) {
    w.begin_array();
    for (const auto& o : r.op_types) {
      w.begin_object();
      w.member("op", o.op);
      w.member("count", o.count);
      w.member("macs", o.macs);
      w.member("flops", o.flops);
      w.member("params", o.params);
      w.member("memory_bytes", o.memory_bytes);
      w.end_object();
    }
    w.end_array();
  }

  if (m.want(w, "nodes")) {
    // --predict by a node-granularity calibration: each node's predicted time (-1: not predicted)
    std::vector<double> predicted;
    if (r.prediction && r.prediction->granularity == Granularity::Node) {
      predicted.assign(r.nodes.size(), -1.0);
      for (const PredictedUnit& u : r.prediction->units)
        if (u.node >= 0 && static_cast<size_t>(u.node) < predicted.size())
          predicted[static_cast<size_t>(u.node)] = u.ms;
    }
    ShapeTextMemo shapes;
    w.begin_array();
    for (const auto& n : r.nodes) {
      w.begin_object();
      w.member("name", n.name);
      if (n.domain.empty())  // op_key without making a string
        w.member("op", n.op);
      else
        w.member("op", op_key(n));
      w.member("scope", n.scope);
      if (n.backward) w.member("backward", true);
      w.key("outputs");
      w.begin_array();
      for (const auto& [name, s] : n.outputs) {
        w.begin_object();
        w.member("name", name);
        w.key("shape");
        shapes.write(w, s);
        w.end_object();
      }
      w.end_array();
      w.member("params", n.cost.params);
      w.member("macs", n.cost.macs);
      w.member("flops", n.cost.flops);
      w.member("memory_bytes", n.cost.memory_bytes);
      if (!predicted.empty()) {  // with the kind of kernel its fit was chosen by
        if (!n.variant.empty()) w.member("variant", n.variant);
        if (const double ms = predicted[static_cast<size_t>(&n - r.nodes.data())]; ms >= 0)
          w.member("predicted_ms", ms);
      }
      w.end_object();
    }
    w.end_array();
  }

  if (m.want(w, "unsupported")) {
    w.begin_array();
    for (const auto& [op, names] : r.unsupported) {
      w.begin_object();
      w.member("op", op);
      w.member("count", static_cast<uint64_t>(names.size()));
      w.key("nodes");
      write_string_array(w, names);
      w.end_object();
    }
    w.end_array();
  }

  if (m.want(w, "warnings")) write_string_array(w, r.warnings);
  if (r.roofline && m.want(w, "roofline")) write_roofline(w, *r.roofline);
  if (r.peak_memory && m.want(w, "peak_memory")) {
    const PeakMemory& pm = *r.peak_memory;
    w.begin_object();
    w.member("activation_bytes", pm.peak);
    w.key("at");
    w.begin_array();
    for (const auto& a : pm.at) w.value(a);
    w.end_array();
    w.member("unknown_tensors", pm.unknown_tensors);
    w.member("weight_bytes", pm.weights);
    w.member("kv_cache_bytes", pm.kv_cache);
    w.member("saved_for_training_bytes_estimate", pm.saved_for_training);
    w.end_object();
  }
  if (r.training && m.want(w, "training")) write_training(w, *r.training, r);
  if (r.parallel && m.want(w, "parallel")) w.dumped(parallel_json_text(*r.parallel));
  if (r.prediction && m.want(w, "prediction")) {  // --predict (flopwise/calibration.h)
    const LatencyPrediction& p = *r.prediction;
    w.begin_object();
    w.member("calibration", p.calibration);
    w.member("device", p.device);
    w.member("runtime", p.runtime);
    w.member("statistic", p.statistic);
    w.member("granularity", granularity_name(p.granularity));
    w.member("total_ms", p.total_ms);
    w.key("band_ms");  // null: not known (a calibration of one model)
    if (p.band_ms >= 0)
      w.value(p.band_ms);
    else
      w.null();
    w.member("extrapolated_ms", p.extrapolated_ms);
    w.key("weak");  // why the prediction is weak; null: it is not
    if (p.weak.empty())
      w.null();
    else
      w.value(p.weak);
    w.key("wall_ms");  // the forward latency (the calibration's WallFit), null without one
    if (p.wall_ms >= 0)
      w.value(p.wall_ms);
    else
      w.null();
    w.key("unseen_ops");
    write_string_array(w, p.unseen);
    w.member("unpredicted_nodes", p.unpredicted);
    w.key("scopes");
    w.begin_array();
    for (const auto& [name, ms] : p.scopes) {
      w.begin_object();
      w.member("name", name);
      w.member("ms", ms);
      w.end_object();
    }
    w.end_array();
    if (p.granularity == Granularity::Module) {  // a node's prediction is its `predicted_ms` in `nodes`
      w.key("units");
      w.begin_array();
      for (const PredictedUnit& u : p.units) {
        w.begin_object();
        w.member("name", u.name);
        w.member("op", u.op);
        if (!u.variant.empty()) w.member("variant", u.variant);
        w.member("ms", u.ms);
        w.end_object();
      }
      w.end_array();
    }
    w.end_object();
  }
  if (r.causal && m.want(w, "causal")) {
    w.begin_object();
    w.member("attention_products", r.causal->products);
    w.member("masked_score_products", r.causal->masked);
    w.member("macs_skipped", r.causal->macs_skipped);
    w.end_object();
  }
  if (r.moe && m.want(w, "moe")) {
    const MoeSummary& moe = *r.moe;
    w.begin_object();
    w.member("experts", moe.experts);
    w.member("top_k", moe.top_k);
    w.member("total_params", moe.total_params);
    w.member("activated_params", moe.activated_params);
    w.member("total_macs", moe.total_macs);
    w.member("activated_macs", moe.dense ? moe.activated_macs : Count::unknown());
    w.member("total_flops", moe.total_flops);
    w.member("activated_flops", moe.dense ? moe.activated_flops : Count::unknown());
    w.member("dense", moe.dense);
    w.key("layers");
    w.begin_array();
    for (const auto& l : moe.layers) {
      w.begin_object();
      w.member("router", l.router);
      w.member("scope", l.scope);
      w.member("experts", static_cast<int64_t>(l.experts.size()));
      w.member("top_k", l.top_k);
      w.member("expert_params", l.params);
      w.member("expert_macs", l.macs);
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  if (r.llm && m.want(w, "llm")) write_llm(w, *r.llm);
  // data-dependent sizes (flopwise/infer.h, DataDepSymbol): only when there are
  if (!r.symbols.empty() && m.want(w, "symbols")) {
    w.begin_array();
    for (const auto& s : r.symbols) {
      w.begin_object();
      w.member("name", s.name);
      w.member("node", s.node);
      w.member("op", s.op);
      w.member("scope", s.scope);
      w.member("lo", Count::of(s.lo));  // a number, a formula in the model's dims, or null (no bound known)
      w.member("hi", Count::of(s.hi));
      if (s.value) w.member("value", *s.value);  // bound with --dim
      w.end_object();
    }
    w.end_array();
  }
  if (!r.aliases.empty() && m.want(w, "dim_aliases")) {  // only when there are, like assumptions
    w.begin_array();
    for (const auto& a : r.aliases) {
      w.begin_object();
      w.member("name", a.name);
      w.member("equals", a.value.str());
      w.member("declared_on", a.where);
      w.end_object();
    }
    w.end_array();
  }
  // only when there are: reports without any keep their bytes
  if (!r.assumptions.empty() && m.want(w, "assumptions")) {
    w.begin_array();
    for (const auto& a : r.assumptions) {
      w.begin_object();
      w.member("holds", a.text());
      w.member("lhs", a.lhs.str());
      w.member("rhs", a.rhs.str());
      w.member("node", a.node);
      w.member("why", a.why);
      w.end_object();
    }
    w.end_array();
  }
}

}  // namespace

void write_json(std::ostream& os, const AnalysedReport& r) {
  JsonWriter w(os);
  Members all = Members::all();
  w.begin_object();
  write_members(w, r, all);
  w.end_object();
  w.finish();
}

std::vector<std::string> json_report_keys(const AnalysedReport& r) {
  std::ostringstream none;
  JsonWriter w(none);
  std::vector<std::string> keys;
  Members m = Members::keys(&keys);
  write_members(w, r, m);
  return keys;
}

void write_json_member(std::ostream& os, const AnalysedReport& r, std::string_view key) {
  JsonWriter w(os);
  Members m = Members::one(key);
  write_members(w, r, m);
  if (!m.found()) throw UsageError("the JSON report has no member \"" + std::string(key) + "\"");
  w.finish();
}

}  // namespace flopwise
