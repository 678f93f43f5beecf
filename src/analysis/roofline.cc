// src/analysis/roofline.cc — the roofline on named hardware (flopwise/roofline.h): the device table, per-node
// and per-scope bounds. Its text is src/writers/roofline_text.cc.
#include "flopwise/roofline.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>

#include "flopwise/errors.h"
#include "flopwise/ops.h"

namespace flopwise {

namespace {

struct Row {
  const char* device;
  PeakType type;
  double tflops, gbs, onchip_mb;
  const char* source;
};

const std::vector<Row>& table() {
  static const std::vector<Row> rows = {
#define X(dev, t, tf, bw, mb, src) {dev, PeakType::t, tf, bw, mb, src},
#include "hardware.def"
  };
  return rows;
}

}  // namespace

const char* peak_type_name(PeakType t) {
  switch (t) {
    case PeakType::Float32:
      return "float32";
    case PeakType::TF32:
      return "tf32";
    case PeakType::Float16:
      return "float16";
    case PeakType::BFloat16:
      return "bfloat16";
    case PeakType::Float8:
      return "float8";
    case PeakType::Int8:
      return "int8";
    default:
      return "?";
  }
}

std::vector<std::string> hardware_names() {
  std::vector<std::string> names;
  for (const auto& r : table())
    if (std::find(names.begin(), names.end(), r.device) == names.end()) names.push_back(r.device);
  return names;
}

std::string hardware_names_text() {
  std::string s;
  for (const auto& n : hardware_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

Hardware find_hardware(const std::string& spec) {
  Hardware hw;
  std::string name = spec;
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ":tf32") == 0) {
    hw.tf32 = true;
    name.resize(name.size() - 5);
  }
  hw.name = name;
  for (const auto& r : table()) {
    if (name != r.device) continue;
    hw.peak[static_cast<size_t>(r.type)] = r.tflops * 1e12;
    hw.bandwidth = r.gbs * 1e9;
    hw.onchip_mb = r.onchip_mb;
    hw.sources.push_back(std::string(peak_type_name(r.type)) + ": " + r.source);
  }
  if (hw.bandwidth == 0) {
    throw UsageError("--hardware: no device '" + name + "' in the table (" + hardware_names_text() +
                     "), or give --hardware-file FILE");
  }
  return hw;
}

PeakType node_peak_type(const NodeReport& n, bool tf32) {
  switch (n.mac_dtype) {
    case DType::Float16:
      return PeakType::Float16;
    case DType::BFloat16:
      return PeakType::BFloat16;
    case DType::Int8:
    case DType::UInt8:
      return PeakType::Int8;
    case DType::Float8E4M3FN:
    case DType::Float8E4M3FNUZ:
    case DType::Float8E5M2:
    case DType::Float8E5M2FNUZ:
      return PeakType::Float8;
    case DType::Float32:
      return tf32 ? PeakType::TF32 : PeakType::Float32;
    case DType::Undefined:
      return PeakType::Float32;  // no products: the vector units
    default:
      return PeakType::Count;  // float64 and others: no row
  }
}

PeakType node_peak_type(const NodeReport& n, const Hardware& hw) {
  const bool conv = n.domain.empty() && (n.op == "Conv" || n.op == "ConvTranspose");
  return node_peak_type(n, hw.tf32 || (hw.tf32_conv && conv));
}

double node_bound_seconds(double flops, double bytes, double peak, double bandwidth, bool* compute_bound) {
  const double c = peak > 0 ? flops / peak : 0, m = bandwidth > 0 ? bytes / bandwidth : 0;
  if (compute_bound) *compute_bound = c > m;
  return std::max(c, m);
}

bool node_bound(const NodeReport& n, const Hardware& hw, double* seconds, bool* compute_bound) {
  const Count& f = n.cost.flops;
  const Count& b = n.cost.memory_bytes;
  const PeakType t = node_peak_type(n, hw);
  const double peak = t == PeakType::Count ? 0 : hw.peak[static_cast<size_t>(t)];
  if (!f.known || !b.known || (f.v > 0 && peak <= 0)) return false;
  *seconds = node_bound_seconds(static_cast<double>(f.v), static_cast<double>(b.v), peak, hw.bandwidth,
                                compute_bound);
  return true;
}

namespace {
double peak_of(DType mac_dtype, const Hardware& hw) {
  NodeReport probe;
  probe.mac_dtype = mac_dtype;
  const PeakType t = node_peak_type(probe, hw.tf32);
  return t == PeakType::Count ? 0 : hw.peak[static_cast<size_t>(t)];
}
}  // namespace

bool node_bound(const Report& r, size_t i, const Hardware& hw, NodeBound* out) {
  *out = NodeBound{};
  const NodeReport& n = r.nodes[i];
  auto body = r.body_work.find(i);
  const bool no_work = n.cost.flops.known && n.cost.flops.v == 0;
  if (body == r.body_work.end() || (!body->second && no_work)) {
    bool compute = false;
    if (!node_bound(n, hw, &out->seconds, &compute)) return false;
    out->compute_seconds = compute ? out->seconds : 0;
    out->flops = static_cast<double>(n.cost.flops.v);
    out->bytes = static_cast<double>(n.cost.memory_bytes.v);
    return true;
  }
  if (!body->second) return false;  // its counts are no one body's: which precisions is not known
  for (const BodyWork& w : *body->second) {
    const double peak = peak_of(w.mac_dtype, hw);
    if (!w.flops.known || !w.bytes.known || (w.flops.v > 0 && peak <= 0)) return false;
    bool compute = false;
    const double s = node_bound_seconds(static_cast<double>(w.flops.v), static_cast<double>(w.bytes.v), peak,
                                        hw.bandwidth, &compute);
    out->seconds += s;
    if (compute) out->compute_seconds += s;
    out->flops += static_cast<double>(w.flops.v);
    out->bytes += static_cast<double>(w.bytes.v);
  }
  return true;
}

RooflineReport roofline(const Report& r, const Hardware& hw) {
  RooflineReport rf;
  rf.hw = hw;
  // Scope entries in tree order; each node adds to its scope and the scope's ancestors.
  std::map<std::string, std::pair<size_t, std::string>, std::less<>> index;  // name -> (entry, parent name)
  std::function<void(const ScopeNode&, const std::string&)> walk = [&](const ScopeNode& s,
                                                                       const std::string& parent) {
    index[s.name] = {rf.scopes.size(), parent};
    rf.scopes.push_back(RooflineEntry{s.name});
    for (const auto& c : s.children) walk(*c, s.name);
  };
  if (r.scopes) walk(*r.scopes, "");
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    const NodeReport& n = r.nodes[i];
    NodeBound b;
    if (!node_bound(r, i, hw, &b)) {
      ++rf.unbounded_nodes;
      continue;
    }
    const bool compute = b.compute_bound();
    auto add = [&](RooflineEntry& e) {
      e.flops += b.flops;
      e.bytes += b.bytes;
      e.seconds += b.seconds;
      e.compute_seconds += b.compute_seconds;
      e.memory_seconds += b.seconds - b.compute_seconds;
      ++e.nodes;
      ++(compute ? e.compute_bound : e.memory_bound);
    };
    add(rf.total);
    auto it = index.find(n.scope);
    for (int guard = 0; it != index.end() && guard < 10000; ++guard) {
      add(rf.scopes[it->second.first]);
      if (it->first.empty()) break;
      it = index.find(it->second.second);
    }
  }
  return rf;
}

}  // namespace flopwise
