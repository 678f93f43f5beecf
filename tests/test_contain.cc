// tests/test_contain.cc — TorchScript loads contained (issue 16; src/cli/contain.cc): an archive whose
// __setstate__ loops is stopped at the load time limit, one that allocates past the load memory limit fails,
// a truncated one is refused; each is one line and exit 2, and a good archive still analyses (exit 0). The
// hostile archives are written by models/hostile_pt.py at test time.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "cli_util.h"
#include "flopwise/limits.h"

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
    const std::string cmd = "/usr/bin/python3 " + fwtest::model_path("hostile_pt.py") + " " + r.dir + " > " +
                            r.dir + "/gen.log 2>&1";
    if (std::system(cmd.c_str()) != 0)
      r.skip = "cannot write the archives (python3-torch missing?): see gen.log";
    return r;
  }();
  return a;
}

bool one_line(const std::string& s) { return !s.empty() && s.find('\n') == s.size() - 1; }

}  // namespace

TEST_CASE("the load time limit: a file of a few KB stopped within 10 s, a big archive given more time") {
  // Issue 52: a looping __setstate__ in a 2 KB .pt ran 20 s before it was stopped; the issue asks for 10 s at
  // most, the limit still growing with the archive. Each figure by hand from the rule (8 s + 1 s per 16 MiB)
  // and, for big archives, the previous rule (20 s + 1 s per 32 MiB) as a floor.
  CHECK(flopwise::default_load_timeout_s(2048) == 8);  // hostile_pt.py's loops_at_load.pt is about 2 KB
  CHECK(flopwise::default_load_timeout_s(2048) <= 10);
  CHECK(flopwise::default_load_timeout_s(0) == 8);
  CHECK(flopwise::default_load_timeout_s(16 << 20) == 9);  // 8 + 16 MiB / 16 MiB
  const int64_t five_gib = int64_t{5} << 30;
  CHECK(flopwise::default_load_timeout_s(five_gib) == 8 + 320);  // 5 GiB / 16 MiB = 320
  for (int64_t mib : {384, 1024, 5 * 1024, 100 * 1024}) {
    CAPTURE(mib);
    CHECK(flopwise::default_load_timeout_s(mib << 20) >= 20 + mib / 32);  // no less than before
  }
}

TEST_CASE(
    "TorchScript loads run contained: a looping, an allocating and a truncated archive are one line, exit "
    "2") {
  if (!archives().skip.empty()) {
    MESSAGE("skipped: " << archives().skip);
    return;
  }
  const std::string d = archives().dir;
  const auto scratch = fwtest::scratch_dir("contain_run");
  SUBCASE("__setstate__ loops: stopped at FLOPWISE_LOAD_TIMEOUT_S") {
    auto t0 = std::chrono::steady_clock::now();
    fwtest::CliRun r =
        fwtest::run_cli(d + "/loops_at_load.pt --input 1x4", scratch, "FLOPWISE_LOAD_TIMEOUT_S=3");
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(r.code == 2);
    CHECK(one_line(r.err));
    CHECK(r.err.find("took longer than 3 s") != std::string::npos);
    CHECK(s < 60);  // stopped, not run to the end (the loop would take centuries)
  }
  SUBCASE("__setstate__ allocates 1 GiB: fails under FLOPWISE_LOAD_MEMORY_MB=256") {
    fwtest::CliRun r =
        fwtest::run_cli(d + "/allocates_at_load.pt --input 1x4", scratch, "FLOPWISE_LOAD_MEMORY_MB=256");
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
  SUBCASE("a reader that goes away (| true) ends flopwise as a closed pipe ends any writer: no error line") {
    // The contained child writes the report; SIGPIPE is how it ends, and the parent ends the same way.
    std::string err = (scratch / "pipe_err.txt").string();
    std::string cmd = "bash -c 'set -o pipefail; \"" + std::string(FLOPWISE_BINARY) + "\" " + d +
                      "/linear.pt --input 1x8 2>\"" + err + "\" | true'";
    int status = std::system(cmd.c_str());
    REQUIRE(WIFEXITED(status));
    int rc = WEXITSTATUS(status);
    CHECK(rc == 141);  // 128 + SIGPIPE: `true` has left before the archive is loaded
    CHECK(fwtest::slurp(err).empty());
  }
}

namespace {

// The children of `pid` that are alive (not zombies), from /proc/*/stat (field 4 is the parent's pid).
std::vector<pid_t> live_children(pid_t pid) {
  std::vector<pid_t> r;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(e.path() / "stat");
    std::string line;
    if (!std::getline(f, line)) continue;
    const size_t close = line.rfind(')');  // the command name may hold spaces and parentheses
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    char state = 0;
    long ppid = 0;
    rest >> state >> ppid;
    if (ppid == pid && state != 'Z' && state != 'X') r.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return r;
}

bool alive(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return false;
  const size_t close = line.rfind(')');
  const char state = close != std::string::npos && close + 2 < line.size() ? line[close + 2] : 'X';
  return state != 'Z' && state != 'X';
}

}  // namespace

TEST_CASE(
    "a contained load ends with its parent: SIGKILL to flopwise during a looping load leaves no process") {
  // Issue 31: a caller's timeout (subprocess.run(timeout=...)), a CI runner or the OOM killer sends SIGKILL
  // to flopwise; the child that runs the looping __setstate__ must not outlive it.
  if (!archives().skip.empty()) {
    MESSAGE("skipped: " << archives().skip);
    return;
  }
  const std::string pt = archives().dir + "/loops_at_load.pt";
  const pid_t flopwise = fork();
  REQUIRE(flopwise >= 0);
  if (flopwise == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    setenv("FLOPWISE_LOAD_TIMEOUT_S", "600", 1);  // the watchdog must not be what ends the load
    execl(FLOPWISE_BINARY, FLOPWISE_BINARY, pt.c_str(), "--input", "1x4", static_cast<char*>(nullptr));
    _exit(127);
  }
  // The forked child appears at once; give it time to open LibTorch and enter the archive's loop.
  std::vector<pid_t> kids;
  for (int i = 0; i < 200 && kids.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    kids = live_children(flopwise);
  }
  REQUIRE_MESSAGE(kids.size() == 1, "flopwise did not fork a loading child");
  std::this_thread::sleep_for(std::chrono::seconds(3));
  REQUIRE(alive(kids[0]));  // still loading (the loop would take centuries)
  kill(flopwise, SIGKILL);
  int status = 0;
  waitpid(flopwise, &status, 0);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {  // within 5 s
    gone = !alive(kids[0]);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!gone) kill(kids[0], SIGKILL);  // leave nothing running whatever the outcome
  CHECK_MESSAGE(gone, "the loading child outlived its killed parent");
}
