// bench/onnx_infer_bench.cc — the yardstick: ONNX's own loader + shape inference on one file.
// Reads the whole file, parses the ModelProto (weights included when they are inline), runs
// onnx::shape_inference::InferShapes, and prints the phases' wall times in milliseconds.
// Usage: onnx_infer_bench MODEL.onnx [REPEATS]
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

namespace {
double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: onnx_infer_bench MODEL.onnx [REPEATS]\n";
    return 2;
  }
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 1;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    std::ifstream f(argv[1], std::ios::binary | std::ios::ate);
    if (!f) {
      std::cerr << "onnx_infer_bench: cannot open " << argv[1] << "\n";
      return 1;
    }
    std::string bytes(static_cast<size_t>(f.tellg()), '\0');
    f.seekg(0);
    f.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    const double t_read = ms_since(t0);
    auto t1 = std::chrono::steady_clock::now();
    onnx::ModelProto model;
    if (!model.ParseFromString(bytes)) {
      std::cerr << "onnx_infer_bench: cannot parse " << argv[1] << "\n";
      return 1;
    }
    const double t_parse = ms_since(t1);
    auto t2 = std::chrono::steady_clock::now();
    onnx::shape_inference::InferShapes(model);
    const double t_infer = ms_since(t2);
    std::printf("read %.2f ms  parse %.2f ms  infer %.2f ms  total %.2f ms  (%zu bytes, %d value_info)\n",
                t_read, t_parse, t_infer, ms_since(t0), bytes.size(), model.graph().value_info_size());
  }
  return 0;
}
