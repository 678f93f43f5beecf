// tests/cli_util.h — run the flopwise CLI the way a user does and capture what it says.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fwtest {

namespace fs = std::filesystem;

// The scratch directories this test process made; removed when it exits (FLOPWISE_KEEP_SCRATCH=1 keeps them
// for a look after a failure).
struct ScratchDirs {
  std::vector<fs::path> made;
  ~ScratchDirs() {
    if (std::getenv("FLOPWISE_KEEP_SCRATCH")) return;
    for (const fs::path& p : made) {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  }
};

inline ScratchDirs& scratch_dirs() {
  static ScratchDirs dirs;
  return dirs;
}

// A scratch directory per test process and tag, e.g. /tmp/flopwise_diff_1234, removed at exit.
inline fs::path scratch_dir(const std::string& tag) {
  fs::path p = fs::temp_directory_path() / ("flopwise_" + tag + "_" + std::to_string(::getpid()));
  if (fs::create_directories(p)) scratch_dirs().made.push_back(p);
  return p;
}

inline std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The directory of the flopwise binary under test (the build directory).
inline std::string binary_dir() {
  std::string b = FLOPWISE_BINARY;
  return b.substr(0, b.rfind('/'));
}

// The TorchScript test models (models/generate.py --torchscript) in BUILD/pt_models, generated on first use
// by whichever test needs them first. Returns the directory, or "" when they cannot be made (no
// python3-torch): see BUILD/pt_models.log.
inline std::string pt_models_dir() {
  static const std::string dir = [] {
    std::string d = binary_dir() + "/pt_models";
    const std::string marker = d + "/raises.script.pt";  // written last by the current generator
    // and the model added last (a build directory made before it has the rest): regenerated when missing
    const std::string newest = d + "/torch_transformer.trace.pt";
    if (!fs::exists(marker) || !fs::exists(newest)) {
      std::string cmd = "/usr/bin/python3 " + std::string(FLOPWISE_SOURCE_DIR) +
                        "/models/generate.py --torchscript --out " + d + " > " + binary_dir() +
                        "/pt_models.log 2>&1";
      if (std::system(cmd.c_str()) != 0 || !fs::exists(marker)) return std::string();
    }
    return d;
  }();
  return dir;
}

// BUILD/<sub>, written by `python3 models/<script> --out BUILD/<sub>` on first use unless it holds `marker`
// (a file the script writes last). Returns the directory, or "" when it cannot be made (no python3-torch?):
// see BUILD/<sub>.log.
inline std::string generated_dir(const std::string& sub, const std::string& script,
                                 const std::string& marker) {
  std::string d = binary_dir() + "/" + sub;
  if (!fs::exists(d + "/" + marker)) {
    std::string cmd = "/usr/bin/python3 " + std::string(FLOPWISE_SOURCE_DIR) + "/models/" + script +
                      " --out " + d + " > " + binary_dir() + "/" + sub + ".log 2>&1";
    if (std::system(cmd.c_str()) != 0 || !fs::exists(d + "/" + marker)) return std::string();
  }
  return d;
}

// The TorchScript zoo (models/torch_zoo.py: stock torchvision and torch.nn modules) in BUILD/pt_zoo.
inline std::string pt_zoo_dir() {
  static const std::string dir = generated_dir("pt_zoo", "torch_zoo.py", "zoo.json");
  return dir;
}

// The reference-profile models (models/reference_profile.py: the BertForPreTrainingPreLN look-alike of
// ../shared/reference, full size and small) in BUILD/reference_profile.
inline std::string reference_profile_dir() {
  static const std::string dir =
      generated_dir("reference_profile", "reference_profile.py", "bert_preln.expect.json");
  return dir;
}

struct CliRun {
  int code = -1;  // exit code; -1 when the process died of a signal (a crash)
  std::string out, err;
};

// Runs `flopwise ARGS` with stdout and stderr captured through files in `dir`; `env`: "NAME=VALUE ..." set
// for that run only.
inline CliRun run_cli(const std::string& args, const fs::path& dir, const std::string& env = "") {
  fs::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  std::string cmd = (env.empty() ? std::string() : "env " + env + " ") + "\"" + FLOPWISE_BINARY + "\" " +
                    args + " >\"" + out.string() + "\" 2>\"" + err.string() + "\"";
  int status = std::system(cmd.c_str());
  CliRun r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

inline std::string model_path(const std::string& name) {
  return (fs::path(FLOPWISE_SOURCE_DIR) / "models" / name).string();
}

}  // namespace fwtest
