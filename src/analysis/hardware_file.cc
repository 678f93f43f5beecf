// src/analysis/hardware_file.cc — a user's device for --hardware-file (TOML via toml++), beside the table of
// src/analysis/hardware.def:
//   name = "my-gpu"
//   bandwidth_gbs = 900          # decimal GB/s
//   onchip_mb = 64               # optional
//   tf32 = false                 # optional: float32 products at the tf32 rate
//   [peak_tflops]                # dense, decimal TFLOP/s (int8: TOP/s); float32 is required
//   float32 = 30
//   float16 = 120
#include <toml++/toml.h>

#include "flopwise/errors.h"
#include "flopwise/roofline.h"

namespace flopwise {

Hardware load_hardware_file(const std::string& path) {
  toml::table t;
  try {
    t = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw UsageError(path + ":" + std::to_string(e.source().begin.line) + ": " +
                     std::string(e.description()));
  }
  Hardware hw;
  auto positive = [&](toml::node_view<toml::node> v, const std::string& key) {
    auto d = v.value<double>();
    if (!d || !(*d > 0) || *d > 1e9) throw UsageError(path + ": '" + key + "' must be a positive number");
    return *d;
  };
  hw.name = t["name"].value_or(std::string("custom"));
  hw.bandwidth = positive(t["bandwidth_gbs"], "bandwidth_gbs") * 1e9;
  if (t.contains("onchip_mb")) hw.onchip_mb = positive(t["onchip_mb"], "onchip_mb");
  hw.tf32 = t["tf32"].value_or(false);
  const toml::table* peaks = t["peak_tflops"].as_table();
  if (!peaks) throw UsageError(path + ": a [peak_tflops] table is needed (float32 = ..., float16 = ...)");
  for (const auto& [k, v] : *peaks) {
    bool found = false;
    for (size_t i = 0; i < static_cast<size_t>(PeakType::Count); ++i)
      if (k.str() == peak_type_name(static_cast<PeakType>(i))) {
        hw.peak[i] = positive(toml::node_view<toml::node>(const_cast<toml::node*>(&v)),
                              "peak_tflops." + std::string(k.str())) *
                     1e12;
        found = true;
      }
    if (!found)
      throw UsageError(path + ": unknown type 'peak_tflops." + std::string(k.str()) +
                       "' (float32, tf32, float16, bfloat16, float8, int8)");
  }
  if (hw.peak[0] <= 0) throw UsageError(path + ": 'peak_tflops.float32' is required");
  hw.sources.push_back("user file " + path);
  return hw;
}

Hardware hardware_of(const std::string& name, const std::string& file) {
  if (!name.empty() && !file.empty()) throw UsageError("--hardware or --hardware-file, not both");
  return name.empty() ? load_hardware_file(file) : find_hardware(name);
}

}  // namespace flopwise
