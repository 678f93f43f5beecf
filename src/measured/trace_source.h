// src/measured/trace_source.h — the bytes and tokens of the PyTorch trace reader (trace_read.cc): the
// byte source (a file, or a gzip stream inflated chunk by chunk through zlib, with the bomb guard) and a pull
// parser over it that keeps no document, and the walk over the document to its event array. Internal header
// of src/measured, included by the trace reader (trace_read.cc) and the census reader (trace_census_read.cc).
#pragma once

#include <sys/stat.h>
#include <zlib.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flopwise/errors.h"
#include "flopwise/torch_trace.h"

namespace flopwise::trace_read {

using namespace std::string_view_literals;

constexpr size_t kChunk = 1 << 20;
constexpr size_t kMaxString =
    64u << 20;  // one JSON string (a kernel name, a stack) longer than this: refused

// Bytes of the file, inflated when it is gzip.
class Source {
 public:
  Source(const std::string& path, const TraceReadOptions& opts) : path_(path), opts_(opts) {
    require_regular_file(path);
    f_ = std::fopen(path.c_str(), "rb");
    if (!f_) throw InputError(path + ": cannot open the trace (" + std::strerror(errno) + ")");
    in_.resize(kChunk);
    size_t n = std::fread(in_.data(), 1, in_.size(), f_);
    in_len_ = n;
    gzip_ =
        n >= 2 && static_cast<unsigned char>(in_[0]) == 0x1f && static_cast<unsigned char>(in_[1]) == 0x8b;
    if (gzip_) {
      std::memset(&zs_, 0, sizeof zs_);
      if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) throw InputError(path + ": zlib cannot start");
      zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
      zs_.avail_in = static_cast<uInt>(in_len_);
      compressed_ = static_cast<int64_t>(in_len_);
    }
  }
  ~Source() {
    if (gzip_) inflateEnd(&zs_);
    if (f_) std::fclose(f_);
  }
  // A batch of event texts in memory (the batch reader's workers).
  explicit Source(std::string_view mem) : mem_(mem), memory_(true) {}
  // The bytes of a plain (not gzip) file from `offset` on (the range reader's workers).
  Source(const std::string& path, int64_t offset) : path_(path) {
    f_ = std::fopen(path.c_str(), "rb");
    if (!f_ || fseeko(f_, static_cast<off_t>(offset), SEEK_SET) != 0)
      throw InputError(path + ": cannot reopen the trace (" + std::strerror(errno) + ")");
  }
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;

  // Fills `out` with the next bytes; returns how many (0 at the end).
  size_t read(char* out, size_t cap) {
    if (memory_) {
      size_t n = std::min(cap, mem_.size() - mem_off_);
      std::memcpy(out, mem_.data() + mem_off_, n);
      mem_off_ += n;
      produced_ += static_cast<int64_t>(n);
      return n;
    }
    if (!gzip_) {
      if (in_off_ < in_len_) {  // the first chunk, read to sniff the magic bytes
        size_t n = std::min(cap, in_len_ - in_off_);
        std::memcpy(out, in_.data() + in_off_, n);
        in_off_ += n;
        produced_ += static_cast<int64_t>(n);
        return n;
      }
      size_t n = std::fread(out, 1, cap, f_);
      produced_ += static_cast<int64_t>(n);
      return n;
    }
    if (ended_) return 0;
    zs_.next_out = reinterpret_cast<Bytef*>(out);
    zs_.avail_out = static_cast<uInt>(cap);
    while (zs_.avail_out == cap) {
      if (zs_.avail_in == 0) {
        size_t n = std::fread(in_.data(), 1, in_.size(), f_);
        if (n == 0) {
          truncated_gzip_ = true;  // no end of stream: a cut file
          ended_ = true;
          break;
        }
        compressed_ += static_cast<int64_t>(n);
        zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
        zs_.avail_in = static_cast<uInt>(n);
      }
      int rc = inflate(&zs_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        // Another gzip member may follow (concatenated files); else the end.
        if (zs_.avail_in == 0) {
          size_t n = std::fread(in_.data(), 1, in_.size(), f_);
          compressed_ += static_cast<int64_t>(n);
          zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
          zs_.avail_in = static_cast<uInt>(n);
        }
        if (zs_.avail_in == 0) {
          ended_ = true;
          break;
        }
        inflateReset(&zs_);
        continue;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR)
        throw InputError(path_ + ": corrupt gzip data (" + (zs_.msg ? zs_.msg : "inflate failed") + ")");
      if (rc == Z_BUF_ERROR && zs_.avail_in != 0) throw InputError(path_ + ": corrupt gzip data");
    }
    size_t n = cap - zs_.avail_out;
    produced_ += static_cast<int64_t>(n);
    if (produced_ > (int64_t{64} << 20) &&
        produced_ / std::max<int64_t>(1, compressed_) > opts_.max_gzip_ratio)
      throw InputError(path_ + ": inflates to more than " + std::to_string(opts_.max_gzip_ratio) +
                       " times its size (a gzip bomb?); real traces compress 5-30x");
    return n;
  }
  bool truncated_gzip() const { return truncated_gzip_; }
  bool gzip() const { return gzip_; }
  // The file's size in bytes (-1 for a batch in memory).
  int64_t size() const {
    struct stat st {};
    if (memory_ || !f_ || fstat(fileno(f_), &st) != 0) return -1;
    return static_cast<int64_t>(st.st_size);
  }
  // Large enough to read on several threads: 64 MiB of JSON, or 8 MiB of gzip.
  bool large() const { return size() >= (gzip_ ? (int64_t{8} << 20) : (int64_t{64} << 20)); }
  // A plain file from `offset` on, this source's buffered bytes dropped (the parser's seek).
  void seek(int64_t offset) {
    if (gzip_ || memory_ || fseeko(f_, static_cast<off_t>(offset), SEEK_SET) != 0)
      throw InputError(path_ + ": cannot seek in the trace");
    in_off_ = in_len_;
  }

 private:
  std::string path_;
  TraceReadOptions opts_;
  std::FILE* f_ = nullptr;
  std::vector<char> in_;
  size_t in_len_ = 0, in_off_ = 0;
  bool gzip_ = false, ended_ = false, truncated_gzip_ = false;
  std::string_view mem_;
  size_t mem_off_ = 0;
  bool memory_ = false;
  z_stream zs_{};
  int64_t compressed_ = 0, produced_ = 0;
};

// The parser's buffer holds kChunk bytes and kPad more, so a 16-byte load that starts before the end of the
// bytes read never leaves it; what it sees past the end is masked.
constexpr size_t kPad = 64;

// The first '"' or '\\' in [b, e), else e: 16 bytes at a time where SSE2 is there (x86-64). Reads up to 15
// bytes past e.
inline const char* quote_or_escape(const char* b, const char* e) {
#ifdef __SSE2__
  const __m128i quote = _mm_set1_epi8('"'), esc = _mm_set1_epi8('\\');
  for (; b < e; b += 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
    if (int bits = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, esc)))) {
      const char* r = b + __builtin_ctz(static_cast<unsigned>(bits));
      return r < e ? r : e;
    }
  }
  return e;
#else
  const void* q = std::memchr(b, '"', static_cast<size_t>(e - b));
  const char* end = q ? static_cast<const char*>(q) : e;
  const void* esc = std::memchr(b, '\\', static_cast<size_t>(end - b));
  return esc ? static_cast<const char*>(esc) : end;
#endif
}

// The first of '"', '{', '[', '}', ']' in [b, e), else e: 16 bytes at a time where SSE2 is there. Reads up to
// 15 bytes past e.
inline const char* next_structural(const char* b, const char* e) {
#ifdef __SSE2__
  const __m128i quote = _mm_set1_epi8('"'), lb = _mm_set1_epi8('{'), ls = _mm_set1_epi8('['),
                rb = _mm_set1_epi8('}'), rs = _mm_set1_epi8(']');
  for (; b < e; b += 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
    __m128i m = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, lb)),
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, ls), _mm_cmpeq_epi8(v, rb)), _mm_cmpeq_epi8(v, rs)));
    if (int bits = _mm_movemask_epi8(m)) {
      const char* r = b + __builtin_ctz(static_cast<unsigned>(bits));
      return r < e ? r : e;
    }
  }
  return e;
#else
  while (b < e && *b != '"' && *b != '{' && *b != '[' && *b != '}' && *b != ']') ++b;
  return b;
#endif
}

// What ends a scalar token.
inline bool token_end(char c) {
  return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// A pull parser over the source: the caller walks the structure it expects and skips the rest.
class TraceParser {
 public:
  TraceParser(Source& s, const std::string& path, int64_t base = 0)
      : src_(s), path_(path), buf_(kChunk + kPad), consumed_(base) {}

  // At '{': appends the object's text, braces included, to `into` (strings and nesting followed).
  void capture_object(std::string& into) {
    size_t start = pos_;
    int64_t depth = 0;
    const size_t limit = into.size() + (256u << 20);
    for (;;) {
      if (pos_ == len_) {
        into.append(buf_.data() + start, pos_ - start);
        if (into.size() > limit) fail("an event over 256 MiB");
        if (!refill()) fail("unterminated object");
        start = 0;
      }
      const char* b = buf_.data() + pos_;
      const char* n = next_structural(b, buf_.data() + len_);
      pos_ += static_cast<size_t>(n - b);
      if (pos_ == len_) continue;
      char c = buf_[pos_++];
      if (c == '"') {
        for (;;) {  // to the closing quote, across refills
          const char* b = buf_.data() + pos_;
          const char* q = quote_or_escape(b, buf_.data() + len_);
          pos_ += static_cast<size_t>(q - b);
          if (pos_ == len_) {
            into.append(buf_.data() + start, pos_ - start);
            if (into.size() > limit) fail("an event over 256 MiB");
            if (!refill()) fail("unterminated string");
            start = 0;
            continue;
          }
          ++pos_;
          if (*q == '"') break;
          if (pos_ == len_) {  // an escape at the end of the buffer: its char is the next buffer's first
            into.append(buf_.data() + start, pos_ - start);
            if (!refill()) fail("unterminated string");
            start = 0;
          }
          ++pos_;
        }
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if ((c == '}' || c == ']') && --depth == 0) {
        into.append(buf_.data() + start, pos_ - start);
        return;
      }
    }
  }

  [[noreturn]] void fail(const std::string& what) {
    if (at_end_ && src_.truncated_gzip())
      throw InputError(path_ + ": truncated gzip stream (" + what + " at byte " + std::to_string(offset()) +
                       ")");
    throw InputError(path_ + ": not valid JSON (" + what + " at byte " + std::to_string(offset()) +
                     (at_end_ ? "; a truncated trace?" : "") + ")");
  }
  int64_t offset() const { return consumed_ + static_cast<int64_t>(pos_); }

  int peek() {
    if (pos_ == len_ && !refill()) return -1;
    return static_cast<unsigned char>(buf_[pos_]);
  }
  // ws, expect and more are inlined into the readers' loops, where they run per token: GCC's unit-growth
  // limit would otherwise leave them out of line as a reader grows (bench/README.md, issue 51's one read).
  [[gnu::always_inline]] int ws() {  // skips whitespace; the next char, not consumed
    for (;;) {
      if (pos_ == len_ && !refill()) return -1;
      char c = buf_[pos_];
      if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
        ++pos_;
      else
        return static_cast<unsigned char>(c);
    }
  }
  [[gnu::always_inline]] void expect(char c) {
    if (ws() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  // After a member or element: true for ',' (another follows), false for `close`.
  [[gnu::always_inline]] bool more(char close) {
    int c = ws();
    if (c == ',') {
      ++pos_;
      return true;
    }
    if (c == close) {
      ++pos_;
      return false;
    }
    fail(std::string("expected ',' or '") + close + "'");
  }
  // Opens '{' or '['; false when it is empty (the closer consumed too).
  bool open(char o, char close) {
    expect(o);
    if (ws() == close) {
      ++pos_;
      return false;
    }
    return true;
  }

  void string(std::string& out) {
    out.clear();
    if (ws() != '"') fail("expected a string");
    ++pos_;
    for (;;) {
      if (pos_ == len_ && !refill()) fail("unterminated string");
      const char* b = buf_.data() + pos_;
      const char* e = buf_.data() + len_;
      const char* q = quote_or_escape(b, e);
      out.append(b, static_cast<size_t>(q - b));
      pos_ += static_cast<size_t>(q - b);
      if (out.size() > kMaxString) fail("a string over 64 MiB");
      if (q == e) continue;
      ++pos_;
      if (*q == '"') return;
      if (pos_ == len_ && !refill()) fail("unterminated string");
      char c = buf_[pos_++];
      switch (c) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'u': {
          unsigned cp = 0;
          for (int i = 0; i < 4; ++i) {
            if (pos_ == len_ && !refill()) fail("unterminated string");
            char h = buf_[pos_++];
            cp = cp * 16 + static_cast<unsigned>(h >= 'a' ? h - 'a' + 10 : h >= 'A' ? h - 'A' + 10 : h - '0');
          }
          if (cp < 0x80) {
            out += static_cast<char>(cp);
          } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          } else {  // surrogates kept as their 3-byte forms: names only need to stay distinct
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          }
          break;
        }
        default:
          out += c;  // \" \\ \/
      }
    }
  }

  // A member's key: a view of the buffer where it lies there whole and unescaped (nearly always), else of a
  // copy. Valid until the parser reads on: classify it before anything else.
  std::string_view key() {
    if (ws() != '"') fail("expected a string");
    const char* b = buf_.data() + pos_ + 1;
    const char* e = buf_.data() + len_;
    const char* q = quote_or_escape(b, e);
    if (q < e && *q == '"') {
      pos_ = static_cast<size_t>(q + 1 - buf_.data());
      return {b, static_cast<size_t>(q - b)};
    }
    string(key_);
    return key_;
  }

  // A scalar token (number, true, false, null) as text.
  void token(std::string& out) {
    out.clear();
    ws();
    for (;;) {
      if (pos_ == len_ && !refill()) break;
      const char* b = buf_.data() + pos_;
      const char* e = buf_.data() + len_;
      const char* q = b;
      while (q < e && !token_end(*q)) ++q;
      out.append(b, static_cast<size_t>(q - b));
      pos_ += static_cast<size_t>(q - b);
      if (out.size() > 64) fail("a number over 64 characters");
      if (q < e) break;
    }
    if (out.empty()) fail("expected a value");
  }
  // The usual case of a number: whole in the buffer, read where it lies (consumed when it is).
  template <class T>
  bool number_in_place(T* v) {
    const char* b = buf_.data() + pos_;
    const char* e = buf_.data() + len_;
    auto [end, ec] = std::from_chars(b, e, *v);
    if (ec != std::errc() || end == e || !token_end(*end)) return false;
    pos_ += static_cast<size_t>(end - b);
    return true;
  }
  double number() {
    ws();
    if (double v = 0; number_in_place(&v)) return v;
    token(tok_);
    double v = 0;
    auto [end, ec] = std::from_chars(tok_.data(), tok_.data() + tok_.size(), v);
    if (ec != std::errc() || end != tok_.data() + tok_.size()) fail("expected a number");
    return v;
  }
  // A number, or a string holding one (pid and tid are either); nullopt for anything else (skipped).
  std::optional<int64_t> integer() {
    int c = ws();
    if (c == '"') {
      string(tok_);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      if (int64_t v = 0; number_in_place(&v)) return v;
      token(tok_);
    } else {
      skip();
      return std::nullopt;
    }
    const char* b = tok_.data();
    const char* e = b + tok_.size();
    int64_t v = 0;
    auto [end, ec] = std::from_chars(b, e, v);
    if (ec == std::errc() && end == e) return v;
    if (end == b || ec == std::errc::result_out_of_range) return std::nullopt;
    if (*end == '.' || *end == 'e' || *end == 'E') {  // 12.0: an integer written as a double
      double d = 0;
      auto [dend, dec] = std::from_chars(b, e, d);
      if (dec != std::errc() || d < -9.2e18 || d > 9.2e18) return std::nullopt;
      return static_cast<int64_t>(d);
    }
    return v;
  }
  // A time (ts, dur): a number, or a string holding one (some writers quote ts); false for anything else
  // (skipped) and for one that is not finite.
  bool finite_number(double* out) {
    int c = ws();
    if (c == '-' || (c >= '0' && c <= '9')) {
      *out = number();
      return std::isfinite(*out);
    }
    if (c == '"') {
      string(tok_);
      char* end = nullptr;
      *out = std::strtod(tok_.c_str(), &end);
      return end != tok_.c_str() && std::isfinite(*out);
    }
    skip();
    return false;
  }
  // Any value as text: a string's contents, a scalar's token.
  void text(std::string& out) {
    int c = ws();
    if (c == '"')
      string(out);
    else if (c == '{' || c == '[')
      skip(), out.clear();
    else
      token(out);
  }

  // Skips one value of any kind, nesting counted (no recursion: a hostile depth costs nothing).
  void skip() {
    int c = ws();
    if (c == '"') return skip_string();
    if (c != '{' && c != '[') {
      const char* b = buf_.data() + pos_;  // the usual case: a scalar ending in the buffer, passed over
      const char* e = buf_.data() + len_;
      const char* q = b;
      while (q < e && !token_end(*q)) ++q;
      if (q < e && q > b && q - b <= 64) {
        pos_ += static_cast<size_t>(q - b);
        return;
      }
      return token(tok_);
    }
    ++pos_;
    skip_nested(1, "unterminated object or array");
  }
  // Inside an object, after a member: skips the remaining members and the closing brace.
  void skip_rest_of_object() { skip_nested(1, "unterminated object"); }
  // Skips to the bracket that closes `depth` open ones.
  void skip_nested(int64_t depth, const char* what) {
    for (;;) {
      if (pos_ == len_ && !refill()) fail(what);
      const char* b = buf_.data() + pos_;
      const char* e = buf_.data() + len_;
      const char* q = next_structural(b, e);
      pos_ += static_cast<size_t>(q - b);
      if (q == e) continue;
      if (*q == '"') {
        skip_string();
        continue;
      }
      ++pos_;
      if (*q == '{' || *q == '[') {
        ++depth;
      } else if (--depth == 0) {
        return;
      }
    }
  }
  void skip_string() {
    ++pos_;  // the opening quote
    for (;;) {
      if (pos_ == len_ && !refill()) fail("unterminated string");
      const char* b = buf_.data() + pos_;
      const char* e = buf_.data() + len_;
      const char* q = quote_or_escape(b, e);
      pos_ += static_cast<size_t>(q - b);
      if (q == e) continue;
      ++pos_;
      if (*q == '"') return;
      if (pos_ == len_ && !refill()) fail("unterminated string");
      ++pos_;  // the escaped char
    }
  }
  bool at_eof() { return ws() == -1; }
  // Reads on from byte `offset` of a plain file.
  void seek(int64_t offset) {
    src_.seek(offset);
    consumed_ = offset;
    pos_ = len_ = 0;
    at_end_ = false;
  }

 private:
  Source& src_;
  std::string path_;
  std::vector<char> buf_;
  size_t pos_ = 0, len_ = 0;
  int64_t consumed_;
  bool at_end_ = false;
  std::string tok_, key_;

  bool refill() {
    if (at_end_) return false;
    consumed_ += static_cast<int64_t>(len_);
    pos_ = 0;
    len_ = src_.read(buf_.data(), kChunk);
    if (len_ == 0) at_end_ = true;
    return len_ > 0;
  }
};

// A table read record by record: kept in blocks (no doubling, no copying while it grows), then moved into one
// vector of its exact size block by block, each freed once copied: the peak is the records and one block, not
// up to three times the records as a growing vector's.
template <class T>
class Blocks {
 public:
  void push_back(const T& x) {
    if (blocks_.empty() || blocks_.back().size() == blocks_.back().capacity()) {
      blocks_.emplace_back();
      blocks_.back().reserve(std::min<size_t>(size_t{1} << 16, std::max<size_t>(1024, size_)));
    }
    blocks_.back().push_back(x);
    ++size_;
  }
  size_t size() const { return size_; }
  std::vector<T> take() {
    std::vector<T> out;
    out.reserve(size_);
    for (auto& b : blocks_) {
      out.insert(out.end(), b.begin(), b.end());
      std::vector<T>().swap(b);
    }
    blocks_.clear();
    size_ = 0;
    return out;
  }

 private:
  std::vector<std::vector<T>> blocks_;
  size_t size_ = 0;
};

// Each element of an event array ('[' next): `on_event()` at an object ('{' next), anything else skipped.
template <class OnEvent>
void each_event(TraceParser& p, OnEvent on_event) {
  if (!p.open('[', ']')) return;
  do {
    if (p.ws() == '{')
      on_event();
    else
      p.skip();
  } while (p.more(']'));
}

// The document's walk, the one both readers (trace_read.cc, trace_census_read.cc) take: a bare array of
// events (chrome://tracing's other form) or an object whose "traceEvents" member is that array.
// `on_events()` is called at the array (its '[' next), `on_member(key)` at the value of every other member of
// the object (it reads or skips that value). Text after the document is an error.
template <class OnEvents, class OnMember>
void walk_trace(TraceParser& p, const std::string& path, OnEvents on_events, OnMember on_member) {
  int c = p.ws();
  if (c == '[') {
    on_events();
  } else if (c == '{') {
    p.open('{', '}');
    std::string key;
    for (bool any = true; any; any = p.more('}')) {
      p.string(key);
      p.expect(':');
      if (key != "traceEvents"sv) {
        on_member(key);
        continue;
      }
      if (p.ws() != '[') throw InputError(path + ": \"traceEvents\" is not an array");
      on_events();
    }
  } else {
    throw InputError(path + ": not JSON (a PyTorch profiler trace is a JSON object with \"traceEvents\")");
  }
  if (!p.at_eof()) p.fail("text after the end of the trace");
}

}  // namespace flopwise::trace_read
