// src/torch/plugin.cc — the C entry point of libflopwise_torch.so (see torch_plugin.h): load, prepare,
// lower, and turn every error into a status and one line.
#include <torch/version.h>

#include <cstdio>

#include "flopwise/errors.h"
#include "lowerer.h"
#include "torch_plugin.h"
#include "torch_types.h"

namespace {
void write_err(const std::string& msg, char* err, size_t errlen) {
  if (!err || errlen == 0) return;
  std::snprintf(err, errlen, "%s", msg.c_str());
}
}  // namespace

extern "C" __attribute__((visibility("default"))) int flopwise_torch_import(
    const char* path, const flopwise::InferOptions* pins, flopwise::Model* out, char* err, size_t errlen) {
  using namespace flopwise;
  try {
    InferOptions none;
    Prepared p = prepare(path, pins ? *pins : none);
    Model m;
    m.path = path;
    m.format = ModelFormat::TorchScript;
    m.producer = std::string("pytorch ") + std::to_string(TORCH_VERSION_MAJOR) + "." +
                 std::to_string(TORCH_VERSION_MINOR);
    m.opsets[""] = kTorchOpset;
    m.opsets["flopwise"] = 1;
    m.graph.name = clean_class(p.module.type()->name()->qualifiedName());
    m.graph.module_class = m.graph.name;
    m.warnings = p.warnings;
    Lowerer(p, m).run();
    m.modules = module_tree(p.module);
    *out = std::move(m);
    return kTorchOk;
  } catch (const UsageError& e) {
    write_err(e.what(), err, errlen);
    return kTorchUsageError;
  } catch (const Error& e) {
    write_err(e.what(), err, errlen);
    return kTorchInputError;
  } catch (const c10::Error& e) {
    write_err(std::string(path) + ": LibTorch: " + first_line(e.what_without_backtrace()), err, errlen);
    return kTorchInputError;
  } catch (const std::exception& e) {
    write_err(std::string(path) + ": " + e.what(), err, errlen);
    return kTorchInputError;
  }
}
