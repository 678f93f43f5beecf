// src/runtime/device_info.h — what the runtime harness says about the machine and the LibTorch it runs on.
// Owns: choosing the device (cpu / cuda / auto) and the one-line reason CUDA is unavailable, the device
// name (CUDA through the driver API opened at run time: no CUDA headers needed), the BLAS and parallel
// lines of the response header, the TF32 flags, and device synchronisation and events for timing. Sees
// LibTorch.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace flopwise::runtime {

// Why CUDA cannot be used, or nullopt when it can: "this LibTorch was built without CUDA ...",
// "libtorch_cuda is not loaded ...", or "no CUDA device is visible ...".
std::optional<std::string> cuda_unavailable_reason();

std::string cpu_name();                     // "CPU (<model name from /proc/cpuinfo>)", else "CPU"
std::string cuda_device_name(int ordinal);  // the driver's name, else "CUDA device N"
std::string blas_line();      // the BLAS of at::show_config(), e.g. "BLAS_INFO=generic"; "unknown"
std::string parallel_line();  // the backend of at::get_parallel_info() and its thread counts
void synchronize_cuda();      // torch::cuda::synchronize() (exists in CPU builds too)

// Whether LibTorch runs float32 convolutions (cuDNN) and matrix products (cuBLAS) on TF32 tensor cores:
// at::globalContext()'s allowTF32CuDNN (true by default) and allowTF32CuBLAS (false by default).
struct Tf32Flags {
  bool cudnn = false, cublas = false;
};
Tf32Flags tf32_flags();

// A pool of CUDA events recorded on the legacy default stream (which LibTorch's kernels run on unless a
// stream is set, and which waits for every blocking stream), through the driver API opened at run time: no
// CUDA headers or libcudart needed. Marks cost one cuEventRecord each (a few microseconds, no device
// synchronisation); their times are read after one synchronisation.
class CudaEvents {
 public:
  // nullptr, with the reason in *why, when the driver cannot be opened or an event not created.
  static std::unique_ptr<CudaEvents> open(std::string* why);
  ~CudaEvents();
  CudaEvents(const CudaEvents&) = delete;
  CudaEvents& operator=(const CudaEvents&) = delete;

  int mark();    // records the next event of the pool now; its index (-1: the record failed)
  void reset();  // the next mark reuses the pool from its start (after the last marks were read)
  bool wait();   // waits until the last mark's work is done
  double ms(int a, int b) const;  // milliseconds from mark a to mark b; NaN when either failed

 private:
  struct Api;
  CudaEvents() = default;
  std::unique_ptr<Api> api_;
  std::vector<void*> events_;
  size_t next_ = 0;
};

}  // namespace flopwise::runtime
