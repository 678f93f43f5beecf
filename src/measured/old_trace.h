// src/measured/old_trace.h — what torch 1.8-1.10's Kineto wrote differently (events of cat "Operator"; the
// record types of scalar arguments as "Int", "Double", "Bool", of int lists as "GenericList"): the trace
// reader renames those record types as torch 2.x writes them, so the aten table fits the same overloads.
// Internal header of the trace reader.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace flopwise::old_trace {

struct RecordTypeName {
  std::string_view old_name, name;
};
inline constexpr RecordTypeName kRecordTypeNames[] = {
    {"Int", "Scalar"},  {"Double", "Scalar"},          {"Bool", "Scalar"},
    {"Long", "Scalar"}, {"GenericList", "ScalarList"},
};

// Renames an old trace's record types in place ("Int" -> "Scalar"); torch 2.x's are left as they are.
inline void rename_record_types(std::vector<std::string>& types) {
  for (auto& t : types)
    for (const auto& r : kRecordTypeNames)
      if (t == r.old_name) {
        t = r.name;
        break;
      }
}

}  // namespace flopwise::old_trace
