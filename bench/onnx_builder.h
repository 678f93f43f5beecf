// bench/onnx_builder.h — a few lines that write graph-only ONNX protos: float weights as external data
// that is never written (flopwise reads the graph only), int64 constants, nodes with int/ints attributes,
// typed graph inputs/outputs. Used by bench/gen_graph.cc and by tests that need synthetic models.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace flopwise_bench {

struct Builder {
  onnx::GraphProto* g;
  int64_t tmp = 0;
  bool inline_weights = false;  // weights' bytes in the file (raw_data, zeros) instead of external data

  std::string fresh() { return "t" + std::to_string(tmp++); }

  // A float weight of `dims`, its bytes "stored" in weights.bin (never written: graph-only).
  std::string weight(const std::string& name, std::vector<int64_t> dims) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) t->add_dims(d), n *= d;
    if (inline_weights) {
      t->set_raw_data(std::string(static_cast<size_t>(4 * n), '\0'));
      return name;
    }
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto kv = [&](const char* k, const std::string& v) {
      auto* e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    kv("location", "weights.bin");
    kv("offset", "0");
    kv("length", std::to_string(4 * n));
    return name;
  }

  std::string ints(const std::string& name, std::vector<int64_t> v) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(v.size()));
    for (int64_t x : v) t->add_int64_data(x);
    return name;
  }

  std::string node(const std::string& name, const std::string& op, std::vector<std::string> in,
                   std::vector<std::pair<std::string, int64_t>> int_attrs = {},
                   std::vector<std::pair<std::string, std::vector<int64_t>>> ints_attrs = {}) {
    auto* n = g->add_node();
    n->set_name(name);
    n->set_op_type(op);
    for (auto& i : in) n->add_input(i);
    std::string out = fresh();
    n->add_output(out);
    for (auto& [k, v] : int_attrs) {
      auto* a = n->add_attribute();
      a->set_name(k);
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(v);
    }
    for (auto& [k, v] : ints_attrs) {
      auto* a = n->add_attribute();
      a->set_name(k);
      a->set_type(onnx::AttributeProto::INTS);
      for (int64_t x : v) a->add_ints(x);
    }
    return out;
  }
};

inline void add_io(onnx::GraphProto* g, const std::string& name, std::vector<std::string> dims, bool output) {
  auto* v = output ? g->add_output() : g->add_input();
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (auto& d : dims) {
    auto* dim = tt->mutable_shape()->add_dim();
    if (d[0] >= '0' && d[0] <= '9')
      dim->set_dim_value(std::atoll(d.c_str()));
    else
      dim->set_dim_param(d);
  }
}

}  // namespace flopwise_bench
