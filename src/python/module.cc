// src/python/module.cc — flopwise._flopwise, the compiled half of the Python package (python/flopwise/): the
// in-process analysis of an ONNX file or a torch.export program (a .pt2 file, or an archive held in memory),
// kept while its Python Report lives (the JSON report handed out a member at a time, the node table only when
// asked), its report in any static-report format, and the library's typed errors as the package's Python
// exceptions. Owns nothing else: LibTorch is never loaded here (a .pt is refused; the package analyses it
// with the CLI in a child process), nor are sweeps, diffs, checks or runs (the package runs the CLI for
// those).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "flopwise/analyse.h"
#include "flopwise/convention.h"
#include "flopwise/cost.h"
#include "flopwise/errors.h"
#include "flopwise/formats.h"
#include "flopwise/pins.h"
#include "flopwise/pt2_import.h"
#include "flopwise/writers.h"

namespace py = pybind11;
namespace fw = flopwise;

namespace {

// flopwise.detect_format's answer: the format's Python name (flopwise/ir.h's table).
const char* format_name(fw::ModelFormat f) {
  for (const fw::ModelFormatName& n : fw::model_formats())
    if (n.format == f) return n.python;
  return "unknown";
}

// An ONNX file's analysis, kept for the Python Report that reads it: the JSON report's members one at a time
// (the node table only when asked) and the report in any static-report format, written from it without
// analysing again. Immutable once made.
// Set by an atexit hook when the interpreter is finishing: the analyses still kept are then left to the
// operating system, as the CLI leaves its own (freeing a 100 k-node decoder's objects one by one took 0.13 s
// of CPU, a third of its analysis).
bool interpreter_exiting = false;

class KeptAnalysis {
 public:
  explicit KeptAnalysis(fw::Analysis a)
      : a_(std::make_unique<fw::Analysis>(std::move(a))), keys_(fw::json_report_keys(a_->report)) {}
  KeptAnalysis(const KeptAnalysis&) = delete;
  KeptAnalysis& operator=(const KeptAnalysis&) = delete;
  ~KeptAnalysis() {
    if (interpreter_exiting) a_.release();  // NOLINT: left to the OS at exit, on purpose
  }

  const std::vector<std::string>& keys() const { return keys_; }

  // One top-level member of the JSON report as JSON bytes (UTF-8).
  py::bytes json(const std::string& key) const {
    std::string out;
    {
      py::gil_scoped_release release;
      std::ostringstream os;
      fw::write_json_member(os, a_->report, key);
      out = std::move(os).str();
    }
    return py::bytes(out);
  }

  // The report in `format` (text, json, csv, markdown, html, netron), as the CLI writes it with -f FORMAT
  // --depth D --top T.
  std::string write(const std::string& format, int depth, int top) const {
    const fw::ReportWriter write = fw::report_writers().writer(fw::parse_format(format));
    py::gil_scoped_release release;
    std::ostringstream os;
    write(os, a_->report, fw::TextOptions{depth, top});
    return std::move(os).str();
  }

 private:
  std::unique_ptr<fw::Analysis> a_;
  std::vector<std::string> keys_;
};

// The analysis of an ONNX file or a torch.export archive (.pt2; no LibTorch either way) as the CLI makes it
// for `flopwise PATH --input ... --dim ... --value ... --convention C [--causal] [--program P]`, with the GIL
// released. Throws the library's typed errors (translated below); refuses a .pt with an InputError.
std::unique_ptr<KeptAnalysis> analyse(const std::string& path, const std::vector<std::string>& inputs,
                                      const std::vector<std::string>& dims,
                                      const std::vector<std::string>& values, const std::string& convention,
                                      bool causal, const std::string& program) {
  const fw::Convention& conv = fw::find_convention(convention);
  fw::Pins pins = fw::parse_pins(inputs, dims, values);
  pins.program = program;
  fw::require_regular_file(path);
  const fw::ModelFormat format = fw::detect_format(path);
  if (format != fw::ModelFormat::Onnx && format != fw::ModelFormat::ExportArchive)
    throw fw::InputError(path + ": not ONNX nor .pt2 (the Python package analyses others with the CLI)");
  fw::CostOptions copts;
  copts.causal = causal;
  py::gil_scoped_release release;  // the analysis touches no Python object
  return std::make_unique<KeptAnalysis>(fw::analyse(path, pins, conv, copts));
}

// The same for a torch.export archive held in memory (torch.export.save into a BytesIO: a live module
// exported in this process), named `label` in the report and in messages. The bytes are copied while the GIL
// is held.
std::unique_ptr<KeptAnalysis> analyse_program(const py::bytes& data, const std::string& label,
                                              const std::vector<std::string>& inputs,
                                              const std::vector<std::string>& dims,
                                              const std::vector<std::string>& values,
                                              const std::string& convention, bool causal,
                                              const std::string& program) {
  const fw::Convention& conv = fw::find_convention(convention);
  fw::Pins pins = fw::parse_pins(inputs, dims, values);
  std::string bytes = data;
  fw::CostOptions copts;
  copts.causal = causal;
  py::gil_scoped_release release;
  fw::LoadedModel loaded;
  loaded.model = std::make_shared<const fw::Model>(fw::import_pt2_bytes(bytes, label, program));
  std::string().swap(bytes);  // the archive's text is not kept beside the analysis
  return std::make_unique<KeptAnalysis>(fw::analyse(loaded, pins, conv, copts));
}

}  // namespace

PYBIND11_MODULE(_flopwise, m) {
  m.doc() = "flopwise's C++ library in-process: ONNX analysis and report writers";
  py::class_<KeptAnalysis>(m, "Analysis")
      .def("keys", &KeptAnalysis::keys, "the JSON report's top-level keys, in its order")
      .def("json", &KeptAnalysis::json, py::arg("key"),
           "one top-level member of the JSON report, as JSON bytes")
      .def("write", &KeptAnalysis::write, py::arg("format"), py::arg("depth") = -1, py::arg("top") = 3,
           "the report in a static-report format, as the CLI writes it");
  py::module_::import("atexit").attr("register")(py::cpp_function([] { interpreter_exiting = true; }));
  m.def("analyse", &analyse, py::arg("path"), py::arg("inputs"), py::arg("dims"), py::arg("values"),
        py::arg("convention"), py::arg("causal"), py::arg("program") = "");
  m.def("analyse_program", &analyse_program, py::arg("data"), py::arg("label"), py::arg("inputs"),
        py::arg("dims"), py::arg("values"), py::arg("convention"), py::arg("causal"),
        py::arg("program") = "");
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
