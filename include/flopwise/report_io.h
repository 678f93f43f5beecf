// include/flopwise/report_io.h — reads a saved JSON report (schema "flopwise.report/1") back into an
// AnalysedReport (its costs and its LLM section).
// Owns: the reader only (the writer is src/writers/json_report.cc, in the same folder). Used by `flopwise
// diff` and by `flopwise check` baselines. Never touches models, protobuf or LibTorch.
#pragma once

#include <string>

#include "flopwise/analysed_report.h"

namespace flopwise {

// Rebuilds totals, the scope tree (with each scope's direct op types), op_types, nodes (with their
// output shapes), inputs, outputs, unsupported ops, warnings and the LLM section (its figures, not its
// formulas' text). Output dtypes of nodes are not in the format. Throws InputError naming the file and the
// key when the text is not such a report.
AnalysedReport parse_report_json(const std::string& text, const std::string& origin);
AnalysedReport read_report_json(const std::string& path);

// True when the file starts (after whitespace) with '{': a saved report rather than a model.
bool looks_like_json_report(const std::string& path);

}  // namespace flopwise
