// src/cli/output.h — where a command writes what it prints.
#pragma once

#include <fstream>
#include <ostream>
#include <string>

namespace flopwise {

// `path` opened into `file` (-o FILE), or stdout when empty. Throws UsageError when the file cannot be
// written.
std::ostream& output_stream(const std::string& path, std::ofstream& file);

}  // namespace flopwise
