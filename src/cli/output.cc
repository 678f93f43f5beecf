#include "output.h"

#include <cstdio>
#include <iostream>
#include <memory>

#include "flopwise/errors.h"

namespace flopwise {

namespace {
bool is_control(unsigned char c) { return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f; }
}  // namespace

bool ControlEscapingBuf::put(const char* s, std::streamsize n) {
  std::streamsize start = 0;
  for (std::streamsize i = 0; i < n; ++i) {
    if (!is_control(static_cast<unsigned char>(s[i]))) continue;
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
  if (path.empty()) return std::cout;
  file.open(path);
  if (!file) throw UsageError("cannot write " + path);
  // One report file per run: the escaping stream lives as long as the process.
  static std::unique_ptr<ControlEscapingBuf> buf;
  static std::unique_ptr<std::ostream> os;
  buf = std::make_unique<ControlEscapingBuf>(file.rdbuf());
  os = std::make_unique<std::ostream>(buf.get());
  return *os;
}

}  // namespace flopwise
