// src/cli/output.h — where a command writes what it prints.
#pragma once

#include <fstream>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>

namespace flopwise {

struct Error;

// `path` opened into `file` (-o FILE), or stdout when empty. Throws UsageError when the file cannot be
// written. What is written goes through a ControlEscapingBuf.
std::ostream& output_stream(const std::string& path, std::ofstream& file);

// Passes bytes on to `dest`, with every control character but newline and tab (ESC, CR, BEL, DEL, ...)
// written as the text \xNN: a model's names, printed in a text, markdown or CSV report or in a message,
// cannot drive the terminal. JSON and HTML escape their strings themselves and have none left.
class ControlEscapingBuf : public std::streambuf {
 public:
  explicit ControlEscapingBuf(std::streambuf* dest) : dest_(dest) {}

 protected:
  int_type overflow(int_type ch) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override { return dest_->pubsync(); }

 private:
  bool put(const char* s, std::streamsize n);
  std::streambuf* dest_;
};

// How a command's error ends it, on stderr: the line `prefix` + `message` ("flopwise: error: " and the
// message); and, where the environment has FLOPWISE_ERROR_FORMAT=json, then one line of JSON,
// {"error": "<cls>", "message": "<message>"}, for a program that runs the CLI (the Python package) to tell
// the error's class without reading its text. `cls` is one of the classes the README's Exit codes names:
// InputError, UsageError, ShapeError, Error (exit 2), StrictError (3), RunError (4-6), InternalError (70).
void print_error(std::string_view prefix, std::string_view cls, const std::string& message);

// The class print_error names for a library error: its type's name (InputError, UsageError, ShapeError),
// Error for any other.
const char* error_class(const Error& e);

// Installs ControlEscapingBuf on std::cout and std::cerr (once, at the start of main).
void escape_control_characters_in_std_streams();

}  // namespace flopwise
