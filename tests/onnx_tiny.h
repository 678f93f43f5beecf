// tests/onnx_tiny.h — small ONNX models built by hand in tests: a model, its inputs, its nodes.
#pragma once

#include <onnx/onnx_pb.h>

#include <cctype>
#include <string>
#include <vector>

namespace fwtest {

// An empty model: IR 8, the default domain at `opset`, a graph named "g".
inline onnx::ModelProto tiny_model(int64_t opset = 17) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

// A graph input of `elem` type; each dim a number ("4") or a symbol ("N").
inline void tiny_input(onnx::GraphProto* g, const std::string& name, int elem,
                       const std::vector<std::string>& dims) {
  auto* in = g->add_input();
  in->set_name(name);
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0])))
      shape->add_dim()->set_dim_value(std::stoll(d));
    else
      shape->add_dim()->set_dim_param(d);
  }
}

inline onnx::NodeProto* tiny_node(onnx::GraphProto* g, const std::string& name, const std::string& op,
                                  const std::vector<std::string>& ins, const std::vector<std::string>& outs,
                                  const std::string& domain = "") {
  auto* n = g->add_node();
  n->set_name(name);
  n->set_op_type(op);
  n->set_domain(domain);
  for (const auto& i : ins) n->add_input(i);
  for (const auto& o : outs) n->add_output(o);
  return n;
}

}  // namespace fwtest
