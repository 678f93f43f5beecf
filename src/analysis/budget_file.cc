// src/analysis/budget_file.cc — the budget file (TOML via toml++): parsing with errors that name the file,
// line, table and key.
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "flopwise/budget.h"
#include "flopwise/errors.h"
#include "flopwise/input_file.h"

namespace flopwise {

const char* const kTotalQuantities[6] = {"params", "buffers",      "macs",
                                         "flops",  "memory_bytes", "activation_bytes"};
const char* const kScopeQuantities[5] = {"params", "macs", "flops", "memory_bytes", "activation_bytes"};
const char* const kTrainQuantities[6] = {"train_backward_macs",   "train_backward_flops",
                                         "trainable_params",      "saved_activation_bytes",
                                         "optimizer_state_bytes", "memory_estimate_bytes"};
const char* const kParallelQuantities[5] = {"parallel_peak_bytes", "parallel_model_states_bytes",
                                            "parallel_activation_bytes", "parallel_params",
                                            "parallel_comm_bytes"};
const char* const kLlmQuantities[5] = {"kv_bytes_per_token", "kv_bytes_end", "generation_macs",
                                       "generation_flops", "generation_memory_bytes"};

namespace {
bool needs_generation(const std::string& q) { return q != "kv_bytes_per_token"; }
}  // namespace

std::optional<int64_t> parse_size(const std::string& text) {
  size_t i = 0, n = text.size();
  while (i < n && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  __int128 mant = 0;
  int frac_digits = 0, digits = 0;
  for (; i < n && std::isdigit(static_cast<unsigned char>(text[i])); ++i, ++digits) {
    mant = mant * 10 + (text[i] - '0');
    if (mant > (__int128(1) << 100)) return std::nullopt;
  }
  if (i < n && text[i] == '.') {
    for (++i; i < n && std::isdigit(static_cast<unsigned char>(text[i])); ++i, ++frac_digits) {
      mant = mant * 10 + (text[i] - '0');
      if (mant > (__int128(1) << 100) || frac_digits > 12) return std::nullopt;
    }
    if (frac_digits == 0) return std::nullopt;
  }
  if (digits == 0) return std::nullopt;
  while (i < n && text[i] == ' ') ++i;
  int exp = 0;  // of 1000, or of 1024 with an 'i' (KiB, GiB)
  if (i < n && text[i] != 'B') {
    switch (text[i]) {
      case 'K':
      case 'k':
        exp = 1;
        break;
      case 'M':
        exp = 2;
        break;
      case 'G':
        exp = 3;
        break;
      case 'T':
        exp = 4;
        break;
      default:
        return std::nullopt;
    }
    ++i;
  }
  const bool binary = i < n && text[i] == 'i';
  if (binary) ++i;
  if (i < n && text[i] == 'B')
    ++i;  // bytes: "24GB", "80GiB", "512B"
  else if (binary)
    return std::nullopt;
  while (i < n && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i != n) return std::nullopt;
  for (int e = 0; e < exp; ++e) mant *= binary ? 1024 : 1000;
  __int128 den = 1;
  for (int f = 0; f < frac_digits; ++f) den *= 10;
  if (mant % den != 0) return std::nullopt;  // "1.5" is not a whole count
  mant /= den;
  if (mant > INT64_MAX) return std::nullopt;
  return static_cast<int64_t>(mant);
}

std::optional<Percent> parse_percent(const std::string& text) {
  std::string t = text;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  if (t.empty() || t.back() != '%') return std::nullopt;
  t.pop_back();
  size_t i = 0;
  while (i < t.size() && std::isspace(static_cast<unsigned char>(t[i]))) ++i;
  if (i < t.size() && t[i] == '+') ++i;
  Percent p;
  p.text = text;
  int digits = 0;
  bool dot = false;
  for (; i < t.size(); ++i) {
    char c = t[i];
    if (c == '.' && !dot) {
      dot = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c)) || digits > 15) return std::nullopt;
    p.num = p.num * 10 + (c - '0');
    if (dot) p.den *= 10;
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  return p;
}

namespace {

struct Parser {
  std::string path;

  [[noreturn]] void fail(const toml::source_region& src, const std::string& where,
                         const std::string& what) const {
    std::ostringstream m;
    m << path;
    if (src.begin.line > 0) m << ":" << src.begin.line;
    m << ": " << where << ": " << what;
    throw InputError(m.str());
  }

  static std::string list(const char* const* names, size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::string(names[i]);
    return s;
  }

  const toml::table& table(const toml::node& n, const std::string& where) const {
    if (!n.is_table()) fail(n.source(), where, "expected a table");
    return *n.as_table();
  }

  std::string string(const toml::node& n, const std::string& where) const {
    if (!n.is_string()) fail(n.source(), where, "expected a string");
    return n.as_string()->get();
  }

  SizeLimit size(const toml::node& n, const std::string& where) const {
    SizeLimit l;
    if (n.is_integer()) {
      l.value = n.as_integer()->get();
      l.text = std::to_string(l.value);
    } else if (n.is_string()) {
      l.text = n.as_string()->get();
      auto v = parse_size(l.text);
      if (!v)
        fail(n.source(), where,
             "\"" + l.text + "\" is not a size (write e.g. \"4.2G\", \"26M\", \"1500K\" or 1000)");
      l.value = *v;
    } else {
      fail(n.source(), where, "expected a size such as \"4.2G\" or an integer");
    }
    if (l.value < 0) fail(n.source(), where, "a limit cannot be negative");
    l.line = static_cast<int64_t>(n.source().begin.line);
    return l;
  }

  Percent percent(const toml::node& n, const std::string& where) const {
    if (!n.is_string()) fail(n.source(), where, "expected a percentage string such as \"2%\"");
    auto p = parse_percent(n.as_string()->get());
    if (!p)
      fail(n.source(), where,
           "\"" + n.as_string()->get() + "\" is not a percentage (write e.g. \"2%\" or \"0.5%\")");
    return *p;
  }

  void limits(const toml::table& t, const std::string& where, const char* const* names, size_t count,
              std::map<std::string, SizeLimit>& out, const char* skip = nullptr, bool llm = false) const {
    for (auto&& [k, v] : t) {
      std::string key(k.str());
      if (skip && key == skip) continue;
      bool known = false;
      for (size_t i = 0; i < count; ++i) known |= key == names[i];
      for (size_t i = 0; llm && i < 5; ++i) known |= key == kLlmQuantities[i];
      for (size_t i = 0; llm && i < 6; ++i) known |= key == kTrainQuantities[i];
      for (size_t i = 0; llm && i < 5; ++i) known |= key == kParallelQuantities[i];
      if (!known)
        fail(k.source(), where,
             "unknown key '" + key + "' (expected " + list(names, count) +
                 (llm ? ", " + list(kLlmQuantities, 5) + ", " + list(kTrainQuantities, 6) + ", " +
                            list(kParallelQuantities, 5)
                      : "") +
                 ")");
      out[key] = size(v, where + " " + key);
    }
  }

  // [llm]: phase = "prefill" | "decode", or prompt = S and generate = G (both at least 1), as on the CLI.
  LlmRequest llm(const toml::table& t, const std::string& where) const {
    LlmRequest r;
    for (auto&& [k, v] : t) {
      std::string key(k.str());
      if (key == "phase") {
        std::string p = string(v, where + " phase");
        if (p != "prefill" && p != "decode")
          fail(v.source(), where + " phase", "expected \"prefill\" or \"decode\"");
        r.phase = parse_phase(p);
      } else if (key == "prompt" || key == "generate") {
        if (!v.is_integer() || v.as_integer()->get() < 1)
          fail(v.source(), where + " " + key, "expected an integer of at least 1 (tokens)");
        (key == "prompt" ? r.prompt : r.generate) = v.as_integer()->get();
      } else {
        fail(k.source(), where, "unknown key '" + key + "' (expected phase, or prompt and generate)");
      }
    }
    if (r.generation() && (r.prompt < 1 || r.generate < 1))
      fail(t.source(), where,
           "prompt and generate go together (a generation of 'generate' tokens after 'prompt')");
    if (r.generation() && r.phase != Phase::None)
      fail(t.source(), where,
           "a generation sums both phases itself: give phase, or prompt and generate, not both");
    return r;
  }

  // [train]: freeze = ["layer1", ...], checkpoint = [...], optimizer = "adamw", precision = "bf16-mixed",
  // device = "cpu", as --train's options.
  TrainOptions train(const toml::table& t, const std::string& where) const {
    TrainOptions o;
    for (auto&& [k, v] : t) {
      std::string key(k.str());
      if (key == "freeze" || key == "checkpoint") {
        if (!v.is_array()) fail(v.source(), where + " " + key, "expected an array of scope globs");
        for (const auto& e : *v.as_array()) {
          if (!e.is_string()) fail(e.source(), where + " " + key, "expected an array of scope globs");
          (key == "freeze" ? o.freeze : o.checkpoint).push_back(e.as_string()->get());
        }
      } else if (key == "optimizer") {
        try {
          o.optimizer = parse_optimizer(string(v, where + " optimizer"));
        } catch (const UsageError&) {
          fail(v.source(), where + " optimizer", "expected \"sgd\", \"momentum\", \"adam\" or \"adamw\"");
        }
      } else if (key == "precision") {
        try {
          o.precision = parse_precision(string(v, where + " precision"));
        } catch (const UsageError&) {
          fail(v.source(), where + " precision",
               "expected \"fp32\", \"bf16-mixed\", \"fp16-mixed\", \"bf16-master\" or \"fp16-master\"");
        }
      } else if (key == "device") {
        try {
          o.device = parse_device(string(v, where + " device"));
        } catch (const UsageError&) {
          fail(v.source(), where + " device", "expected \"cuda\" or \"cpu\"");
        }
      } else {
        fail(k.source(), where,
             "unknown key '" + key + "' (expected freeze, checkpoint, optimizer, precision, device)");
      }
    }
    return o;
  }

  // [parallel]: dp = 8, tp = 2, sp = "on", zero = 1, ... : the --parallel spec's keys and values.
  ParallelConfig parallel(const toml::table& t, const std::string& where) const {
    std::string spec;
    for (auto&& [k, v] : t) {
      std::string value;
      if (v.is_integer())
        value = std::to_string(v.as_integer()->get());
      else if (v.is_string())
        value = v.as_string()->get();
      else
        fail(v.source(), where + " " + std::string(k.str()), "expected an integer or a string");
      spec += (spec.empty() ? "" : ",") + std::string(k.str()) + "=" + value;
    }
    try {
      return parse_parallel(spec);
    } catch (const UsageError& e) {
      fail(t.source(), where, std::string(e.what()).substr(std::string("--parallel: ").size()));
    }
  }

  // A generation's limit (kv_bytes_end, generation_*) where the variant asks for no generation.
  void check_generation_limits(const VariantBudget& top, const VariantBudget& v,
                               const std::string& ctx) const {
    const std::optional<LlmRequest>& req = v.llm ? v.llm : top.llm;
    if (req && req->generation()) return;
    std::map<std::string, SizeLimit> limits = top.limits;
    for (const auto& [k, l] : v.limits) limits[k] = l;
    for (const auto& [k, l] : limits)
      if (std::find(std::begin(kLlmQuantities), std::end(kLlmQuantities), k) != std::end(kLlmQuantities) &&
          needs_generation(k)) {
        toml::source_region src{};
        src.begin.line = static_cast<toml::source_index>(l.line);
        fail(src, "[limits] " + k,
             "a generation's figure: give the generation it is of, [llm] prompt and generate" +
                 (ctx.empty() ? std::string() : " (variant '" + ctx + "')"));
      }
  }

  void variant(const toml::table& t, VariantBudget& v, bool top, const std::string& ctx) const {
    for (auto&& [k, node] : t) {
      std::string key(k.str());
      std::string where = ctx.empty() ? "[" + key + "]" : "[" + ctx + "." + key + "]";
      if (key == "name" && !top) {
        v.name = string(node, ctx + " name");
      } else if (key == "inputs") {
        for (auto&& [ik, iv] : table(node, where)) {
          std::string shape = string(iv, where + " " + std::string(ik.str()));
          try {
            parse_input_pin(std::string(ik.str()) + ":" + shape);
          } catch (const Error& e) {
            fail(iv.source(), where + " " + std::string(ik.str()), e.what());
          }
          v.inputs.push_back({std::string(ik.str()), shape});
        }
      } else if (key == "dims") {
        for (auto&& [dk, dv] : table(node, where)) {
          if (!dv.is_integer() || dv.as_integer()->get() < 0)
            fail(dv.source(), where + " " + std::string(dk.str()), "expected a non-negative integer");
          v.dims.push_back({std::string(dk.str()), dv.as_integer()->get()});
        }
      } else if (key == "values") {
        for (auto&& [vk, vv] : table(node, where)) {
          std::string w = where + " " + std::string(vk.str());
          if (!vv.is_array()) fail(vv.source(), w, "expected an array of integers");
          std::vector<int64_t> ints;
          for (const auto& e : *vv.as_array()) {
            if (!e.is_integer()) fail(e.source(), w, "expected an array of integers");
            ints.push_back(e.as_integer()->get());
          }
          v.values[std::string(vk.str())] = ints;
        }
      } else if (key == "limits") {
        limits(table(node, where), where, kTotalQuantities, 6, v.limits, nullptr, true);
      } else if (key == "llm") {
        v.llm = llm(table(node, where), where);
      } else if (key == "train" && top) {
        v.train = train(table(node, where), where);
      } else if (key == "parallel" && top) {
        v.parallel = parallel(table(node, where), where);
      } else if (key == "scope") {
        std::string w = ctx.empty() ? "[[scope]]" : "[[" + ctx + ".scope]]";
        if (!node.is_array_of_tables())
          fail(node.source(), w, "expected [[scope]] tables (an array of tables)");
        for (const auto& e : *node.as_array()) {
          const toml::table& st = *e.as_table();
          ScopeBudget sb;
          const toml::node* pat = st.get("pattern");
          if (!pat)
            fail(st.source(), w, "missing key 'pattern' (a glob over scope names, e.g. \"layer4.*\")");
          sb.pattern = string(*pat, w + " pattern");
          if (sb.pattern.empty()) fail(pat->source(), w + " pattern", "empty pattern");
          limits(st, w + " '" + sb.pattern + "'", kScopeQuantities, 5, sb.limits, "pattern");
          if (sb.limits.empty())
            fail(st.source(), w + " '" + sb.pattern + "'",
                 "no limit given (" + list(kScopeQuantities, 5) + ")");
          v.scopes.push_back(std::move(sb));
        }
      } else if (key == "baseline") {
        const toml::table& bt = table(node, where);
        BaselineBudget bb;
        for (auto&& [bk, bv] : bt) {
          std::string b(bk.str());
          if (b == "report") {
            bb.report = string(bv, where + " report");
            std::filesystem::path p(bb.report);
            if (p.is_relative())
              bb.report = (std::filesystem::path(path).parent_path() / p).lexically_normal().string();
          } else if (b == "max_increase") {
            if (bv.is_table()) {
              static const char* const kBase[] = {"params", "buffers", "macs", "flops", "memory_bytes"};
              for (auto&& [qk, qv] : *bv.as_table()) {
                std::string q(qk.str());
                bool known = false;
                for (const char* n : kBase) known |= q == n;
                if (!known)
                  fail(qk.source(), where + " max_increase",
                       "unknown key '" + q + "' (expected " + list(kBase, 5) + ")");
                bb.max_increase[q] = percent(qv, where + " max_increase." + q);
              }
            } else {
              bb.max_increase["*"] = percent(bv, where + " max_increase");
            }
          } else {
            fail(bk.source(), where, "unknown key '" + b + "' (expected report, max_increase)");
          }
        }
        if (bb.report.empty())
          fail(bt.source(), where, "missing key 'report' (a saved flopwise JSON report)");
        if (bb.max_increase.empty()) fail(bt.source(), where, "missing key 'max_increase' (e.g. \"2%\")");
        v.baseline = bb;
      } else if (key == "variant" && top) {
        // handled by the caller
      } else {
        std::string known = top ? "inputs, dims, values, limits, scope, baseline, llm, train, variant"
                                : "name, inputs, dims, values, limits, scope, baseline, llm";
        fail(k.source(), ctx.empty() ? "top level" : "[[" + ctx + "]]",
             "unknown key '" + key + "' (expected " + known + ")");
      }
    }
  }
};

}  // namespace

Budget parse_budget(const std::string& text, const std::string& path) {
  Parser p{path};
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    // toml++ names the line; name the key too (the text before '=' on that line) when there is one.
    std::ostringstream m;
    m << path << ":" << e.source().begin.line << ": ";
    std::istringstream lines(text);
    std::string line;
    for (size_t i = 0; i < e.source().begin.line && std::getline(lines, line);) ++i;
    size_t eq = line.find('=');
    if (eq != std::string::npos && line.find('[') != 0) {
      std::string key = line.substr(0, eq);
      key.erase(0, key.find_first_not_of(" \t"));
      key.erase(key.find_last_not_of(" \t") + 1);
      if (!key.empty()) m << "key '" << key << "': ";
    }
    m << e.description();
    throw InputError(m.str());
  }
  Budget b;
  b.path = path;
  p.variant(root, b.top, true, "");
  if (const toml::node* vs = root.get("variant")) {
    if (!vs->is_array_of_tables()) p.fail(vs->source(), "variant", "expected [[variant]] tables");
    for (const auto& e : *vs->as_array()) {
      VariantBudget v;
      p.variant(*e.as_table(), v, false, "variant");
      if (v.name.empty()) p.fail(e.source(), "[[variant]]", "missing key 'name'");
      for (const auto& o : b.variants)
        if (o.name == v.name)
          p.fail(e.source(), "[[variant]] name", "duplicate variant name '" + v.name + "'");
      b.variants.push_back(std::move(v));
    }
  }
  if (b.variants.empty()) p.check_generation_limits(b.top, b.top, "");
  for (const auto& v : b.variants) p.check_generation_limits(b.top, v, v.name);
  return b;
}

Budget read_budget_file(const std::string& path) {
  return parse_budget(read_input_file(path, " the budget file"), path);
}

}  // namespace flopwise
