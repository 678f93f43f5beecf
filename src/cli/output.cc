// src/cli/output.cc — where a command writes what it prints (output.h): the output file or stdout, control
// characters escaped on the standard streams, and error messages with their class.
#include "output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "flopwise/errors.h"
#include "flopwise/json_text.h"

namespace flopwise {

namespace {
bool is_control(unsigned char c) { return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f; }

// Index of the first control character in s[i, n), or n. Reports are megabytes of plain text (a JSON
// report of a 6 k-node model is 2.5 MB): 16 bytes at a time where SSE2 is there, a byte at a time after.
std::streamsize next_control(const char* s, std::streamsize i, std::streamsize n) {
#if defined(__SSE2__)
  const __m128i max_low = _mm_set1_epi8(0x1f), del = _mm_set1_epi8(0x7f), nl = _mm_set1_epi8('\n'),
                tab = _mm_set1_epi8('\t');
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i low = _mm_cmpeq_epi8(_mm_min_epu8(v, max_low), v);  // v <= 0x1f (unsigned)
    const __m128i allowed = _mm_or_si128(_mm_cmpeq_epi8(v, nl), _mm_cmpeq_epi8(v, tab));
    const __m128i bad = _mm_or_si128(_mm_andnot_si128(allowed, low), _mm_cmpeq_epi8(v, del));
    if (const int mask = _mm_movemask_epi8(bad)) return i + __builtin_ctz(static_cast<unsigned>(mask));
  }
#endif
  for (; i < n; ++i)
    if (is_control(static_cast<unsigned char>(s[i]))) return i;
  return n;
}
}  // namespace

bool ControlEscapingBuf::put(const char* s, std::streamsize n) {
  std::streamsize start = 0;
  for (std::streamsize i = next_control(s, 0, n); i < n; i = next_control(s, i + 1, n)) {
    if (dest_->sputn(s + start, i - start) != i - start) return false;
    char esc[8];
    std::snprintf(esc, sizeof esc, "\\x%02x", static_cast<unsigned char>(s[i]));
    if (dest_->sputn(esc, 4) != 4) return false;
    start = i + 1;
  }
  return dest_->sputn(s + start, n - start) == n - start;
}

ControlEscapingBuf::int_type ControlEscapingBuf::overflow(int_type ch) {
  if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
  const char c = traits_type::to_char_type(ch);
  return put(&c, 1) ? ch : traits_type::eof();
}

std::streamsize ControlEscapingBuf::xsputn(const char* s, std::streamsize n) { return put(s, n) ? n : 0; }

void escape_control_characters_in_std_streams() {
  static ControlEscapingBuf out(std::cout.rdbuf()), err(std::cerr.rdbuf());
  std::cout.rdbuf(&out);
  std::cerr.rdbuf(&err);
}

std::ostream& output_stream(const std::string& path, std::ofstream& file) {
  if (path.empty()) {
#if defined(F_SETPIPE_SZ)
    // Standard output into a pipe (| jq, | less, a CI step's capture): a report is megabytes (Swin-T's JSON
    // is 2.5 MB) and the default 64 KiB pipe makes the writer wait on the reader every 64 KiB. Ask for the
    // unprivileged maximum, 1 MiB; refused or not a pipe, nothing changes.
    struct stat st;
    if (fstat(STDOUT_FILENO, &st) == 0 && S_ISFIFO(st.st_mode)) fcntl(STDOUT_FILENO, F_SETPIPE_SZ, 1 << 20);
#endif
    return std::cout;
  }
  file.open(path);
  if (!file) throw UsageError("cannot write " + path);
  // One report file per run: the escaping stream lives as long as the process.
  static std::unique_ptr<ControlEscapingBuf> buf;
  static std::unique_ptr<std::ostream> os;
  buf = std::make_unique<ControlEscapingBuf>(file.rdbuf());
  os = std::make_unique<std::ostream>(buf.get());
  return *os;
}

void print_error(std::string_view prefix, std::string_view cls, const std::string& message) {
  std::cerr << prefix << message << "\n";
  const char* format = std::getenv("FLOPWISE_ERROR_FORMAT");
  if (format && std::strcmp(format, "json") == 0) {
    nlohmann::ordered_json line = {{"error", cls}, {"message", message}};
    std::cerr << json_text(line) << "\n";
  }
  std::cerr.flush();
}

const char* error_class(const Error& e) {
  if (dynamic_cast<const InputError*>(&e)) return "InputError";
  if (dynamic_cast<const UsageError*>(&e)) return "UsageError";
  if (dynamic_cast<const ShapeError*>(&e)) return "ShapeError";
  return "Error";
}

}  // namespace flopwise
