#include "output.h"

#include <iostream>

#include "flopwise/errors.h"

namespace flopwise {

std::ostream& output_stream(const std::string& path, std::ofstream& file) {
  if (path.empty()) return std::cout;
  file.open(path);
  if (!file) throw UsageError("cannot write " + path);
  return file;
}

}  // namespace flopwise
