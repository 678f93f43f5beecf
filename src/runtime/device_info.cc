// src/runtime/device_info.cc — see device_info.h.
#include "device_info.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <dlfcn.h>
#include <torch/cuda.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <type_traits>

namespace flopwise::runtime {
namespace {

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t-");
  size_t b = s.find_last_not_of(" \t\r,");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

// The value of "KEY=value" in show_config's build settings ("" when absent).
std::string build_setting(const std::string& config, const std::string& key) {
  size_t at = config.find(key + "=");
  if (at == std::string::npos) return "";
  at += key.size() + 1;
  size_t end = config.find_first_of(", \n", at);
  return config.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

}  // namespace

std::optional<std::string> cuda_unavailable_reason() {
  if (torch::cuda::is_available()) return std::nullopt;
  if (!at::globalContext().hasCUDART()) {  // no CUDA hooks registered: no libtorch_cuda in this process
    if (build_setting(at::show_config(), "USE_CUDA") == "ON")
      return std::string(
          "CUDA requested, but libtorch_cuda is not loaded into flopwise-runtime (this LibTorch has CUDA; "
          "relink with -Wl,--no-as-needed)");
    return std::string(
        "CUDA requested, but this LibTorch was built without CUDA (USE_CUDA=OFF); rebuild flopwise-runtime "
        "against a CUDA LibTorch (cmake -DCMAKE_PREFIX_PATH=<LibTorch>)");
  }
  return std::string(
      "CUDA requested, but no CUDA device is visible (no GPU, no driver, or CUDA_VISIBLE_DEVICES hides it)");
}

std::string cpu_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return "CPU (" + trim(line.substr(colon + 1)) + ")";
    }
  return "CPU";
}

std::string cuda_device_name(int ordinal) {
  std::string fallback = "CUDA device " + std::to_string(ordinal);
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) return fallback;
  using InitFn = int (*)(unsigned);
  using GetFn = int (*)(int*, int);
  using NameFn = int (*)(char*, int, int);
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "cuInit"));
  auto get = reinterpret_cast<GetFn>(dlsym(lib, "cuDeviceGet"));
  auto name = reinterpret_cast<NameFn>(dlsym(lib, "cuDeviceGetName"));
  char buf[256] = {0};
  int dev = 0;
  std::string r = fallback;
  if (init && get && name && init(0) == 0 && get(&dev, ordinal) == 0 &&
      name(buf, sizeof(buf) - 1, dev) == 0 && buf[0])
    r = buf;
  dlclose(lib);
  return r;
}

std::string blas_line() {
  std::string config = at::show_config();
  std::string info = build_setting(config, "BLAS_INFO");
  // A library line of its own when the build names one (MKL, OpenBLAS), e.g.
  // "  - Intel(R) Math Kernel Library Version 2020.0.0 ...".
  std::istringstream in(config);
  std::string line, lib;
  while (std::getline(in, line))
    if (line.find("Math Kernel Library") != std::string::npos || line.find("OpenBLAS") != std::string::npos ||
        line.find("BLIS") != std::string::npos)
      lib = trim(line);
  if (info.empty() && lib.empty()) return "unknown";
  if (lib.empty()) return "BLAS_INFO=" + info;
  return info.empty() ? lib : "BLAS_INFO=" + info + " (" + lib + ")";
}

std::string parallel_line() {
  // get_parallel_info()'s first line is the heading "ATen/Parallel:"; its facts are the backend line and
  // the thread counts.
  std::istringstream in(at::get_parallel_info());
  std::string line, backend = "unknown";
  const std::string key = "ATen parallel backend:";
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) backend = trim(line.substr(key.size()));
  return backend + " (intra-op threads " + std::to_string(at::get_num_threads()) + ", inter-op threads " +
         std::to_string(at::get_num_interop_threads()) + ")";
}

void synchronize_cuda() { torch::cuda::synchronize(); }

Tf32Flags tf32_flags() {
  Tf32Flags f;
  f.cudnn = at::globalContext().allowTF32CuDNN();
  f.cublas = at::globalContext().allowTF32CuBLAS();
  return f;
}

// The driver API's event calls (cuda.h's signatures; CUevent and CUstream are opaque pointers, results
// CUresult with 0 for success). The thread's current context is the primary one LibTorch made current.
struct CudaEvents::Api {
  void* lib = nullptr;
  int (*create)(void**, unsigned) = nullptr;
  int (*destroy)(void*) = nullptr;
  int (*record)(void*, void*) = nullptr;
  int (*synchronize)(void*) = nullptr;
  int (*elapsed)(float*, void*, void*) = nullptr;
  ~Api() {
    if (lib) dlclose(lib);
  }
};

std::unique_ptr<CudaEvents> CudaEvents::open(std::string* why) {
  std::unique_ptr<CudaEvents> e(new CudaEvents);
  e->api_ = std::make_unique<Api>();
  Api& a = *e->api_;
  a.lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!a.lib) {
    *why = "libcuda.so.1 could not be opened";
    return nullptr;
  }
  auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::decay_t<decltype(fn)>>(dlsym(a.lib, name));
  };
  sym(a.create, "cuEventCreate");
  sym(a.destroy, "cuEventDestroy_v2");
  sym(a.record, "cuEventRecord");
  sym(a.synchronize, "cuEventSynchronize");
  sym(a.elapsed, "cuEventElapsedTime_v2");  // CUDA 12.8 on; cuda.h 13 names no other
  if (!a.elapsed) sym(a.elapsed, "cuEventElapsedTime");
  if (!a.create || !a.destroy || !a.record || !a.synchronize || !a.elapsed) {
    *why = "the CUDA driver lacks the event API";
    return nullptr;
  }
  void* probe = nullptr;
  if (a.create(&probe, 0) != 0) {
    *why = "cuEventCreate failed";
    return nullptr;
  }
  e->events_.push_back(probe);
  return e;
}

CudaEvents::~CudaEvents() {
  if (api_)
    for (void* ev : events_) api_->destroy(ev);
}

int CudaEvents::mark() {
  if (next_ == events_.size()) {
    void* ev = nullptr;
    if (api_->create(&ev, 0) != 0) return -1;
    events_.push_back(ev);
  }
  void* ev = events_[next_];
  if (api_->record(ev, nullptr) != 0) return -1;  // the legacy default stream
  return static_cast<int>(next_++);
}

void CudaEvents::reset() { next_ = 0; }

bool CudaEvents::wait() { return next_ == 0 || api_->synchronize(events_[next_ - 1]) == 0; }

double CudaEvents::ms(int a, int b) const {
  float v = 0;
  if (a < 0 || b < 0 || static_cast<size_t>(a) >= next_ || static_cast<size_t>(b) >= next_ ||
      api_->elapsed(&v, events_[static_cast<size_t>(a)], events_[static_cast<size_t>(b)]) != 0)
    return std::nan("");
  return v;
}

}  // namespace flopwise::runtime
