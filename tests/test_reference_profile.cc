// tests/test_reference_profile.cc — the reference profile, figure for figure: DeepSpeed's flops profiler
// printing BertForPreTrainingPreLN at batch 80, sequence 128
// (tests/artefacts/deepspeed_flops_profiler_output.txt, a copy of ../shared/reference's first profile),
// reproduced by `flopwise --convention deepspeed-legacy` on a look-alike written from the public model's
// architecture (models/reference_profile.py: same module names and classes, random weights, traced at batch
// 2, sequence 8, analysed at 80x128 through --input). The masked-LM decoder runs on the positions
// torch.nonzero picks: its size is the data-dependent symbol flopwise makes, bound to the sample's 1159
// (36.23 GMACs / (1024 x 30528)).
//
// Where the numbers come from: the 62 figures from the reference file itself; everything else from eager
// PyTorch on the same module in the generator (each module's sum(p.numel() for p in m.parameters()), its MACs
// as the early profiler's patched F.linear / F.softmax counted them while the module ran, named_modules()
// order).
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string skip_reason() {
  std::string bin = FLOPWISE_BINARY;
  if (!std::ifstream(bin.substr(0, bin.rfind('/')) + "/libflopwise_torch.so").good())
    return "TorchScript plugin not built";
  if (fwtest::reference_profile_dir().empty())
    return "cannot generate models/reference_profile.py's modules (python3-torch?): see "
           "reference_profile.log";
  return "";
}

// The data-dependent symbol the report made for the masked positions (the one nonzero makes).
std::string nonzero_symbol(const json& report) {
  if (!report.contains("symbols")) return "";
  for (const auto& s : report["symbols"])
    if (s.value("op", "").find("onZero") != std::string::npos ||
        s.value("op", "").find("nonzero") != std::string::npos)
      return s["name"].get<std::string>();
  return "";
}

// What a DeepSpeed-layout text report says, figure by figure: "summary/<key>", "depth
// <d>/<params|MACs>/<class>", and "tree/<module path>/<params|params%|MACs|MACs%>" (paths of module labels
// from the root, "" for the root).
std::map<std::string, std::string> figures(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string ln;
  enum { None, Summary, Aggregated, Detailed } part = None;
  std::string depth;
  std::vector<std::string> path;  // labels of the open modules
  static const std::regex summary_re(
      R"(^(params per gpu|params of model = params per GPU \* mp_size|fwd MACs per GPU|fwd flops per GPU|fwd flops of model = fwd flops per GPU \* mp_size):\s+(.*?)\s*$)");
  static const std::regex depth_re(R"(^depth (\d+):)");
  static const std::regex agg_re(R"(^\s+(params|MACs)\s+- \{(.*)\}\s*$)");
  static const std::regex entry_re(R"('([^']+)': '([^']+)')");
  static const std::regex module_re(R"(^(\s*)(?:\(([^)]+)\): )?([A-Za-z_][A-Za-z0-9_]*)\((.*)$)");
  static const std::regex figs_re(
      R"(^\s*([0-9.]+(?: [A-Za-z]+)?), ([0-9.]+%) Params, ([0-9.]+ [A-Za-z]+), ([0-9.]+%) MACs)");
  bool want_figures = false;
  std::string pending;
  auto put = [&](const std::smatch& f) {
    std::string p;
    for (const auto& l : path) p += (p.empty() ? "" : ".") + l;
    out["tree/" + p + "/params"] = f[1];
    out["tree/" + p + "/params%"] = f[2];
    out["tree/" + p + "/MACs"] = f[3];
    out["tree/" + p + "/MACs%"] = f[4];
  };
  while (std::getline(in, ln)) {
    if (ln.find("Profile Summary") != std::string::npos) part = Summary;
    if (ln.find("Aggregated Profile") != std::string::npos) part = Aggregated;
    if (ln.find("Detailed Profile") != std::string::npos) part = Detailed;
    if (ln.rfind("----------------------------------------------------------------", 0) == 0 &&
        part == Detailed && !path.empty())
      break;  // the end of the first profile
    std::smatch m;
    if (part == Summary && std::regex_search(ln, m, summary_re)) out["summary/" + m[1].str()] = m[2];
    if (part == Aggregated && std::regex_search(ln, m, depth_re)) depth = m[1];
    if (part == Aggregated && std::regex_search(ln, m, agg_re)) {
      std::string body = m[2], what = m[1];
      for (std::sregex_iterator it(body.begin(), body.end(), entry_re), e; it != e; ++it)
        out["depth " + depth + "/" + what + "/" + (*it)[1].str()] = (*it)[2];
    }
    if (part != Detailed) continue;
    if (want_figures) {
      want_figures = false;
      if (std::regex_search(ln, m, figs_re)) put(m);
    }
    if (std::regex_search(ln, m, module_re)) {
      const size_t level = m[1].length() / 2;
      path.resize(level > 0 ? level - 1 : 0);
      if (level > 0) path.push_back(m[2]);
      std::string rest = m[4];
      if (rest.empty()) {
        want_figures = true;  // a module with children: its figures on the next line
      } else {
        std::smatch f;
        if (std::regex_search(rest, f, figs_re)) put(f);
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("reference profile: the small look-alike, module by module, against eager PyTorch") {
  if (std::string why = skip_reason(); !why.empty()) {
    MESSAGE("skipped: " << why);
    return;
  }
  const std::string dir = fwtest::reference_profile_dir();
  json expect = json::parse(fwtest::slurp(dir + "/bert_preln_small.expect.json"));
  fs::path scratch = fwtest::scratch_dir("refprofile");
  const std::string model = dir + "/bert_preln_small.trace.pt";
  auto first = fwtest::run_cli(model + " --convention deepspeed-legacy --format json", scratch);
  REQUIRE_MESSAGE(first.code == 0, first.err);
  json unbound = json::parse(first.out);
  const std::string sym = nonzero_symbol(unbound);
  REQUIRE_MESSAGE(!sym.empty(),
                  "no data-dependent symbol for the masked positions: " << first.out.substr(0, 400));
  // Unbound, the total is a formula in it: the decoder's 64 x 1000 MACs (hidden x vocab of the small config)
  // per masked position, plus the rest of eager's total (which ran with `masked_positions` of them).
  const int64_t per_position = 64 * 1000, k = expect["masked_positions"].get<int64_t>();
  CHECK(unbound["totals"]["macs"] ==
        std::to_string(per_position) + "*" + sym + " + " +
            std::to_string(expect["scopes"][""]["legacy_macs"].get<int64_t>() - k * per_position));
  auto bound = fwtest::run_cli(model + " --convention deepspeed-legacy --format json --dim " + sym + "=" +
                                   std::to_string(expect["masked_positions"].get<int64_t>()),
                               scratch);
  REQUIRE_MESSAGE(bound.code == 0, bound.err);
  json rep = json::parse(bound.out);
  CHECK(rep["totals"]["complete"] == true);
  CHECK(rep["totals"]["params"] == expect["params"]);
  // Every scope: params as the module holds them, MACs as the profiler counted them; children in declaration
  // order.
  std::vector<std::string> seen;
  std::vector<const json*> stack{&rep["scopes"]};
  size_t compared = 0;
  while (!stack.empty()) {
    const json& s = *stack.back();
    stack.pop_back();
    const std::string name = s["name"];
    seen.push_back(name);
    REQUIRE_MESSAGE(expect["scopes"].contains(name), name);
    const json& e = expect["scopes"][name];
    INFO("scope '" << name << "'");
    CHECK(s["class"] == e["class"]);
    CHECK(s["params_held"] == e["params"]);
    CHECK(s["macs"] == e["legacy_macs"]);
    CHECK(s["complete"] == true);
    ++compared;
    for (auto it = s["children"].rbegin(); it != s["children"].rend(); ++it) stack.push_back(&*it);
  }
  std::vector<std::string> declared;
  for (const auto& n : expect["declaration_order"])
    if (std::find(seen.begin(), seen.end(), n.get<std::string>()) != seen.end()) declared.push_back(n);
  CHECK(seen == declared);
  MESSAGE(compared << " scopes compared with eager PyTorch");
  CHECK(compared >= 30);

  // Today's profiler (the deepspeed preset) patches F.gelu, not torch.erf: the scripted bias_gelu's erf is 0
  // in a .pt (the Erf rule for torch.onnx's decomposition of F.gelu is an ONNX one).
  auto ds = fwtest::run_cli(model + " --convention deepspeed --format json --dim " + sym + "=5", scratch);
  REQUIRE(ds.code == 0);
  size_t erfs = 0;
  const json ds_report = json::parse(ds.out);
  for (const auto& n : ds_report["nodes"])
    if (n["op"] == "Erf") {
      CHECK(n["flops"] == 0);
      ++erfs;
    }
  CHECK(erfs == 3);  // two layers' intermediate, the prediction head's transform
}

TEST_CASE("reference profile: BertForPreTrainingPreLN at 80x128, all figures of DeepSpeed's sample") {
  if (std::string why = skip_reason(); !why.empty()) {
    MESSAGE("skipped: " << why);
    return;
  }
  const std::string dir = fwtest::reference_profile_dir();
  fs::path scratch = fwtest::scratch_dir("refprofile_full");
  const std::string model = dir + "/bert_preln.trace.pt";
  const std::string pins =
      " --input input_ids:80x128:int64 --input token_type_ids:80x128:int64"
      " --input attention_mask:80x128:int64 --input masked_lm_labels:80x128:int64"
      " --input next_sentence_label:80:int64";
  auto js = fwtest::run_cli(model + pins + " --convention deepspeed-legacy --format json", scratch);
  REQUIRE_MESSAGE(js.code == 0, js.err);
  const std::string sym = nonzero_symbol(json::parse(js.out));
  REQUIRE(!sym.empty());
  auto text =
      fwtest::run_cli(model + pins + " --convention deepspeed-legacy --dim " + sym + "=1159", scratch);
  REQUIRE_MESSAGE(text.code == 0, text.err);
  auto want = figures(
      fwtest::slurp(fs::path(FLOPWISE_SOURCE_DIR) / "tests/artefacts/deepspeed_flops_profiler_output.txt"));
  auto got = figures(text.out);
  size_t n = 0;
  for (const auto& kv : want) {
    const std::string& k = kv.first;  // not a structured binding: INFO captures it (clang 14, C++17)
    const std::string& v = kv.second;
    if (k.size() > 1 && k.back() == '%') continue;  // percentages follow from the figures; compared below
    INFO(k);
    CHECK_MESSAGE(got.count(k), "missing in flopwise's report: " << k << "\n" << text.out.substr(0, 3000));
    if (got.count(k)) CHECK(got[k] == v);
    ++n;
  }
  size_t pct = 0;
  for (const auto& kv : want)
    if (const std::string& k = kv.first, &v = kv.second; k.size() > 1 && k.back() == '%') {
      INFO(k);
      if (got.count(k)) {
        CHECK(got[k] == v);
        ++pct;
      }
    }
  MESSAGE(n << " figures of the reference profile compared (and " << pct << " percentages)");
  CHECK(n >= 62);
}
