// src/pipeline/load.cc — loading a model file of any supported format, and analyse(): load, pin, infer, cost.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "flopwise/analyse.h"
#include "flopwise/attention.h"
#include "flopwise/errors.h"
#include "flopwise/llm.h"
#include "flopwise/moe.h"
#include "flopwise/onnx_import.h"
#include "flopwise/pt2_import.h"

namespace flopwise {

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
// A torch.export archive (torch 2.x, .pt2): its zip names end in the central directory at the file's end,
// one of them ".../serialized_exported_program.json" (archive format 0 and later) or ".../archive_format".
// The last 64 KiB hold a program's whole directory; only a miss there reads the last MiB (the same answer).
bool tail_names_export(std::ifstream& f, std::streamoff size, std::streamoff want) {
  std::streamoff take = std::min<std::streamoff>(size, want);
  std::string tail(static_cast<size_t>(take), '\0');
  f.clear();
  f.seekg(size - take);
  f.read(tail.data(), take);
  return tail.find("serialized_exported_program") != std::string::npos ||
         tail.find("/archive_format") != std::string::npos;
}
bool is_export_archive(std::ifstream& f) {
  f.clear();
  f.seekg(0, std::ios::end);
  std::streamoff size = f.tellg();
  if (size <= 0) return false;
  return tail_names_export(f, size, 1 << 16) || (size > (1 << 16) && tail_names_export(f, size, 1 << 20));
}
}  // namespace

ModelFormat detect_format(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return ModelFormat::Unknown;  // never open a FIFO
  std::ifstream f(path, std::ios::binary);
  char m[4] = {0, 0, 0, 0};
  f.read(m, 4);
  if (f.gcount() == 4 && m[0] == 'P' && m[1] == 'K' && m[2] == 3 && m[3] == 4)
    return is_export_archive(f) ? ModelFormat::ExportArchive : ModelFormat::TorchScript;
  if (f.gcount() >= 2 && static_cast<unsigned char>(m[0]) == 0x1f && static_cast<unsigned char>(m[1]) == 0x8b)
    return ModelFormat::Gzip;
  if (ends_with(path, ".json")) return ModelFormat::ReportJson;
  if (ends_with(path, ".pt") || ends_with(path, ".pth") || ends_with(path, ".ptl"))
    return ModelFormat::TorchScript;
  if (ends_with(path, ".onnx")) return ModelFormat::Onnx;
  return ModelFormat::Unknown;
}

Model load_torchscript(const std::string& path, const Pins& pins);  // torch_loader.cc

Model load_model(const std::string& path, const Pins& pins) {
  require_regular_file(path);  // before detect_format opens it
  switch (detect_format(path)) {
    case ModelFormat::TorchScript:
      return load_torchscript(path, pins);  // dlopens the LibTorch plugin only now
    case ModelFormat::ReportJson:
      throw InputError(path + ": a JSON report, not a model (reports are read by 'flopwise diff')");
    case ModelFormat::ExportArchive:
      return import_pt2_file(path, pins.program);  // no LibTorch: the program's JSON, weights never read
    case ModelFormat::Gzip:
      throw InputError(
          path +
          ": a gzip-compressed file, not a model (flopwise reads .onnx and TorchScript .pt; "
          "decompress a model first; PyTorch profiler traces, .pt.trace.json.gz, are not read yet)");
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

namespace {

// --dim on an alias (past_plus_seq = past + seq): the binding of the one input dim it leaves unbound.
std::pair<std::string, int64_t> solve_alias(const DimAlias& a, int64_t value,
                                            const std::vector<std::pair<std::string, int64_t>>& bound) {
  Dim v = a.value.substitute(bound);
  const std::string what = "--dim " + a.name + "=" + std::to_string(value) + ": " + a.text();
  if (v.is_known()) {
    if (v.value() != value)
      throw UsageError(what + " is " + std::to_string(v.value()) + " with the other --dim values");
    return {"", 0};
  }
  std::string sym;
  int64_t coef = 0, rest = 0;
  for (const auto& [mono, c] : v.terms()) {
    if (mono.empty()) {
      rest = c;
    } else if (mono.size() == 1 && !Dim::atom(mono[0]) && sym.empty()) {
      sym = mono[0];
      coef = c;
    } else {
      throw UsageError(what +
                       " leaves more than one dim unbound (or not linearly): bind the others with --dim too");
    }
  }
  int64_t num = 0;
  if (!checked_sub(value, rest, &num) || num % coef != 0 || num / coef < 0)
    throw UsageError(what + " has no non-negative integer " + sym + " for that value");
  return {sym, num / coef};
}

using Bindings = std::vector<std::pair<std::string, int64_t>>;

// Where the passes of one analysis get their models (a pass binds pins on the IR and infers shapes in it, so
// each needs the model as loaded): a copy of a kept model each, or the model loaded for this one analysis
// itself, once.
class ModelSource {
 public:
  explicit ModelSource(const LoadedModel& kept) : kept_(&kept) {}
  // `own`, loaded from `path` with `pins` for a single pass; a pass not foreseen reads the file again.
  ModelSource(std::shared_ptr<Model> own, const std::string& path, const Pins& pins)
      : own_(std::move(own)), path_(&path), pins_(&pins) {}
  std::shared_ptr<Model> take() {
    if (kept_) return copy_model(*kept_->model);
    if (own_) return std::move(own_);
    return std::make_shared<Model>(load_model(*path_, *pins_));
  }

 private:
  const LoadedModel* kept_ = nullptr;
  std::shared_ptr<Model> own_;
  const std::string* path_ = nullptr;
  const Pins* pins_ = nullptr;
};

// A --dim outside the bounds the model records for that input dim (torch.export's range_constraints):
// refused.
void check_dim_bounds(const Model& m, const std::pair<std::string, int64_t>& d) {
  auto b = m.dim_bounds.find(d.first);
  if (b == m.dim_bounds.end()) return;
  const auto& [lo, hi] = b->second;
  if ((lo && d.second < *lo) || (hi && d.second > *hi))
    throw UsageError("--dim " + d.first + "=" + std::to_string(d.second) + ": the program allows " +
                     (lo ? std::to_string(*lo) : std::string("-inf")) + ".." +
                     (hi ? std::to_string(*hi) : std::string("inf")) + " (torch.export's range_constraints)");
}

Analysis analyse_once(ModelSource& source, const Pins& pins, Bindings* alias_dims,
                      std::set<std::string>* input_dims, const Bindings& symbol_values = {}) {
  Analysis a;
  a.model = source.take();
  Pins first = pins;
  // The TorchScript importer shaped the inputs with the pins (a scripted module records none). Its positional
  // pins are spent; the named ones are applied again, to the same shapes, so that a name that is no input
  // of the model is refused here as for ONNX, not dropped.
  if (a.model->format == ModelFormat::TorchScript)
    first.inputs.erase(std::remove_if(first.inputs.begin(), first.inputs.end(),
                                      [](const InputPin& p) { return p.name.empty(); }),
                       first.inputs.end());
  first.dims.clear();
  std::vector<std::string> warnings = apply_pins(*a.model, first);
  // --dim binds the input dims; another name may be a declared alias, known only after inference.
  const std::set<std::string> syms = input_symbols(a.model->graph);
  *input_dims = syms;
  Pins dims;
  for (auto d : pins.dims) {
    if (auto other = a.model->dim_aliases.find(d.first);
        !syms.count(d.first) && other != a.model->dim_aliases.end())
      d.first = other->second;  // torch's own name of the dim
    check_dim_bounds(*a.model, d);
    (syms.count(d.first) ? dims.dims : *alias_dims).push_back(d);
  }
  if (!dims.dims.empty()) apply_pins(*a.model, dims);
  a.inferred = infer_shapes_with_symbols(*a.model, symbol_values);
  a.inferred.warnings.insert(a.inferred.warnings.begin(), warnings.begin(), warnings.end());
  return a;
}

// A --dim on a data-dependent size (DataDepSymbol) outside the bounds its op gives it: a usage error.
void check_symbol_bounds(const std::vector<DataDepSymbol>& symbols) {
  for (const auto& s : symbols) {
    if (!s.value) continue;
    const bool below = s.lo.is_known() && *s.value < s.lo.value(),
               above = s.hi.is_known() && *s.value > s.hi.value();
    if (below || above)
      throw UsageError("--dim " + s.name + "=" + std::to_string(*s.value) + ": out of its bounds, " +
                       s.bounds_text() + " (the size " + s.op + " node '" + s.node +
                       "' computes from tensor contents)");
  }
}

// Shapes of the top graph's values by name.
std::map<std::string, std::string> shapes_by_name(const Graph& g) {
  std::map<std::string, std::string> out;
  for (const auto& v : g.values) out[v.name] = v.shape.str();
  return out;
}

// A --value pin is used when some shape downstream of its input differs without it (the model analysed
// again with the other pins only). Warns, naming each pin that changes nothing.
void warn_unused_values(ModelSource& source, const Pins& pins, const Bindings& symbol_values, Analysis& a) {
  Pins without = pins;
  without.values.clear();
  Bindings again;
  std::set<std::string> same;
  Analysis b = analyse_once(source, without, &again, &same, symbol_values);
  const Graph& g = a.model->graph;
  const auto before = shapes_by_name(b.model->graph);
  std::vector<bool> differs(g.values.size(), false);
  for (size_t i = 0; i < g.values.size(); ++i) {
    auto it = before.find(g.values[i].name);
    differs[i] = it == before.end() || it->second != g.values[i].shape.str();
  }
  for (const auto& [name, vals] : pins.values) {
    const int src = g.find(name);
    if (src < 0) continue;
    // The values downstream of the pinned one (a node with bodies reads it where they do: all its outputs).
    std::vector<bool> reach(g.values.size(), false);
    reach[static_cast<size_t>(src)] = true;
    bool used = false;
    for (const Node& n : g.nodes) {
      bool in = !n.subgraphs.empty();
      for (int i : n.inputs) in = in || (i >= 0 && reach[static_cast<size_t>(i)]);
      if (!in) continue;
      for (int o : n.outputs) {
        if (o < 0) continue;
        reach[static_cast<size_t>(o)] = true;
        used = used || differs[static_cast<size_t>(o)];
      }
    }
    if (!used)
      a.inferred.warnings.push_back(
          "--value " + name +
          ": no shape or size of the model depends on its contents "
          "(nothing that reads them needs them, or the ops that would are not counted): "
          "it changes nothing");
  }
}

// The passes of analyse(): pins and shapes, again where a --dim names an alias or a data-dependent size,
// again without the --value pins to find those that change nothing; then the report.
Analysis analyse_passes(ModelSource& source, const Pins& pins, const Convention& conv,
                        const CostOptions& opts) {
  const int64_t poly_hits = poly_limit_hits();
  std::vector<std::pair<std::string, int64_t>> others;
  std::set<std::string> syms;
  Analysis a = analyse_once(source, pins, &others, &syms);
  Bindings symbol_values;  // --dim on data-dependent sizes
  Pins solved = pins;
  if (!others.empty()) {
    solved.dims.clear();
    for (const auto& d : pins.dims)
      if (std::find(others.begin(), others.end(), d) == others.end()) solved.dims.push_back(d);
    std::vector<std::string> unknown_names;
    bool any = false;
    for (const auto& [name, value] : others) {
      const DimAlias* alias = nullptr;
      for (const auto& x : a.inferred.aliases)
        if (x.name == name) alias = &x;
      const std::string& sym = name;  // a structured binding cannot be captured before C++20 (clang)
      const bool data_dependent = std::any_of(a.inferred.symbols.begin(), a.inferred.symbols.end(),
                                              [&sym](const DataDepSymbol& s) { return s.name == sym; });
      if (data_dependent) {
        symbol_values.emplace_back(name, value);
        continue;
      }
      if (!alias) {
        unknown_names.push_back(name);
        continue;
      }
      auto b = solve_alias(*alias, value, solved.dims);
      if (!b.first.empty()) {
        solved.dims.push_back(b);
        any = true;
      }
    }
    std::string dims_text;
    for (const auto& s : syms) dims_text += (dims_text.empty() ? "" : ", ") + s;
    for (const auto& s : a.inferred.symbols) dims_text += (dims_text.empty() ? "" : ", ") + s.name;
    if (any || !symbol_values.empty()) {
      std::vector<std::pair<std::string, int64_t>> again;
      std::set<std::string> same;
      a = analyse_once(source, solved, &again, &same, symbol_values);
      check_symbol_bounds(a.inferred.symbols);
    }
    for (const auto& n : unknown_names)
      a.inferred.warnings.insert(a.inferred.warnings.begin(),
                                 "--dim " + n + ": the model has no dim of that name (its dims: " +
                                     (dims_text.empty() ? "none" : dims_text) + ")");
  }
  if (!pins.values.empty()) warn_unused_values(source, solved, symbol_values, a);
  a.report = AnalysedReport(build_report(*a.model, a.inferred, conv, opts));
  a.report.moe = find_moe(*a.model, a.report);
  if (poly_limit_hits() != poly_hits)
    a.report.warnings.push_back("a symbolic dim or cost grew past " +
                                std::to_string(limits().max_poly_terms) +
                                " terms (or 64 symbols in one term): left unknown (the bound is "
                                "FLOPWISE_MAX_POLY_TERMS)");
  return a;
}

bool same_input_pins(const std::vector<InputPin>& a, const std::vector<InputPin>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const InputPin& x, const InputPin& y) {
    return x.name == y.name && x.shape == y.shape && x.dtype == y.dtype;
  });
}

// Whether analyse() may need more than one pass over the model: a --value pin (a pass without it), or a
// --dim on a name that no input's shape may hold (an alias or a data-dependent size, solved in a second
// pass).
bool may_pass_again(const Model& loaded, const Pins& pins) {
  if (!pins.values.empty()) return true;
  std::set<std::string> names = input_symbols(loaded.graph);
  for (const auto& p : pins.inputs)
    if (p.shape)
      for (const Dim& d : p.shape->dims)
        for (auto& s : d.symbols()) names.insert(std::move(s));
  return std::any_of(pins.dims.begin(), pins.dims.end(),
                     [&](const auto& d) { return !names.count(d.first); });
}

}  // namespace

LoadedModel load(const std::string& path, const Pins& pins) {
  LoadedModel m;
  m.model = std::make_shared<const Model>(load_model(path, pins));
  if (m.model->format == ModelFormat::TorchScript) m.inputs = pins.inputs;
  return m;
}

bool accepts(const LoadedModel& loaded, const Pins& pins) {
  return loaded.model->format != ModelFormat::TorchScript || same_input_pins(loaded.inputs, pins.inputs);
}

Analysis analyse(const LoadedModel& loaded, const Pins& pins, const Convention& conv,
                 const CostOptions& opts) {
  if (!accepts(loaded, pins))
    throw UsageError(loaded.model->path +
                     ": a TorchScript model is lowered with its --input shapes: load it again "
                     "with these --input pins to analyse it with them");
  ModelSource source(loaded);
  return analyse_passes(source, pins, conv, opts);
}

Analysis analyse(const std::string& path, const Pins& pins, const Convention& conv, const CostOptions& opts) {
  auto model = std::make_shared<Model>(load_model(path, pins));
  if (may_pass_again(*model, pins)) {  // every pass on a copy of the model as loaded
    LoadedModel loaded;
    if (model->format == ModelFormat::TorchScript) loaded.inputs = pins.inputs;
    loaded.model = std::move(model);
    return analyse(loaded, pins, conv, opts);
  }
  ModelSource source(std::move(model), path, pins);  // one pass, on the loaded model itself
  return analyse_passes(source, pins, conv, opts);
}

}  // namespace flopwise
