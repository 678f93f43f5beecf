// tests/aten_call_util.h — a recorded aten call as a profiler trace writes it (flopwise/aten_call.h), for the
// tests that price calls through the neutral aten table (cost_aten_calls).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "flopwise/aten_call.h"

namespace fwtest {

// op ("aten::mm"), the "Input type" per argument, the "Input Dims" per argument (one shape per tensor), the
// "Concrete Inputs" per argument.
inline flopwise::AtenCall recorded_call(const std::string& op, std::vector<std::string> types,
                                        std::vector<std::vector<std::vector<int64_t>>> dims,
                                        std::vector<std::string> concrete) {
  flopwise::AtenCall c;
  c.op = op;
  c.types = std::move(types);
  c.dims = std::move(dims);
  c.concrete = std::move(concrete);
  return c;
}

}  // namespace fwtest
