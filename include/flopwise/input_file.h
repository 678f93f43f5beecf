// include/flopwise/input_file.h — reading a whole input file (a saved report, a run report, a profile, a
// budget) the one way every reader does: refused unless a regular file (flopwise/errors.h), opened in binary,
// read into memory. Models are not read here: the ONNX importer maps them (src/import), LibTorch opens .pt
// archives.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "flopwise/errors.h"

namespace flopwise {

// The bytes of `path`. Throws InputError "<path>: cannot open<what>" (what: "" or " the profile", ...), or
// require_regular_file's errors for a FIFO, a device or a directory.
inline std::string read_input_file(const std::string& path, const std::string& what = "") {
  require_regular_file(path);
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(path + ": cannot open" + what);
  std::ostringstream ss;
  ss << f.rdbuf();
  return std::move(ss).str();
}

}  // namespace flopwise
