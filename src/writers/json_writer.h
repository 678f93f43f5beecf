// src/writers/json_writer.h — the streaming JSON writer of flopwise.report/1 (json_report.cc): nlohmann's
// dump(2) layout byte for byte, no DOM, through a fixed-size buffer. Private to src/writers.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <ostream>
#include <string_view>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "flopwise/dim.h"
#include "poly_text.h"

namespace flopwise::writers_detail {

// Writes pretty-printed JSON in nlohmann's dump(2) layout: "{" or "[", each member on its own line two
// spaces deeper, "key": value, "," between members, "{}" and "[]" when empty. Output goes through a
// fixed-size buffer to the stream. The caller keeps the calls well nested (a key before each object member).
class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& os) : os_(os), buf_(new char[kBufSize + kSlack]) { open_.reserve(32); }
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

  // A value written elsewhere as nlohmann's dump(2), re-indented to this depth.
  void dumped(std::string_view text) {
    next_member_unless_keyed();
    for (size_t from = 0, nl; from < text.size(); from = nl + 1) {
      nl = std::min(text.find('\n', from), text.size());
      if (from) newline_indent(open_.size());
      put(text.substr(from, nl - from));
    }
  }

  // A value's text copied from an earlier write of the same value at the same depth (keyed_text): one copy
  // instead of its tokens. Only after a key (a value in an array would change the member count).
  void keyed_raw(std::string_view text) {
    assert(keyed_value());
    put(text);
  }
  // Whether the next value follows a key; the depth of the next value.
  bool keyed_value() const { return !open_.empty() && open_.back().keyed; }
  size_t depth() const { return open_.size(); }
  // The bytes written so far, and the text written since `mark` (a value just written, to be reused by
  // keyed_raw), when it is still in the buffer; nullopt when it has gone to the stream.
  size_t mark() const { return flushed_ + used_; }
  std::optional<std::string_view> since(size_t mark) const {
    if (mark < flushed_) return std::nullopt;
    return std::string_view(buf_.get() + (mark - flushed_), flushed_ + used_ - mark);
  }

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
    flushed_ += used_;
    used_ = 0;
  }

  void put(std::string_view s) {
    if (s.empty()) return;  // an empty view may have no data (memcpy's source must not be null)
    if (used_ + s.size() > kBufSize) {
      flush();
      if (s.size() > kBufSize) {
        os_.write(s.data(), static_cast<std::streamsize>(s.size()));
        flushed_ += s.size();
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
    if (open_.back().members++) put(',');
    newline_indent(open_.size());
  }
  // Before a value: a key already placed it when inside an object.
  void next_member_unless_keyed() {
    if (!keyed_value()) next_member();
  }

  void open(char bracket) {
    next_member_unless_keyed();
    put(bracket);
    open_.push_back(Level{0, bracket == '{'});
  }
  void close(char bracket) {
    const size_t members = open_.back().members;
    open_.pop_back();
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
    auto bad16 = [&](const char* at) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
      // Signed: bytes >= 0x80 are negative, so "v < 0x20" also catches them.
      const __m128i bad = _mm_or_si128(_mm_or_si128(_mm_cmplt_epi8(v, space), _mm_cmpeq_epi8(v, del)),
                                       _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
      return _mm_movemask_epi8(bad) != 0;
    };
    if (n >= 16) {  // 16 at a time, the tail as the last 16 bytes (overlapping the block before)
      for (; n > 16; p += 16, n -= 16)
        if (bad16(p)) return false;
      return !bad16(p + n - 16);
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
  size_t flushed_ = 0;      // bytes sent to the stream
  PolyTextMemo poly_text_;  // symbolic counts' text, once per polynomial
  struct Level {
    size_t members;  // written so far
    bool keyed;      // an object: its values follow keys
  };
  std::vector<Level> open_;  // the open objects and arrays, outermost first
};

}  // namespace flopwise::writers_detail
