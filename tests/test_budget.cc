// tests/test_budget.cc — `flopwise check MODEL --budget FILE`: a table of budget files against
// models/resnet18.onnx, each with the expected exit code and JUnit content. The figures limits are set
// against come from torch (models/resnet18.expect.json: hook-derived MACs, parameters adjusted for the
// exporter's BatchNorm folds) or are written out by hand, never from flopwise's own output.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"
#include "flopwise/budget.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

fs::path budget_tmp() { return fwtest::scratch_dir("budget"); }

using fwtest::slurp;

struct Result {
  int code = -1;
  std::string out, err, junit;
};

std::string resnet18() { return (fs::path(FLOPWISE_SOURCE_DIR) / "models" / "resnet18.onnx").string(); }

Result check(const std::string& toml, const std::string& extra = "") {
  fs::path b = budget_tmp() / "budget.toml", out = budget_tmp() / "out.txt", err = budget_tmp() / "err.txt",
           junit = budget_tmp() / "junit.xml";
  std::ofstream(b) << toml;
  fs::remove(junit);
  fwtest::CliRun run = fwtest::run_cli("check \"" + resnet18() + "\" --budget \"" + b.string() +
                                           "\" --junit \"" + junit.string() + "\" " + extra,
                                       budget_tmp());
  return Result{run.code, run.out, run.err, slurp(junit)};
}

int occurrences(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

json expect() {
  std::ifstream f(fs::path(FLOPWISE_SOURCE_DIR) / "models" / "resnet18.expect.json");
  return json::parse(f);
}

// The model's current totals (for crafting baselines only: the baseline is this report with its
// totals scaled).
json current_report() {
  fs::path out = budget_tmp() / "r18.json";
  std::string cmd = std::string("\"") + FLOPWISE_BINARY + "\" \"" + resnet18() +
                    "\" --dim batch=1 --format json -o " + out.string();
  REQUIRE(std::system(cmd.c_str()) == 0);
  return json::parse(slurp(out));
}

struct Case {
  std::string label;
  std::string toml;
  int code;
  int testcases;                     // JUnit <testcase> elements
  std::vector<std::string> failing;  // JUnit names of the failing cases
  std::vector<std::string> passing;
};

void run_cases(const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    CAPTURE(c.label);
    Result r = check(c.toml);
    CAPTURE(r.out);
    CAPTURE(r.err);
    CHECK(r.code == c.code);
    CHECK(occurrences(r.junit, "<testcase ") == c.testcases);
    CHECK(occurrences(r.junit, "<failure ") == static_cast<int>(c.failing.size()));
    CHECK(r.junit.find("failures=\"" + std::to_string(c.failing.size()) + "\"") != std::string::npos);
    for (const auto& f : c.failing) {
      CAPTURE(f);
      size_t at = r.junit.find("name=\"" + f + "\">");
      CHECK(at != std::string::npos);  // a failing case has a body ...
      if (at != std::string::npos) CHECK(r.junit.find("<failure ", at) < r.junit.find("</testcase>", at));
    }
    for (const auto& p : c.passing) {
      CAPTURE(p);
      CHECK(r.junit.find("name=\"" + p + "\"/>") != std::string::npos);  // ... a passing one none
    }
    CHECK(r.out.find(c.failing.empty() ? "limits hold" : "limits fail") != std::string::npos);
  }
}

}  // namespace

TEST_CASE("budget: sizes, percents and scope globs") {
  using flopwise::parse_size;
  CHECK(parse_size("4.2G") == int64_t{4200000000});
  CHECK(parse_size("26M") == int64_t{26000000});
  CHECK(parse_size("1K") == int64_t{1000});
  CHECK(parse_size("1.5k") == int64_t{1500});
  CHECK(parse_size("2T") == int64_t{2000000000000});
  CHECK(parse_size("1814073344") == int64_t{1814073344});
  CHECK(parse_size("1.814073344G") == int64_t{1814073344});
  CHECK_FALSE(parse_size("1.5"));  // not a whole count
  CHECK_FALSE(parse_size("4.2X"));
  CHECK_FALSE(parse_size("G"));
  CHECK_FALSE(parse_size("-1M"));
  CHECK_FALSE(parse_size("99999999999T"));            // past int64
  CHECK(parse_size("24GB") == int64_t{24000000000});  // bytes, as --fit and memory limits write them
  CHECK(parse_size("24 GB") == int64_t{24000000000});
  CHECK(parse_size("80GiB") == int64_t{80} * 1024 * 1024 * 1024);
  CHECK(parse_size("1.5KiB") == int64_t{1536});
  CHECK(parse_size("512B") == int64_t{512});
  CHECK_FALSE(parse_size("1Gi"));  // binary only with B
  CHECK_FALSE(parse_size("GB"));
  auto p = flopwise::parse_percent("2.5%");
  REQUIRE(p);
  CHECK(p->num == 25);
  CHECK(p->den == 10);
  CHECK_FALSE(flopwise::parse_percent("2"));
  CHECK_FALSE(flopwise::parse_percent("x%"));

  using flopwise::scope_glob_match;
  CHECK(scope_glob_match("layer4.*", "layer4.0"));
  CHECK(scope_glob_match("layer4.*", "layer4.1"));
  CHECK_FALSE(scope_glob_match("layer4.*", "layer4.0.conv1"));  // '*' stays within one segment
  CHECK_FALSE(scope_glob_match("layer4.*", "layer4"));
  CHECK(scope_glob_match("layer4.**", "layer4.0.conv1"));
  CHECK(scope_glob_match("encoder.layer.*", "encoder.layer.11"));
  CHECK(scope_glob_match("layer?.0", "layer3.0"));
  CHECK(scope_glob_match("*.0.conv1", "layer2.0.conv1"));
  CHECK(scope_glob_match("fc", "fc"));
  CHECK_FALSE(scope_glob_match("fc", "fc2"));
}

TEST_CASE("budget: total limits just above, exactly at and just below torch's figures") {
  json e = expect();
  // MACs by forward hooks on every Conv2d/Linear of torchvision's resnet18 at batch 1.
  int64_t macs = e.at("macs").get<int64_t>();
  REQUIRE(macs == 1814073344);
  // torch's parameter count less the folded BatchNorm gamma/beta plus the conv biases the folds add.
  int64_t params = e.at("expected_onnx_params").get<int64_t>();
  REQUIRE(params == 11684712);
  auto limits = [](const std::string& body) {
    return "[inputs]\ninput = \"1x3x224x224\"\n[limits]\n" + body;
  };
  auto macs_name = [](const std::string& lim) { return "total macs &lt;= " + lim; };
  std::string m = std::to_string(macs), p = std::to_string(params);
  run_cases({
      {"macs just above",
       limits("macs = " + std::to_string(macs + 1) + "\n"),
       0,
       1,
       {},
       {macs_name(std::to_string(macs + 1))}},
      {"macs exactly at", limits("macs = " + m + "\n"), 0, 1, {}, {macs_name(m)}},
      {"macs exactly at, with a suffix",
       limits("macs = \"1.814073344G\"\n"),
       0,
       1,
       {},
       {macs_name("1.814073344G")}},
      {"macs just below",
       limits("macs = " + std::to_string(macs - 1) + "\n"),
       1,
       1,
       {macs_name(std::to_string(macs - 1))},
       {}},
      {"macs well below, suffixed", limits("macs = \"1.8G\"\n"), 1, 1, {macs_name("1.8G")}, {}},
      {"params just above",
       limits("params = " + std::to_string(params + 1) + "\n"),
       0,
       1,
       {},
       {"total params &lt;= " + std::to_string(params + 1)}},
      {"params exactly at", limits("params = " + p + "\n"), 0, 1, {}, {"total params &lt;= " + p}},
      {"params just below",
       limits("params = " + std::to_string(params - 1) + "\n"),
       1,
       1,
       {"total params &lt;= " + std::to_string(params - 1)},
       {}},
      {"both, one failing",
       limits("params = \"26M\"\nmacs = " + std::to_string(macs - 1) + "\n"),
       1,
       2,
       {macs_name(std::to_string(macs - 1))},
       {"total params &lt;= 26M"}},
  });
}

TEST_CASE("budget: a per-scope glob applies to every scope it matches") {
  // layer4.0 (BasicBlock 256 -> 512, stride 2, 7x7 output):
  //   conv1 3x3: 512*7*7 * 256*9 = 57802752; conv2 3x3: 512*7*7 * 512*9 = 115605504;
  //   downsample 1x1: 512*7*7 * 256 = 6422528;  sum 179830784.
  // layer4.1: two 3x3 convs 512 -> 512: 2 * 115605504 = 231211008.
  const std::string in = "[inputs]\ninput = \"1x3x224x224\"\n";
  run_cases({
      {"glob, limit at layer4.0: layer4.1 fails",
       in + "[[scope]]\npattern = \"layer4.*\"\nmacs = 179830784\n",
       1,
       2,
       {"scope layer4.1 macs &lt;= 179830784"},
       {"scope layer4.0 macs &lt;= 179830784"}},
      {"glob, limit at layer4.1: both hold",
       in + "[[scope]]\npattern = \"layer4.*\"\nmacs = 231211008\n",
       0,
       2,
       {},
       {"scope layer4.0 macs &lt;= 231211008", "scope layer4.1 macs &lt;= 231211008"}},
      {"glob just below layer4.0",
       in + "[[scope]]\npattern = \"layer4.*\"\nmacs = 179830783\n",
       1,
       2,
       {"scope layer4.0 macs &lt;= 179830783", "scope layer4.1 macs &lt;= 179830783"},
       {}},
      // layer2.0 .. layer4.1 across stages; fc: Linear 512 -> 1000 = 512000 MACs, 513000 params.
      {"exact scope name",
       in + "[[scope]]\npattern = \"fc\"\nmacs = 512000\nparams = 513000\n",
       0,
       2,
       {},
       {"scope fc params &lt;= 513000", "scope fc macs &lt;= 512000"}},
      {"a pattern matching nothing fails",
       in + "[[scope]]\npattern = \"layer9.*\"\nmacs = \"1G\"\n",
       1,
       1,
       {"scope layer9.* macs &lt;= 1G"},
       {}},
  });
}

TEST_CASE("budget: activation bytes and per-input-shape variants") {
  // Activation bytes = sum over nodes of their outputs' bytes. From the report's node output shapes,
  // every output float32 (4 bytes) in this model.
  json r = current_report();
  int64_t act = 0;
  for (const auto& n : r.at("nodes"))
    for (const auto& o : n.at("outputs")) {
      int64_t e = 1;
      for (const auto& d : o.at("shape")) e *= d.get<int64_t>();
      act += 4 * e;
    }
  std::string a = std::to_string(act);
  std::string base = "[inputs]\ninput = \"batchx3x224x224\"\n";
  run_cases({
      {"activation bytes exactly at",
       "[dims]\nbatch = 1\n[limits]\nactivation_bytes = " + a + "\n",
       0,
       1,
       {},
       {"total activation_bytes &lt;= " + a}},
      {"activation bytes just below",
       "[dims]\nbatch = 1\n[limits]\nactivation_bytes = " + std::to_string(act - 1) + "\n",
       1,
       1,
       {"total activation_bytes &lt;= " + std::to_string(act - 1)},
       {}},
      // batch 32: 32 * 1814073344 = 58050347008 MACs.
      {"variants batch 1 and 32, both at their figure",
       base + "[[variant]]\nname = \"batch1\"\ndims = {batch = 1}\nlimits = {macs = 1814073344}\n"
              "[[variant]]\nname = \"batch32\"\ndims = {batch = 32}\nlimits = {macs = 58050347008}\n",
       0,
       2,
       {},
       {"total macs &lt;= 1814073344", "total macs &lt;= 58050347008"}},
      {"batch32 just below its figure",
       base + "[[variant]]\nname = \"batch1\"\ndims = {batch = 1}\nlimits = {macs = 1814073344}\n"
              "[[variant]]\nname = \"batch32\"\ndims = {batch = 32}\nlimits = {macs = 58050347007}\n",
       1,
       2,
       {"total macs &lt;= 58050347007"},
       {"total macs &lt;= 1814073344"}},
  });
  Result r2 = check(
      base +
      "[[variant]]\nname = \"batch1\"\n[variant.dims]\nbatch = 1\n"
      "[[variant]]\nname = \"batch32\"\n[variant.dims]\nbatch = 32\n[variant.limits]\nmacs = \"58G\"\n");
  CHECK(r2.code == 1);
  CHECK(r2.junit.find("classname=\"flopwise.budget.batch32\"") != std::string::npos);
  CHECK(occurrences(r2.junit, "<testsuite ") == 2);
  // Unbound batch: the figure is unknown, which cannot be shown to hold.
  Result r3 = check(base + "[limits]\nmacs = \"100G\"\n");
  CHECK(r3.code == 1);
  CHECK(r3.out.find("unknown") != std::string::npos);
  // --dim on the command line binds it.
  CHECK(check(base + "[limits]\nmacs = \"100G\"\n", "--dim batch=1").code == 0);
}

TEST_CASE("budget: baseline regressions of +1.9% and +2.1% against a 2% limit") {
  json cur = current_report();
  auto baseline = [&](const std::string& name, int64_t per_mille) {
    // Baseline totals = current * 1000 / per_mille, so the current model is (per_mille/1000 - 1) above
    // it, give or take integer rounding (at most 1 unit in ~1e7, far below the 0.1% margin).
    json b = cur;
    for (const char* k : {"params", "macs", "flops", "memory_bytes"})
      b["totals"][k] = cur.at("totals").at(k).get<int64_t>() * 1000 / per_mille;
    fs::path p = budget_tmp() / name;
    std::ofstream(p) << b.dump();
    return name;
  };
  std::string b19 = baseline("base_1_9.json", 1019), b21 = baseline("base_2_1.json", 1021);
  auto names = [&](const std::string& file) {
    json b = json::parse(slurp(budget_tmp() / file));
    std::vector<std::string> n;
    for (const char* k : {"params", "macs", "flops", "memory_bytes"})
      n.push_back(std::string("baseline ") + k + " &lt;= +2% over " +
                  std::to_string(b.at("totals").at(k).get<int64_t>()));
    return n;
  };
  // params exactly +2%: 11455600 * 1.02 = 11684712; one parameter less in the baseline is over 2%.
  json exact = cur;
  exact["totals"]["params"] = 11455600;
  std::ofstream(budget_tmp() / "base_exact.json") << exact.dump();
  json over = cur;
  over["totals"]["params"] = 11455599;
  std::ofstream(budget_tmp() / "base_over.json") << over.dump();
  const std::string in = "[inputs]\ninput = \"1x3x224x224\"\n";
  run_cases({
      {"+1.9% passes",
       in + "[baseline]\nreport = \"" + b19 + "\"\nmax_increase = \"2%\"\n",
       0,
       4,
       {},
       names(b19)},
      {"+2.1% fails on every total",
       in + "[baseline]\nreport = \"" + b21 + "\"\nmax_increase = \"2%\"\n",
       1,
       4,
       names(b21),
       {}},
      {"exactly +2% passes",
       in + "[baseline]\nreport = \"base_exact.json\"\nmax_increase = {params = \"2%\"}\n",
       0,
       1,
       {},
       {"baseline params &lt;= +2% over 11455600"}},
      {"just over +2% fails",
       in + "[baseline]\nreport = \"base_over.json\"\nmax_increase = {params = \"2%\"}\n",
       1,
       1,
       {"baseline params &lt;= +2% over 11455599"},
       {}},
  });
  Result r = check(in + "[baseline]\nreport = \"" + b21 + "\"\nmax_increase = \"2%\"\n", "--format markdown");
  CHECK(r.out.rfind("### flopwise check: ❌ 4 of 4 limits fail", 0) == 0);
  CHECK(r.out.find("+2.10%") != std::string::npos);
}

TEST_CASE("budget: a malformed budget file names the line and the key") {
  struct Bad {
    const char* toml;
    const char* message;  // expected in stderr, after "budget.toml:"
  };
  const Bad bad[] = {
      {"[limits]\nmacs = \"4.2G\"\nmac = \"1G\"\n", "budget.toml:3: [limits]: unknown key 'mac'"},
      {"[limits]\nmacs = \"4.2X\"\n", "budget.toml:2: [limits] macs: \"4.2X\" is not a size"},
      {"[limits]\nparams = 4.2G\n", "budget.toml:2: key 'params':"},  // TOML syntax error
      {"[limts]\nmacs = \"4G\"\n", "budget.toml:1: top level: unknown key 'limts'"},
      {"[limits]\nmacs = \"4G\"\n\n[[scope]]\nmacs = \"1G\"\n",
       "budget.toml:4: [[scope]]: missing key 'pattern'"},
      {"[[scope]]\npattern = \"layer4.*\"\nmacs = \"1G\"\nflop = 3\n",
       "budget.toml:4: [[scope]] 'layer4.*': unknown key 'flop'"},
      {"[baseline]\nreport = \"b.json\"\nmax_increase = 2\n",
       "budget.toml:3: [baseline] max_increase: expected a percentage"},
      {"[baseline]\nreport = \"b.json\"\nmax_increase = \"2%\"\nthreshold = 1\n",
       "budget.toml:4: [baseline]: unknown key 'threshold'"},
      {"[dims]\nbatch = \"one\"\n", "budget.toml:2: [dims] batch: expected a non-negative integer"},
      {"[inputs]\ninput = \"1x3xfoo@\"\n", "budget.toml:2: [inputs] input:"},
      {"[[variant]]\nname = \"a\"\nlimit = {macs = 1}\n", "budget.toml:3: [[variant]]: unknown key 'limit'"},
      {"[[variant]]\ndims = {batch = 1}\n", "budget.toml:1: [[variant]]: missing key 'name'"},
      {"[limits]\nmacs = -5\n", "budget.toml:2: [limits] macs: a limit cannot be negative"},
  };
  for (const auto& b : bad) {
    CAPTURE(b.toml);
    Result r = check(b.toml);
    CHECK(r.code == 2);
    CHECK_MESSAGE(r.err.find(b.message) != std::string::npos, r.err);
    CHECK(r.junit.empty());  // bad input: no test report
  }
  // A missing baseline report is bad input too, named with the budget's key.
  Result r = check("[baseline]\nreport = \"missing.json\"\nmax_increase = \"2%\"\n");
  CHECK(r.code == 2);
  CHECK(r.err.find("[baseline] report") != std::string::npos);
}
