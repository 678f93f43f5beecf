// src/cli/contain.cc — containment of TorchScript loads: LibTorch's loader runs an archive's code
// (__setstate__) and trusts its pickles, so a malformed or hostile .pt can crash it, loop forever or allocate
// without bound. When a command names a TorchScript file, the process forks at once: the child runs the
// command as usual, and around each archive load (flopwise::set_torchscript_load_hook) it limits its data
// size and tells the parent through a pipe that a load began ('B') or ended ('L'). The parent only watches: a
// load past its time limit is killed, a child that dies inside a load is one line and exit 2 (the input's
// fault), a child that dies outside one is an internal error (exit 70); otherwise the child's own exit code
// is the command's. The child dies with its parent (PR_SET_PDEATHSIG): a parent killed by SIGKILL (a caller's
// timeout, a CI runner, the OOM killer) leaves no load running on its own.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>

#include "commands.h"
#include "flopwise/analyse.h"
#include "flopwise/errors.h"
#include "flopwise/limits.h"
#include "output.h"

namespace flopwise {

namespace {

int64_t env_int(const char* name, int64_t dflt) {
  const char* v = std::getenv(name);
  if (!v || !*v) return dflt;
  char* end = nullptr;
  long long x = std::strtoll(v, &end, 10);
  return end && *end == '\0' && x > 0 ? x : dflt;
}

// The first argument naming a regular TorchScript file, and its size; "" when none.
std::string torchscript_argument(int argc, char** argv, int64_t* size) {
  for (int i = 1; i < argc; ++i) {
    struct stat st;
    if (stat(argv[i], &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (detect_format(argv[i]) == ModelFormat::TorchScript) {
      *size = static_cast<int64_t>(st.st_size);
      return argv[i];
    }
  }
  return "";
}

void write_byte(int fd, char c) {
  while (write(fd, &c, 1) < 0 && errno == EINTR) {
  }
}

}  // namespace

std::optional<int> contain_torchscript_loads(int argc, char** argv) {
  if (std::getenv("FLOPWISE_NO_CONTAINMENT")) return std::nullopt;
  int64_t size = 0;
  const std::string path = torchscript_argument(argc, argv, &size);
  if (path.empty()) return std::nullopt;
  // Defaults (README, Limits): 8 s per load plus 1 s per 16 MiB of archive (flopwise/limits.h); data size
  // 2 GiB plus 4x the archive (its tensors are read in).
  const int64_t timeout_s = env_int("FLOPWISE_LOAD_TIMEOUT_S", default_load_timeout_s(size));
  const int64_t limit_mb = env_int("FLOPWISE_LOAD_MEMORY_MB", 2048 + 4 * (size >> 20));
  int fds[2];
  if (pipe(fds) != 0) return std::nullopt;  // no containment rather than no analysis
  std::cout.flush();
  std::cerr.flush();
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return std::nullopt;
  }
  if (child == 0) {
    // Killed with the parent, whatever kills it; a parent already gone before the request is seen by getppid.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(kExitInternal);
    close(fds[0]);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);  // flopwise-runtime and other children do not hold the pipe
    const int out = fds[1];
    struct rlimit saved;
    getrlimit(RLIMIT_DATA, &saved);
    set_torchscript_load_hook([out, saved, limit_mb](bool begin) {
      struct rlimit r = saved;
      if (begin) {
        const rlim_t want = static_cast<rlim_t>(limit_mb) << 20;
        r.rlim_cur = saved.rlim_max == RLIM_INFINITY || want < saved.rlim_max ? want : saved.rlim_max;
      }
      setrlimit(RLIMIT_DATA, &r);
      write_byte(out, begin ? 'B' : 'L');
    });
    return std::nullopt;  // the child runs the command
  }
  close(fds[1]);
  bool loading = false;
  auto deadline = std::chrono::steady_clock::now();
  for (;;) {
    struct pollfd p {
      fds[0], POLLIN, 0
    };
    int wait_ms = -1;
    if (loading) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now())
              .count();
      wait_ms = left > 0 ? static_cast<int>(std::min<int64_t>(left, 1 << 30)) : 0;
    }
    int n = poll(&p, 1, wait_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {  // the load's time is up
      kill(child, SIGKILL);
      waitpid(child, nullptr, 0);
      print_error(
          "flopwise: error: ", "InputError",
          path + ": loading the TorchScript archive took longer than " + std::to_string(timeout_s) +
              " s and was stopped (LibTorch runs an archive's __setstate__ code when loading it, and it "
              "may loop); FLOPWISE_LOAD_TIMEOUT_S raises the limit");
      return kExitBadInput;
    }
    char c = 0;
    ssize_t got = read(fds[0], &c, 1);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // the child ended (or closed the pipe by exec)
    if (c == 'B') {
      loading = true;
      deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    } else if (c == 'L') {
      loading = false;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  const char* name = sig ? strsignal(sig) : "unknown";
  if (loading) {
    print_error("flopwise: error: ", "InputError",
                path + ": LibTorch crashed loading the TorchScript archive (signal " + std::to_string(sig) +
                    ", " + name + "); the file is malformed, or its data needs more than " +
                    std::to_string(limit_mb) + " MB (FLOPWISE_LOAD_MEMORY_MB raises the limit)");
    return kExitBadInput;
  }
  if (sig == SIGPIPE) {
    // The reader of the report went away (`flopwise m.pt | head`): end as any writer to a closed pipe does.
    ::signal(SIGPIPE, SIG_DFL);
    ::raise(SIGPIPE);
  }
  print_error("flopwise: internal error: ", "InternalError",
              "stopped by signal " + std::to_string(sig) + " (" + name +
                  ") after the archive was loaded (please report this with the input)");
  return kExitInternal;
}

}  // namespace flopwise
