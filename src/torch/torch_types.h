// src/torch/torch_types.h — c10's ScalarType for an IR dtype (the table is flopwise/aten_lower.h's), and
// the small string helpers the TorchScript importer's files share. Sees LibTorch (c10) headers: include only
// from src/torch/ and the LibTorch test probe.
#pragma once

#include <c10/core/ScalarType.h>

#include <optional>
#include <sstream>
#include <string>

#include "flopwise/aten_lower.h"
#include "flopwise/ir.h"

namespace flopwise {

// Float for types torch has no match for (zero inputs for a shape run only).
inline c10::ScalarType scalar_type_of(DType t) {
  for (const auto& [number, dtype] : kTorchScalarTypes)  // only the numbers this LibTorch has
    if (dtype == t && number < static_cast<int>(c10::ScalarType::NumOptions))
      return static_cast<c10::ScalarType>(number);
  return c10::ScalarType::Float;
}

// The first non-blank line of a (multi-line) LibTorch message.
inline std::string first_line(const std::string& s) {
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
  return s;
}

// "__torch__.torchvision.models.resnet.___torch_mangle_3.BasicBlock" -> "BasicBlock".
inline std::string clean_class(const std::string& q) {
  auto dot = q.rfind('.');
  return dot == std::string::npos ? q : q.substr(dot + 1);
}

}  // namespace flopwise
