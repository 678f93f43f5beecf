// src/ir/version.cc — flopwise's version (flopwise/json_text.h), from project() in CMakeLists.txt.
#include "flopwise/json_text.h"

namespace flopwise {

const char* flopwise_version() { return FLOPWISE_VERSION; }

}  // namespace flopwise
