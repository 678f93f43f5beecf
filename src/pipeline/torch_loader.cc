// src/pipeline/torch_loader.cc — TorchScript through the plugin libflopwise_torch.so, loaded (dlopen) only
// when a .pt is opened.

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "../torch/torch_plugin.h"
#include "flopwise/analyse.h"
#include "flopwise/errors.h"

namespace flopwise {

namespace {
bool exists(const std::string& p) { return std::ifstream(p).good(); }
std::function<void(bool)>& load_hook() {
  static std::function<void(bool)> hook;
  return hook;
}
}  // namespace

void set_torchscript_load_hook(std::function<void(bool begin)> hook) { load_hook() = std::move(hook); }

std::string find_torch_plugin() {
  if (const char* env = std::getenv("FLOPWISE_TORCH_PLUGIN"); env && *env) return exists(env) ? env : "";
  std::string dir = exe_dir();
  for (const std::string& p : {dir + "/libflopwise_torch.so", dir + "/../lib/flopwise/libflopwise_torch.so"})
    if (exists(p)) return p;
  return "";
}

// Imports a .pt; throws InputError (no plugin: names the package to install; unreadable or not
// TorchScript) or UsageError (an input without shape) with one line.
Model load_torchscript(const std::string& path, const Pins& pins) {
  std::string plugin = find_torch_plugin();
  if (plugin.empty())
    throw InputError(path +
                     ": TorchScript support is not built (plugin libflopwise_torch.so not found); install "
                     "LibTorch (Debian package libtorch-dev) and rebuild flopwise");
  void* h = dlopen(plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h)
    throw InputError(path + ": cannot load the TorchScript plugin " + plugin + " (" + dlerror() +
                     "); is LibTorch (Debian package libtorch-dev) installed?");
  auto fn = reinterpret_cast<FlopwiseTorchImportFn>(dlsym(h, "flopwise_torch_import"));
  if (!fn) throw InputError(plugin + ": not a flopwise TorchScript plugin (no flopwise_torch_import)");
  Model m;
  char err[2048] = {0};
  if (load_hook()) load_hook()(true);
  int rc = fn(path.c_str(), &pins, &m, err, sizeof(err));
  if (load_hook()) load_hook()(false);
  if (rc == kTorchUsageError) throw UsageError(err);
  if (rc != kTorchOk) throw InputError(err);
  return m;  // the plugin stays loaded: nothing to unload before exit
}

}  // namespace flopwise
