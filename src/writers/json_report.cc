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
#include "flopwise/training.h"
#include "flopwise/writers.h"
#include "poly_text.h"

namespace flopwise {

namespace {

// Writes pretty-printed JSON in nlohmann's dump(2) layout: "{" or "[", each member on its own line two
// spaces deeper, "key": value, "," between members, "{}" and "[]" when empty. Output goes through a
// fixed-size buffer to the stream. The caller keeps the calls well nested (a key before each object member).
class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& os) : os_(os), buf_(new char[kBufSize + kSlack]) {}
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  void begin_object() { open('{'); }
  void begin_array() { open('['); }
  void end_object() { close('}'); }
  void end_array() { close(']'); }

  // An object member's key; its value follows.
  void key(std::string_view k) {
    next_member();
    if (k.size() <= kBufSize - 4 && plain(k)) {  // every key the schema names: one copy, no escaping
      char* p = room(k.size() + 4);
      *p++ = '"';
      std::memcpy(p, k.data(), k.size());
      std::memcpy(p + k.size(), "\": ", 3);
      used_ += k.size() + 4;
      return;
    }
    write_string(k);
    put(": ");
  }

  // A key the schema names (a literal: plain ASCII, nothing to escape): copied at a fixed size.
  template <size_t N>
  void key(const char (&k)[N]) {
    static_assert(N + 3 <= kSlack);
    assert(plain(std::string_view(k, N - 1)));
    next_member();
    char* p = room(N + 3);
    *p = '"';
    std::memcpy(p + 1, k, N);  // the literal's NUL too: overwritten by the closing quote
    std::memcpy(p + N, "\": ", 3);
    used_ += N + 3;
  }

  // key, then value.
  template <class K, class T>
  void member(const K& k, const T& v) {
    key(k);
    value(v);
  }

  void value(std::string_view s) {
    next_member_unless_keyed();
    write_string(s);
  }
  void value(const char* s) { value(std::string_view(s)); }
  void value(const std::string& s) { value(std::string_view(s)); }
  void value(int64_t v) { integer(v); }
  void value(uint64_t v) { integer(v); }
  void value(double d) {  // %.9g; a non-finite value is null
    next_member_unless_keyed();
    if (!std::isfinite(d)) {
      put("null");
      return;
    }
    char b[32];  // std::to_chars formats as printf's %.9g does, several times faster
    const auto end = std::to_chars(b, b + sizeof b, d, std::chars_format::general, 9).ptr;
    put(std::string_view(b, static_cast<size_t>(end - b)));
  }
  void value(bool b) {
    next_member_unless_keyed();
    put(b ? "true" : "false");
  }
  void null() {
    next_member_unless_keyed();
    put("null");
  }

  // An integer; a polynomial in the dynamic dims as a string ("2359296*batch*seq"); null when unknown.
  void value(const Count& c) {
    if (c.known)
      value(c.v);
    else if (c.symbolic())
      value(poly_text_.dim_text(c.sym));
    else
      null();
  }

  // A symbolic dim's text, formatted once per polynomial.
  const std::string& dim_text(const Dim& d) { return poly_text_.dim_text(d); }

  // The document's closing newline; everything buffered goes to the stream.
  void finish() {
    put('\n');
    flush();
  }

 private:
  // The document goes out in 64 KiB writes: a report is megabytes of short tokens, each a memcpy here.
  // Past kBufSize the buffer has kSlack bytes that are never sent: a token of bounded length is copied
  // with a fixed-size memcpy (inlined, no call) that may write past its own end into them.
  static constexpr size_t kBufSize = 1 << 16;
  static constexpr size_t kSlack = 128;

  // Room for n more bytes (n <= kBufSize) at the returned pointer, flushing first when needed.
  char* room(size_t n) {
    if (used_ + n > kBufSize) flush();
    return buf_.get() + used_;
  }

  void flush() {
    os_.write(buf_.get(), static_cast<std::streamsize>(used_));
    used_ = 0;
  }

  void put(std::string_view s) {
    if (s.empty()) return;  // an empty view may have no data (memcpy's source must not be null)
    if (used_ + s.size() > kBufSize) {
      flush();
      if (s.size() > kBufSize) {
        os_.write(s.data(), static_cast<std::streamsize>(s.size()));
        return;
      }
    }
    std::memcpy(buf_.get() + used_, s.data(), s.size());
    used_ += s.size();
  }
  void put(char c) {
    if (used_ == kBufSize) flush();
    buf_[used_++] = c;
  }
  void newline_indent(size_t level) {
    static constexpr char kSpaces[] = "\n                                                                ";
    constexpr size_t kMaxLevel = (sizeof kSpaces - 2) / 2;
    static_assert(sizeof kSpaces <= kSlack);
    // The whole run is copied (a fixed size), the line keeps its own length of it.
    std::memcpy(room(sizeof kSpaces), kSpaces, sizeof kSpaces);
    used_ += 1 + 2 * std::min(level, kMaxLevel);
    for (size_t i = kMaxLevel; i < level; ++i) put("  ");
  }

  // Before an array element, or an object member's key: "," after the previous one, then a new line.
  void next_member() {
    if (open_.empty()) return;  // the top-level value
    if (open_.back()++) put(',');
    newline_indent(open_.size());
  }
  // Before a value: a key already placed it when inside an object.
  void next_member_unless_keyed() {
    if (keyed_.empty() || !keyed_.back()) next_member();
  }

  void open(char bracket) {
    next_member_unless_keyed();
    put(bracket);
    open_.push_back(0);
    keyed_.push_back(bracket == '{');
  }
  void close(char bracket) {
    size_t members = open_.back();
    open_.pop_back();
    keyed_.pop_back();
    if (members) newline_indent(open_.size());
    put(bracket);
  }

  template <class Int>
  void integer(Int v) {
    next_member_unless_keyed();
    constexpr size_t kDigits = 24;  // a 64-bit integer's sign and 20 digits fit
    char* p = room(kDigits);
    used_ = static_cast<size_t>(std::to_chars(p, p + kDigits, v).ptr - buf_.get());
  }

  // Printable ASCII with nothing to escape is written as is; anything else as nlohmann escapes it
  // (control characters as \n or \u001f, UTF-8 kept). Bytes that are not valid UTF-8 become U+FFFD
  // (nlohmann's error_handler_t::replace) instead of failing the whole report.
  // Names are most of a report's bytes: 16 at a time where SSE2 is there, the tail without branches.
  static bool plain(std::string_view s) {
    const char* p = s.data();
    size_t n = s.size();
#if defined(__SSE2__)
    const __m128i space = _mm_set1_epi8(0x20), del = _mm_set1_epi8(0x7F), quote = _mm_set1_epi8('"'),
                  backslash = _mm_set1_epi8('\\');
    for (; n >= 16; p += 16, n -= 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      // Signed: bytes >= 0x80 are negative, so "v < 0x20" also catches them.
      const __m128i bad = _mm_or_si128(_mm_or_si128(_mm_cmplt_epi8(v, space), _mm_cmpeq_epi8(v, del)),
                                       _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
      if (_mm_movemask_epi8(bad)) return false;
    }
#endif
    static constexpr auto kEscaped = [] {
      std::array<bool, 256> t{};
      for (int c = 0; c < 256; ++c) t[c] = c < 0x20 || c >= 0x7F || c == '"' || c == '\\';
      return t;
    }();
    bool bad = false;
    for (size_t i = 0; i < n; ++i) bad |= kEscaped[static_cast<unsigned char>(p[i])];
    return !bad;
  }
  void write_string(std::string_view s) {
    if (!plain(s)) {
      put(json_text(nlohmann::json(std::string(s))));
      return;
    }
    if (s.size() > kBufSize - 2) {
      put('"');
      put(s);
      put('"');
      return;
    }
    char* p = room(s.size() + 2);
    *p = '"';
    if (!s.empty()) std::memcpy(p + 1, s.data(), s.size());  // an empty view may have no data
    p[s.size() + 1] = '"';
    used_ += s.size() + 2;
  }

  std::ostream& os_;
  std::unique_ptr<char[]> buf_;
  size_t used_ = 0;
  PolyTextMemo poly_text_;    // symbolic counts' text, once per polynomial
  std::vector<size_t> open_;  // members written so far in each open object or array
  std::vector<bool> keyed_;   // per open container: an object (its values follow keys)
};

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
void write_members(JsonWriter& w, const Report& r, Members& m) {
  if (m.want(w, "schema")) w.value("flopwise.report/1");

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
    w.begin_array();
    for (const auto& n : r.nodes) {
      w.begin_object();
      w.member("name", n.name);
      w.member("op", op_key(n));
      w.member("scope", n.scope);
      if (n.backward) w.member("backward", true);
      w.key("outputs");
      w.begin_array();
      for (const auto& [name, s] : n.outputs) {
        w.begin_object();
        w.member("name", name);
        w.key("shape");
        write_shape(w, s);
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

void write_json(std::ostream& os, const Report& r) {
  JsonWriter w(os);
  Members all = Members::all();
  w.begin_object();
  write_members(w, r, all);
  w.end_object();
  w.finish();
}

std::vector<std::string> json_report_keys(const Report& r) {
  std::ostringstream none;
  JsonWriter w(none);
  std::vector<std::string> keys;
  Members m = Members::keys(&keys);
  write_members(w, r, m);
  return keys;
}

void write_json_member(std::ostream& os, const Report& r, std::string_view key) {
  JsonWriter w(os);
  Members m = Members::one(key);
  write_members(w, r, m);
  if (!m.found()) throw UsageError("the JSON report has no member \"" + std::string(key) + "\"");
  w.finish();
}

}  // namespace flopwise
