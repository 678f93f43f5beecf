// include/flopwise/aten_schema.h — aten operator schemas without LibTorch: torch's own schema strings
// ("aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, ...) -> Tensor"), parsed
// into argument names, types and defaults, so that a call that names its arguments (a .pt2 program) or
// records only some (a profiler trace) becomes an AtenNode with every argument in schema position.
// The table is torch 2.14's (src/aten/aten_schemas.txt, written by models/pt2/aten_schemas.py), and a few
// library ops that are an aten op in all but name (aten_schema.cc: transformers' grouped_mm_fallback).
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "flopwise/aten_lower.h"

namespace flopwise {

struct AtenArg {
  std::string name;
  AtenType type;
  std::optional<Known> default_value;  // absent: the caller must pass it
  bool kwarg_only = false;
};

struct AtenSchema {
  std::string name;      // "aten::conv2d"
  std::string overload;  // "" for the default overload, "Tensor", "out", ...
  std::vector<AtenArg> args;
  std::vector<std::string> arg_names;  // args' names, by position (AtenNode::arg_names)
  std::vector<AtenType> returns;
  int index_of(std::string_view arg) const;  // -1 when it has no such argument
};

// One schema string; nullopt when it does not parse.
std::optional<AtenSchema> parse_aten_schema(std::string_view text);

// Indexed by name when built; each name's schemas are parsed the first time it is asked for (a program
// uses a few dozen of the table's thousands), once, under a per-name flag: lookups may come from any thread.
class AtenSchemas {
 public:
  explicit AtenSchemas(std::string text);  // one schema per line; lines that do not parse are skipped
  // "aten::conv2d" and "default" (or ""), "Tensor", ...; nullptr when unknown.
  const AtenSchema* find(std::string_view name, std::string_view overload) const;
  // Every overload of "aten::add", in the table's order.
  const std::vector<const AtenSchema*>& overloads(std::string_view name) const;

 private:
  struct Op {
    std::vector<std::string_view> lines;  // views of text_
    mutable std::once_flag parsed;
    mutable std::vector<AtenSchema> all;
    mutable std::vector<const AtenSchema*> list;
  };
  std::string text_;
  std::unordered_map<std::string_view, Op> by_name_;  // keys: views of text_
};

const AtenSchemas& aten_schemas();  // torch 2.14's aten operators, and those library ops

}  // namespace flopwise
