// Loading a model file of any supported format, and analyse(): load, pin, infer, cost.
#include "flopwise/analyse.h"

#include <unistd.h>

#include <fstream>

#include "flopwise/errors.h"
#include "flopwise/onnx_import.h"

namespace flopwise {

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

ModelFormat detect_format(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char m[4] = {0, 0, 0, 0};
  f.read(m, 4);
  if (f.gcount() == 4 && m[0] == 'P' && m[1] == 'K' && m[2] == 3 && m[3] == 4)
    return ModelFormat::TorchScript;
  if (ends_with(path, ".json")) return ModelFormat::ReportJson;
  if (ends_with(path, ".pt") || ends_with(path, ".pth") || ends_with(path, ".ptl"))
    return ModelFormat::TorchScript;
  if (ends_with(path, ".onnx")) return ModelFormat::Onnx;
  return ModelFormat::Unknown;
}

Model load_torchscript(const std::string& path, const Pins& pins);  // torch_loader.cc

Model load_model(const std::string& path, const Pins& pins) {
  switch (detect_format(path)) {
    case ModelFormat::TorchScript:
      return load_torchscript(path, pins);  // dlopens the LibTorch plugin only now
    case ModelFormat::ReportJson:
      throw InputError(path + ": a JSON report, not a model (reports are read by 'flopwise diff')");
    default:
      return import_onnx_file(path);  // ONNX is the default: its errors say when a file is not ONNX
  }
}

std::string exe_dir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  std::string s(buf, static_cast<size_t>(n));
  auto slash = s.rfind('/');
  return slash == std::string::npos ? "." : s.substr(0, slash);
}

Analysis analyse(const std::string& path, const Pins& pins, const Convention& conv) {
  Analysis a;
  a.model = std::make_shared<Model>(load_model(path, pins));
  Pins rest = pins;
  if (a.model->format == "torchscript") rest.inputs.clear();  // the importer shaped the inputs with them
  a.inferred = infer_shapes(*a.model, rest);
  a.report = build_report(*a.model, a.inferred, conv);
  return a;
}

}  // namespace flopwise
