// flopwise._flopwise — the compiled half of the Python package (python/flopwise/): the in-process analysis of
// an ONNX file, its report in any static-report format, and the library's typed errors as the package's
// Python exceptions. Owns nothing else: LibTorch is never loaded here (a .pt is refused; the package analyses
// it with the CLI in a child process), nor are sweeps, diffs, checks or runs (the package runs the CLI for
// those).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <sstream>
#include <string>
#include <vector>

#include "flopwise/analyse.h"
#include "flopwise/convention.h"
#include "flopwise/cost.h"
#include "flopwise/errors.h"
#include "flopwise/formats.h"
#include "flopwise/pins.h"
#include "flopwise/writers.h"

namespace py = pybind11;
namespace fw = flopwise;

namespace {

const char* format_name(fw::ModelFormat f) {
  switch (f) {
    case fw::ModelFormat::Onnx:
      return "onnx";
    case fw::ModelFormat::TorchScript:
      return "torchscript";
    case fw::ModelFormat::ExportArchive:
      return "export_archive";
    case fw::ModelFormat::ReportJson:
      return "report_json";
    case fw::ModelFormat::Gzip:
      return "gzip";
    case fw::ModelFormat::Unknown:
      break;
  }
  return "unknown";
}

// The static report of an ONNX file in `format` (text, json, csv, markdown, html, netron), as the CLI writes
// it for `flopwise PATH --input ... --dim ... --value ... --convention C [--causal] -f FORMAT --depth D`.
// Throws the library's typed errors (translated below); refuses anything but ONNX with an InputError.
std::string report(const std::string& path, const std::vector<std::string>& inputs,
                   const std::vector<std::string>& dims, const std::vector<std::string>& values,
                   const std::string& convention, bool causal, const std::string& format, int depth,
                   int top) {
  const fw::Convention& conv = fw::find_convention(convention);
  const fw::Format& fmt = fw::find_format(format);
  fw::require_format(fw::Output::Report, format, "a static report");
  const fw::Pins pins = fw::parse_pins(inputs, dims, values);
  fw::require_regular_file(path);
  if (fw::detect_format(path) != fw::ModelFormat::Onnx)
    throw fw::InputError(path + ": not an ONNX file (the Python package analyses others with the CLI)");
  fw::CostOptions copts;
  copts.causal = causal;
  std::string out;
  {
    py::gil_scoped_release release;  // the analysis touches no Python object
    fw::Analysis a = fw::analyse(path, pins, conv, copts);
    std::ostringstream os;
    fmt.write_report(os, a.report, fw::TextOptions{depth, top});
    out = os.str();
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_flopwise, m) {
  m.doc() = "flopwise's C++ library in-process: ONNX analysis and report writers";
  m.def("report", &report, py::arg("path"), py::arg("inputs"), py::arg("dims"), py::arg("values"),
        py::arg("convention"), py::arg("causal"), py::arg("format"), py::arg("depth") = -1,
        py::arg("top") = 3);
  m.def(
      "detect_format",
      [](const std::string& path) { return std::string(format_name(fw::detect_format(path))); },
      py::arg("path"));
  // The library's errors as the package's exceptions (python/flopwise/errors.py), by their one-line message.
  py::register_exception_translator([](std::exception_ptr p) {
    if (!p) return;
    auto raise = [](const char* cls, const char* what) {
      py::object e = py::module_::import("flopwise.errors").attr(cls);
      PyErr_SetString(e.ptr(), what);
    };
    try {
      std::rethrow_exception(p);
    } catch (const fw::InputError& e) {
      raise("InputError", e.what());
    } catch (const fw::UsageError& e) {
      raise("UsageError", e.what());
    } catch (const fw::ShapeError& e) {
      raise("ShapeError", e.what());
    } catch (const fw::Error& e) {
      raise("FlopwiseError", e.what());
    }
  });
}
