// bench/trace_simdjson_event.h — bench only (bench/trace_read_bench.cc, bench/README.md "Trace reader: hand
// scanner against simdjson"): one trace event parsed by simdjson 3 instead of the hand parser. The reader
// (src/measured/trace_read.cc, built into the bench with FLOPWISE_TRACE_SIMDJSON_BENCH) keeps its walk, its
// ranges and batches; at each event object the hand scanner only finds the object's end (capture_object) and
// simdjson parses its text, a DOM with one reused parser a thread, or On-Demand; the fields land in the
// reader's RawEvent as the hand parser puts them there, and the reader keeps the event as before.
#pragma once

#include <simdjson.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "flopwise/errors.h"

namespace flopwise::bench_trace {

enum class Mode { Hand, Dom, OnDemand, DomBatch, OnDemandBatch, Capture };
// On-Demand runs the kernel this translation unit is compiled for (the DOM dispatches at run time).
#define FLOPWISE_BENCH_STR2(x) #x
#define FLOPWISE_BENCH_STR(x) FLOPWISE_BENCH_STR2(x)
inline constexpr const char* kOnDemandKernel = FLOPWISE_BENCH_STR(SIMDJSON_BUILTIN_IMPLEMENTATION);
inline Mode mode = Mode::Hand;

namespace dom = simdjson::dom;
namespace od = simdjson::ondemand;

// The hand parser's integer() of a scalar's text: an integer, or a double that holds one ("12.0"), as a
// number or in a string; nullopt for anything else.
inline std::optional<int64_t> integer_text(std::string_view s) {
  const char* b = s.data();
  const char* e = b + s.size();
  int64_t v = 0;
  auto [end, ec] = std::from_chars(b, e, v);
  if (ec == std::errc() && end == e) return v;
  if (end == b || ec == std::errc::result_out_of_range) return std::nullopt;
  if (*end == '.' || *end == 'e' || *end == 'E') {
    double d = 0;
    auto [dend, dec] = std::from_chars(b, e, d);
    if (dec != std::errc() || d < -9.2e18 || d > 9.2e18) return std::nullopt;
    return static_cast<int64_t>(d);
  }
  return v;
}
inline bool time_text(std::string_view s, double* out) {  // a quoted ts
  std::string z(s);
  char* end = nullptr;
  *out = std::strtod(z.c_str(), &end);
  return end != z.c_str() && std::isfinite(*out);
}

// ---- DOM ----------------------------------------------------------------------------------------------
inline void text(dom::element v, std::string& out) {
  switch (v.type()) {
    case dom::element_type::STRING:
      out.assign(std::string_view(v));
      break;
    case dom::element_type::ARRAY:
    case dom::element_type::OBJECT:
      out.clear();
      break;
    case dom::element_type::INT64:
      out = std::to_string(int64_t(v));
      break;
    case dom::element_type::UINT64:
      out = std::to_string(uint64_t(v));
      break;
    default:
      out = simdjson::minify(v);  // doubles (their text as simdjson writes it), true, false, null
  }
}
inline std::optional<int64_t> integer(dom::element v) {
  switch (v.type()) {
    case dom::element_type::INT64:
      return int64_t(v);
    case dom::element_type::DOUBLE: {
      double d = double(v);
      if (d < -9.2e18 || d > 9.2e18) return std::nullopt;
      return static_cast<int64_t>(d);
    }
    case dom::element_type::STRING:
      return integer_text(std::string_view(v));
    default:
      return std::nullopt;
  }
}
inline bool time(dom::element v, double* out) {
  if (v.is_number()) {
    *out = double(v);
    return std::isfinite(*out);
  }
  return v.is_string() && time_text(std::string_view(v), out);
}
inline void strings(dom::element v, std::vector<std::string>& out) {
  out.clear();
  if (!v.is_array()) return;
  for (dom::element x : dom::array(v)) {
    out.emplace_back();
    text(x, out.back());
  }
}
inline void shape(dom::element v, std::vector<int64_t>& s) {
  if (!v.is_array()) return;
  for (dom::element d : dom::array(v)) s.push_back(integer(d).value_or(-1));
}
// [[8, 3, 64, 64], [], [[1, 16], [16]]]: per argument a shape, nothing, or a list of shapes.
inline void dims(dom::element v, std::vector<std::vector<std::vector<int64_t>>>& out) {
  out.clear();
  if (!v.is_array()) return;
  for (dom::element a : dom::array(v)) {
    auto& arg = out.emplace_back();
    if (!a.is_array() || dom::array(a).size() == 0) continue;
    dom::element first = dom::array(a).at(0);
    if (first.is_array()) {
      for (dom::element s : dom::array(a)) shape(s, arg.emplace_back());
    } else {
      shape(a, arg.emplace_back());
    }
  }
}
// Fills `e` from the event object `obj`; false when its category is one the reader does not keep.
template <class Event, class Reader>
bool fill(dom::object obj, Event& e) {
  using Key = decltype(Reader::event_key(""));
  using Arg = decltype(Reader::arg_key(""));
  for (auto [key, v] : obj) {
    switch (Reader::event_key(key)) {
      case Key::Ph:
        text(v, e.ph);
        break;
      case Key::Cat:
        text(v, e.cat);
        if (!Reader::relevant(e.cat)) return false;
        break;
      case Key::Name:
        text(v, e.name);
        break;
      case Key::Pid:
        text(v, e.pid);
        break;
      case Key::Tid:
        text(v, e.tid);
        break;
      case Key::Ts:
        e.has_ts = time(v, &e.ts);
        break;
      case Key::Dur:
        e.has_dur = time(v, &e.dur);
        break;
      case Key::Id:
        text(v, e.id);
        break;
      case Key::Args:
        if (!v.is_object()) break;
        for (auto [akey, a] : dom::object(v)) {
          switch (Reader::arg_key(akey)) {
            case Arg::Ext:
              e.ext = integer(a).value_or(-1);
              break;
            case Arg::Hier:
              text(a, e.hier);
              break;
            case Arg::Corr:
              e.corr = integer(a).value_or(-1);
              break;
            case Arg::Dims:
              e.has_dims = true, dims(a, e.call.dims);
              break;
            case Arg::Types:
              strings(a, e.call.types);
              break;
            case Arg::Concrete:
              strings(a, e.call.concrete);
              break;
            case Arg::Allocated:
              e.allocated = integer(a).value_or(-1);
              break;
            case Arg::Device:
              e.device = integer(a).value_or(-1);
              break;
            case Arg::Kernel:
              text(a, e.kernel);
              break;
            case Arg::Census:  // the census's args: never arg_key's
            case Arg::Other:
              break;
          }
        }
        break;
      case Key::Other:
        break;
    }
  }
  return true;
}

// ---- On-Demand ----------------------------------------------------------------------------------------
inline std::string_view token(od::value& v) {
  std::string_view t = v.raw_json_token();
  while (!t.empty() && (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t'))
    t.remove_suffix(1);
  return t;
}
inline void text(od::value v, std::string& out) {
  switch (v.type()) {
    case od::json_type::string:
      out.assign(std::string_view(v.get_string()));
      break;
    case od::json_type::array:
    case od::json_type::object:
      out.clear();
      break;
    default:
      out.assign(token(v));
  }
}
inline std::optional<int64_t> integer(od::value v) {
  switch (v.type()) {
    case od::json_type::number:
      return integer_text(token(v));
    case od::json_type::string:
      return integer_text(v.get_string());
    default:
      return std::nullopt;
  }
}
inline bool time(od::value v, double* out) {
  switch (v.type()) {
    case od::json_type::number:
      *out = v.get_double();
      return std::isfinite(*out);
    case od::json_type::string:
      return time_text(v.get_string(), out);
    default:
      return false;
  }
}
inline void strings(od::value v, std::vector<std::string>& out) {
  out.clear();
  if (v.type() != od::json_type::array) return;
  for (od::value x : v.get_array()) {
    out.emplace_back();
    text(x, out.back());
  }
}
inline void shape(od::value v, std::vector<int64_t>& s) {
  if (v.type() != od::json_type::array) return;
  for (od::value d : v.get_array()) s.push_back(integer(d).value_or(-1));
}
inline void dims(od::value v, std::vector<std::vector<std::vector<int64_t>>>& out) {
  out.clear();
  if (v.type() != od::json_type::array) return;
  for (od::value a : v.get_array()) {
    auto& arg = out.emplace_back();
    if (a.type() != od::json_type::array) continue;
    od::array arr = a.get_array();
    bool list = false, first = true;
    for (od::value x : arr) {  // single pass: the first element says whether it is a TensorList
      if (first) list = x.type() == od::json_type::array, first = false;
      if (list) {
        shape(x, arg.emplace_back());
      } else {
        if (arg.empty()) arg.emplace_back();
        arg.back().push_back(integer(x).value_or(-1));
      }
    }
  }
}
template <class Event, class Reader>
bool fill(od::object obj, Event& e) {
  using Key = decltype(Reader::event_key(""));
  using Arg = decltype(Reader::arg_key(""));
  for (auto field : obj) {
    std::string_view key = field.unescaped_key();
    od::value v = field.value();
    switch (Reader::event_key(key)) {
      case Key::Ph:
        text(v, e.ph);
        break;
      case Key::Cat:
        text(v, e.cat);
        if (!Reader::relevant(e.cat)) return false;
        break;
      case Key::Name:
        text(v, e.name);
        break;
      case Key::Pid:
        text(v, e.pid);
        break;
      case Key::Tid:
        text(v, e.tid);
        break;
      case Key::Ts:
        e.has_ts = time(v, &e.ts);
        break;
      case Key::Dur:
        e.has_dur = time(v, &e.dur);
        break;
      case Key::Id:
        text(v, e.id);
        break;
      case Key::Args:
        if (v.type() != od::json_type::object) break;
        for (auto af : v.get_object()) {
          std::string_view akey = af.unescaped_key();
          od::value a = af.value();
          switch (Reader::arg_key(akey)) {
            case Arg::Ext:
              e.ext = integer(a).value_or(-1);
              break;
            case Arg::Hier:
              text(a, e.hier);
              break;
            case Arg::Corr:
              e.corr = integer(a).value_or(-1);
              break;
            case Arg::Dims:
              e.has_dims = true, dims(a, e.call.dims);
              break;
            case Arg::Types:
              strings(a, e.call.types);
              break;
            case Arg::Concrete:
              strings(a, e.call.concrete);
              break;
            case Arg::Allocated:
              e.allocated = integer(a).value_or(-1);
              break;
            case Arg::Device:
              e.device = integer(a).value_or(-1);
              break;
            case Arg::Kernel:
              text(a, e.kernel);
              break;
            case Arg::Census:  // the census's args: never arg_key's
            case Arg::Other:
              break;
          }
        }
        break;
      case Key::Other:
        break;
    }
  }
  return true;
}

// ---- batches: no hand scan of the events ----------------------------------------------------------------
// The event array of a plain file parsed in batches of about 4 MiB, each cut at a line that opens an object
// (as the range reader cuts) and parsed whole as "[...]": the hand scanner does not see the events at all.
// Bench only: a line-start '{' inside an event (the range reader reads such a start again) is not handled
// here, the array's ']' is taken to open the last line that starts with one. `at`: the offset of the '['.
// Returns the offset of the ']'.
constexpr size_t kBatch = 4u << 20;
inline size_t last_object_line(const std::string& b, bool end_of_array) {
  for (size_t i = b.size(); i-- > 1;) {
    char c = b[i];
    if (c != (end_of_array ? ']' : '{')) continue;
    size_t j = i;
    while (j > 0 && (b[j - 1] == ' ' || b[j - 1] == '\t')) --j;
    if (j > 0 && b[j - 1] == '\n') return i;
  }
  return std::string::npos;
}
template <class OnDom, class OnOd>
int64_t batched(const std::string& path, int64_t at, OnDom on_dom, OnOd on_od) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f || fseeko(f, static_cast<off_t>(at + 1), SEEK_SET) != 0) throw InputError(path + ": cannot reopen");
  std::string buf, doc;
  int64_t buf_at = at + 1;
  dom::parser dp;
  od::parser op;
  for (bool eof = false; !eof;) {
    size_t old = buf.size();
    buf.resize(old + kBatch);
    size_t n = std::fread(&buf[old], 1, kBatch, f);
    buf.resize(old + n);
    eof = n == 0;
    size_t cut = last_object_line(buf, eof);
    if (cut == std::string::npos) {
      if (eof) throw InputError(path + ": no line opening with the event array's ']'");
      continue;
    }
    size_t end = cut;  // the events' text: up to the last '}' before the cut
    while (end > 0 && buf[end - 1] != '}') --end;
    doc.assign("[");
    doc.append(buf, 0, end);
    doc.append("]");
    doc.reserve(doc.size() + simdjson::SIMDJSON_PADDING);
    if (mode == Mode::DomBatch) {
      for (dom::element e : dom::array(dp.parse(doc.data(), doc.size(), false))) on_dom(e);
    } else {
      od::document d = op.iterate(doc.data(), doc.size(), doc.capacity());
      for (od::value e : d.get_array()) on_od(e);
    }
    buf.erase(0, cut);
    buf_at += static_cast<int64_t>(cut);
  }
  std::fclose(f);
  return buf_at;
}

// The reader's hook at its event array ('[' next): in a batch mode, every event read by batched() into `e`,
// `keep()` called for each the reader keeps, the parser left after the ']'; true then.
template <class Reader, class Parser, class Event, class Keep>
bool in_batches(Parser& p, const std::string& path, Event& e, int64_t& events, Keep keep) {
  if (mode != Mode::DomBatch && mode != Mode::OnDemandBatch) return false;
  auto on_dom = [&](dom::element v) {
    ++events, e.clear();
    if (v.is_object() && fill<Event, Reader>(dom::object(v), e)) keep();
  };
  auto on_od = [&](od::value v) {
    ++events, e.clear();
    if (v.type() == od::json_type::object && fill<Event, Reader>(od::object(v.get_object()), e)) keep();
  };
  p.seek(batched(path, p.offset(), on_dom, on_od));
  p.more(']');
  return true;
}

// ---- the hook -----------------------------------------------------------------------------------------
struct Scratch {
  std::string text;
  dom::parser dom;
  od::parser od;
};
inline thread_local Scratch scratch;

// At '{' of an event: its text captured and parsed; false when the reader does not keep it (an irrelevant
// category). A simdjson error is the reader's one-line error at the event's first byte.
template <class Reader, class Parser, class Event>
bool parse_event(Parser& p, Event& e) {
  Scratch& s = scratch;
  const int64_t start = p.offset();
  s.text.clear();
  p.capture_object(s.text);
  if (mode == Mode::Capture) return false;  // the floor: the events' ends found, nothing parsed
  s.text.reserve(s.text.size() + simdjson::SIMDJSON_PADDING);
  try {
    if (mode == Mode::Dom) {
      dom::element doc = s.dom.parse(s.text.data(), s.text.size(), false);
      return fill<Event, Reader>(dom::object(doc), e);
    }
    od::document doc = s.od.iterate(s.text.data(), s.text.size(), s.text.capacity());
    return fill<Event, Reader>(od::object(doc.get_object()), e);
  } catch (const simdjson::simdjson_error& err) {
    p.fail(std::string(err.what()) + " in the event at byte " + std::to_string(start));
  }
}

}  // namespace flopwise::bench_trace
