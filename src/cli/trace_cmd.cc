// src/cli/trace_cmd.cc — `flopwise trace TRACE.json[.gz]`: a PyTorch profiler trace's measured time beside
// the static cost of its ops (flopwise/torch_trace.h), by module scope, phase, op and kernel; a directory of
// rank files goes to trace_census_cmd.cc, as `flopwise diff` of two traces does.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "commands.h"
#include "flopwise/errors.h"
#include "flopwise/formats.h"
#include "flopwise/roofline.h"
#include "flopwise/torch_trace.h"
#include "flopwise/trace_report.h"
#include "output.h"

namespace flopwise {

namespace {

// FLOPWISE_TRACE_TIMING=1: where a trace's time went, on stderr (bench/README.md, PyTorch traces at scale).
TraceReport open_trace(const std::string& path, const TraceOptions& to) {
  TraceTimings t;
  TraceReport r = analyse_trace_file(path, to, &t);
  if (std::getenv("FLOPWISE_TRACE_TIMING"))
    std::cerr << "read " << t.read_s << " s (" << t.read_parts << " part(s) kept), analyse " << t.analyse_s
              << " s, pricing " << t.calls << " distinct calls " << t.price_s << " s\n";
  return r;
}

// A trace's writers; the text adds its communication kernels, when it has any.
struct TraceOutput {
  const TraceReport& r;
  const std::string& path;
  TraceTextOptions text;
};
void trace_text(std::ostream& os, const TraceOutput& t) {
  write_trace_text(os, t.r, t.text);
  if (t.r.communication) append_trace_communication(os, *t.r.communication, t.text.top);
}
using TraceWriter = void (*)(std::ostream& os, const TraceOutput& t);
const FormatTable<TraceWriter>& trace_writers() {
  using F = OutputFormat;
  static const FormatTable<TraceWriter> table(
      "a trace", {
                     {F::Text, trace_text},
                     {F::Json, [](std::ostream& os, const TraceOutput& t) { write_trace_json(os, t.r); }},
                     {F::Csv, [](std::ostream& os, const TraceOutput& t) { write_trace_csv(os, t.r); }},
                     {F::Html, [](std::ostream& os, const TraceOutput& t) { write_trace_html(os, t.r); }},
                 });
  return table;
}

}  // namespace

int run_trace(int argc, char** argv) {
  heap_without_huge_pages();  // a trace is streamed (heap.cc)
  std::string path, format = "text", output, hardware, hardware_file;
  int depth = 3, top = 10;
  CLI::App app{
      "flopwise trace: a PyTorch profiler trace (torch.profiler, export_chrome_trace or "
      "tensorboard_trace_handler; "
      "record_shapes=True for FLOPs, with_stack=True or with_modules=True for module scopes) with each op's "
      "static cost: measured GPU time, FLOPs and achieved FLOP/s by module scope, phase, op and kernel",
      "flopwise trace"};
  app.add_option("trace", path,
                 "the trace: *.pt.trace.json or *.json.gz; or a directory of a distributed run's rank files")
      ->required();
  app.add_option("--format,-f", format, "text | json | csv | html (a treemap of the scopes by measured time)")
      ->check(CLI::IsMember(trace_writers().choices()));
  app.add_option("--output,-o", output, "write to FILE instead of stdout");
  app.add_option("--depth", depth, "scope tree levels in the text (default 3; -1: all)");
  app.add_option("--top", top,
                 "rows of the op, kernel and not-costed tables in the text (default 10; -1: all)");
  app.add_option("--hardware", hardware,
                 "roofline device (" + hardware_names_text() +
                     "); default: the trace's GPU (deviceProperties) when the table has it");
  app.add_option("--hardware-file", hardware_file, "roofline device from a TOML file");
  std::string capture;
  app.add_option("--capture", capture,
                 "graph capture trace(s) of a serving engine's CUDA/HIP graphs: a trace, or a folder with "
                 "execution_details.json; replayed kernels take their captured op's shapes and FLOPs "
                 "(default: capture_traces/ beside the trace; none: no join)");
  if (auto code = parse_command_line(app, argc, argv, "trace")) return *code;
  const OutputFormat f = parse_format(format);
  if (std::filesystem::is_directory(path)) return run_trace_ranks(path, f, output, top);  // rank files
  const TraceWriter write = trace_writers().writer(f);
  TraceOptions to;
  to.capture = capture;
  to.communication = f == OutputFormat::Text;  // the text's communication section, from the one read
  if (!hardware.empty() || !hardware_file.empty()) to.hardware = hardware_of(hardware, hardware_file);
  TraceReport r = open_trace(path, to);
  std::ofstream file;
  std::ostream& os = output_stream(output, file);
  write(os, TraceOutput{r, path, TraceTextOptions{depth, top}});
  os.flush();
  return kExitOk;
}

}  // namespace flopwise
