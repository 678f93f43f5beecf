// TorchScript loads contained (issue 16; src/cli/contain.cc): an archive whose __setstate__ loops is stopped
// at the load time limit, one that allocates past the load memory limit fails, a truncated one is refused;
// each is one line and exit 2, and a good archive still analyses (exit 0). The hostile archives are written by
// models/hostile_pt.py at test time.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>

#include "cli_util.h"

namespace {

struct Archives {
  std::string dir, skip;
};

const Archives& archives() {
  static Archives a = [] {
    Archives r;
    std::string bin = FLOPWISE_BINARY;
    if (!std::ifstream(bin.substr(0, bin.rfind('/')) + "/libflopwise_torch.so").good()) {
      r.skip = "TorchScript plugin not built";
      return r;
    }
    r.dir = fwtest::scratch_dir("contain").string();
    const std::string cmd = "/usr/bin/python3 " + fwtest::model_path("hostile_pt.py") + " " + r.dir + " > " + r.dir +
                            "/gen.log 2>&1";
    if (std::system(cmd.c_str()) != 0) r.skip = "cannot write the archives (python3-torch missing?): see gen.log";
    return r;
  }();
  return a;
}

bool one_line(const std::string& s) { return !s.empty() && s.find('\n') == s.size() - 1; }

}  // namespace

TEST_CASE("TorchScript loads run contained: a looping, an allocating and a truncated archive are one line, exit 2") {
  if (!archives().skip.empty()) {
    MESSAGE("skipped: " << archives().skip);
    return;
  }
  const std::string d = archives().dir;
  const auto scratch = fwtest::scratch_dir("contain_run");
  SUBCASE("__setstate__ loops: stopped at FLOPWISE_LOAD_TIMEOUT_S") {
    auto t0 = std::chrono::steady_clock::now();
    fwtest::CliRun r = fwtest::run_cli(d + "/loops_at_load.pt --input 1x4", scratch, "FLOPWISE_LOAD_TIMEOUT_S=3");
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(r.code == 2);
    CHECK(one_line(r.err));
    CHECK(r.err.find("took longer than 3 s") != std::string::npos);
    CHECK(s < 60);  // stopped, not run to the end (the loop would take centuries)
  }
  SUBCASE("__setstate__ allocates 1 GiB: fails under FLOPWISE_LOAD_MEMORY_MB=256") {
    fwtest::CliRun r = fwtest::run_cli(d + "/allocates_at_load.pt --input 1x4", scratch, "FLOPWISE_LOAD_MEMORY_MB=256");
    CHECK(r.code == 2);
    CHECK(one_line(r.err));
  }
  SUBCASE("a truncated archive") {
    fwtest::CliRun r = fwtest::run_cli(d + "/truncated.pt --input 1x8", scratch);
    CHECK(r.code == 2);
    CHECK(one_line(r.err));
  }
  SUBCASE("a good archive analyses as before, its params torch's own count (8 * 4 + 4)") {
    fwtest::CliRun r = fwtest::run_cli(d + "/linear.pt --input 1x8 --format json", scratch);
    CHECK(r.code == 0);
    CHECK(r.out.find("\"params\": 36") != std::string::npos);
  }
}
