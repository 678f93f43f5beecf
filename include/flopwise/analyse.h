// include/flopwise/analyse.h — the one analysis entry point: a model file in, its report out, the file read
// once for all the analyses of a command. What every command (flopwise, diff, check, run), the tests, the
// benchmarks and a future Python binding call.
// Owns: detecting a file's format, loading it (ONNX here; TorchScript through the LibTorch plugin, opened
// only for a .pt so the ONNX path never pays LibTorch's start-up), applying pins, the shape pass, costing.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "flopwise/analysed_report.h"
#include "flopwise/convention.h"
#include "flopwise/cost.h"
#include "flopwise/infer.h"
#include "flopwise/ir.h"
#include "flopwise/pins.h"

namespace flopwise {

// A file's ModelFormat (flopwise/ir.h), from its first bytes (zip magic: TorchScript, or a torch.export
// archive by its zip names, refused; gzip magic: Gzip, refused), else its extension.
ModelFormat detect_format(const std::string& path);

// Loads an .onnx or TorchScript model into the IR, shapes not yet inferred; throws InputError (unreadable,
// unsupported format, a JSON report) or UsageError with one line. `pins` gives a TorchScript module's
// inputs their shapes (the importer needs them to lower the module; ONNX files declare their own).
Model load_model(const std::string& path, const Pins& pins);

struct Analysis {
  std::shared_ptr<Model> model;  // the inferred IR (for callers that need graph facts beyond the report)
  InferResult inferred;          // the shape pass's warnings and unsupported ops (already in `report`)
  AnalysedReport report;  // the costs, a mixture-of-experts model's MoE summary; the command adds the rest
};

// A model file read and parsed once, for any number of analyses: each binds its pins on a copy of the model,
// which stays as loaded, so a command that analyses one file at several bindings (a sweep, a generation's
// steps, a budget's variants) reads and parses it once.
struct LoadedModel {
  std::shared_ptr<const Model> model;  // as the importer made it: no pins applied, shapes not inferred
  // A TorchScript importer lowers the module at its input shapes, so the --input pins (named and positional)
  // are part of the load: the ones it was loaded with. Empty for ONNX, whose inputs are pinned in the IR.
  std::vector<InputPin> inputs;
};

// Reads and parses `path` (load_model). Of `pins`, a TorchScript file's input pins are used (kept in
// LoadedModel::inputs); dims and values are bound by analyse().
LoadedModel load(const std::string& path, const Pins& pins);

// Whether `loaded` can be analysed with `pins`: an ONNX model with any; a TorchScript one with the input
// pins it was loaded with.
bool accepts(const LoadedModel& loaded, const Pins& pins);

// On a copy of the loaded model: apply_pins, infer_shapes, build_report. A TorchScript importer consumed the
// input shapes (--input) at load; dims and values (--dim, --value) apply to the IR for both formats. A --dim
// on a declared alias (past_plus_seq) or on a data-dependent size is solved with a second shape pass, and a
// --value pin that changes no shape is warned of (a pass without it). A mixture-of-experts model also gets
// its activated counts (AnalysedReport::moe). Throws UsageError where !accepts(loaded, pins), and for pins
// the model refuses.
Analysis analyse(const LoadedModel& loaded, const Pins& pins, const Convention& conv,
                 const CostOptions& opts = {});

// load, then analyse, for a file analysed once: the passes work on the loaded model itself (no copy) where
// the pins need one pass.
Analysis analyse(const std::string& path, const Pins& pins, const Convention& conv,
                 const CostOptions& opts = {});

// Called around every TorchScript archive load (LibTorch's torch::jit::load and the lowering that runs in
// it): begin = true before, false after (also when it failed). The CLI's containment (src/cli/contain.cc)
// puts the load under a memory limit and a watchdog in a child process through it. Not thread-safe: set once.
void set_torchscript_load_hook(std::function<void(bool begin)> hook);

// Where the TorchScript plugin is looked for: $FLOPWISE_TORCH_PLUGIN, then next to the running executable,
// then ../lib/flopwise/ relative to it. Empty when none exists.
std::string find_torch_plugin();

// The directory of the running executable (where the plugin and flopwise-runtime sit).
std::string exe_dir();

}  // namespace flopwise
