// include/flopwise/errors.h — typed errors. Library code throws these; only main() maps them to exit codes.
#pragma once

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace flopwise {

// Exit codes of the CLI (documented in the README).
enum ExitCode : int {
  kExitOk = 0,
  kExitBudgetFailed = 1,  // a budget limit does not hold (flopwise check)
  kExitBadInput = 2,      // unreadable input, malformed model, bad usage
  kExitStrict = 3,        // --strict and an op is unsupported or a cost is unknown
  kExitNoRuntime = 4,     // flopwise run: the runtime harness (flopwise-runtime) is not built
  kExitRunFailed = 5,     // flopwise run: the model raised, the run timed out, or the device is not available
  kExitVerifyFailed = 6,  // flopwise run --verify: an executed op's shapes disagree with the static analysis
  kExitInternal = 70,     // a bug in flopwise (EX_SOFTWARE): never the input's fault
};

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The input file cannot be used: missing, unreadable, not a model, truncated, malformed.
struct InputError : Error {
  using Error::Error;
};
// The command line or an option's value is wrong.
struct UsageError : Error {
  using Error::Error;
};
// A shape contradiction provable from the model (e.g. MatMul with 3 vs 4 inner dims).
struct ShapeError : Error {
  using Error::Error;
};

// Throws InputError unless `path` names a regular file (or a link to one): a FIFO, a device or a directory is
// refused before anything opens it (opening a FIFO blocks until a writer comes; a device never ends).
inline void require_regular_file(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw InputError(path + ": cannot open (" + std::strerror(errno) + ")");
  if (S_ISDIR(st.st_mode)) throw InputError(path + ": a directory, not a regular file");
  if (!S_ISREG(st.st_mode)) throw InputError(path + ": not a regular file (a FIFO, socket or device)");
}

}  // namespace flopwise
