// flopwise/analyse.h — the one analysis entry point: a model file in, its report out. What every command
// (flopwise, diff, check, run), the tests, the benchmarks and a future Python binding call.
// Owns: detecting a file's format, loading it (ONNX here; TorchScript through the LibTorch plugin, opened
// only for a .pt so the ONNX path never pays LibTorch's start-up), applying pins, the shape pass, costing.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "flopwise/convention.h"
#include "flopwise/cost.h"
#include "flopwise/infer.h"
#include "flopwise/ir.h"
#include "flopwise/pins.h"

namespace flopwise {

enum class ModelFormat { Onnx, TorchScript, ExportArchive, ReportJson, Gzip, Unknown };

// From the file's first bytes (zip magic: TorchScript, or a torch.export archive by its zip names, refused;
// gzip magic: Gzip, refused), else its extension.
ModelFormat detect_format(const std::string& path);

// Loads an .onnx or TorchScript model into the IR, shapes not yet inferred; throws InputError (unreadable,
// unsupported format, a JSON report) or UsageError with one line. `pins` gives a TorchScript module's
// inputs their shapes (the importer needs them to lower the module; ONNX files declare their own).
Model load_model(const std::string& path, const Pins& pins);

struct Analysis {
  std::shared_ptr<Model> model;  // the inferred IR (for callers that need graph facts beyond the report)
  InferResult inferred;          // the shape pass's warnings and unsupported ops (already in `report`)
  Report report;
};

// load_model, apply_pins, infer_shapes, build_report. Pins are applied once: a TorchScript importer
// consumes the input shapes (--input); dims and values (--dim, --value) apply to the IR for both formats.
// A mixture-of-experts model also gets its activated counts (Report::moe).
Analysis analyse(const std::string& path, const Pins& pins, const Convention& conv, const CostOptions& opts = {});

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
