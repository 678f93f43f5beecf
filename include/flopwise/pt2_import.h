// include/flopwise/pt2_import.h — torch.export programs (.pt2, torch.export.save) into the IR without
// LibTorch: the archive's program JSON read (src/pt2/), its aten calls lowered through the neutral aten table
// (flopwise/aten_lower.h), symbolic sizes named after the input dims they stand for. Weights never read.
#pragma once

#include <string>
#include <string_view>

#include "flopwise/ir.h"

namespace flopwise {

// `program`: the program's name in an archive holding several ("" = the only one). Throws InputError (one
// line) for what is not an export program, breaks the schema or is an AOTInductor package.
Model import_pt2_file(const std::string& path, const std::string& program = "");
// The same from a program's bytes: a whole .pt2 archive, or one program's JSON (`label` names it in
// messages).
Model import_pt2_bytes(std::string_view bytes, const std::string& label, const std::string& program = "");

}  // namespace flopwise
