// src/runtime/device_info.h — what the runtime harness says about the machine and the LibTorch it runs on.
// Owns: choosing the device (cpu / cuda / auto) and the one-line reason CUDA is unavailable, the device
// name (CUDA through the driver API opened at run time: no CUDA headers needed), the BLAS and parallel
// lines of the response header, and device synchronisation for timing. Sees LibTorch.
#pragma once

#include <optional>
#include <string>

namespace flopwise::runtime {

// Why CUDA cannot be used, or nullopt when it can: "this LibTorch was built without CUDA ...",
// "libtorch_cuda is not loaded ...", or "no CUDA device is visible ...".
std::optional<std::string> cuda_unavailable_reason();

std::string cpu_name();                     // "CPU (<model name from /proc/cpuinfo>)", else "CPU"
std::string cuda_device_name(int ordinal);  // the driver's name, else "CUDA device N"
std::string blas_line();      // the BLAS of at::show_config(), e.g. "BLAS_INFO=generic"; "unknown"
std::string parallel_line();  // the backend of at::get_parallel_info() and its thread counts
void synchronize_cuda();      // torch::cuda::synchronize() (exists in CPU builds too)

}  // namespace flopwise::runtime
