// tests/coverage.h — which registered ops some test exercised against an independent expectation
// (a table row through run_op, or a passing ONNX backend case). tests/test_zz_completeness.cc
// (named to run last) checks that every op in the registry is covered.
#pragma once

#include <set>
#include <string>

namespace fwtest {

inline std::set<std::string>& covered_ops() {
  static std::set<std::string> s;
  return s;
}
// key: "Op" for the default domain, "domain::Op" otherwise.
inline void record_covered(const std::string& domain, const std::string& op) {
  covered_ops().insert(domain.empty() || domain == "ai.onnx" ? op : domain + "::" + op);
}

}  // namespace fwtest
