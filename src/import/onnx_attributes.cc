// src/import/onnx_attributes.cc — a node's attributes into the IR (GraphImporter, onnx_graph_importer.h): the
// common kinds decoded from their bytes, the rest (graphs, sparse tensors, untyped old attributes) through
// the generated AttributeProto.
#include <cstring>

#include "flopwise/limits.h"
#include "onnx_graph_importer.h"

namespace flopwise::onnx_detail {

void GraphImporter::import_attr(const onnx::AttributeProto& a, Node& n, Graph& g) {
  Attribute at;
  using A = onnx::AttributeProto;
  switch (a.type()) {
    case A::INT:
      at.kind = Attribute::Kind::Int;
      at.i = a.i();
      break;
    case A::FLOAT:
      at.kind = Attribute::Kind::Float;
      at.f = a.f();
      break;
    case A::STRING:
      at.kind = Attribute::Kind::String;
      at.s = a.s();
      break;
    case A::INTS:
      at.kind = Attribute::Kind::Ints;
      at.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case A::FLOATS:
      at.kind = Attribute::Kind::Floats;
      at.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case A::STRINGS:
      at.kind = Attribute::Kind::Strings;
      at.strings.assign(a.strings().begin(), a.strings().end());
      break;
    case A::TENSOR: {
      at.kind = Attribute::Kind::Tensor;
      TensorMeta m = meta_from_proto(a.t());
      at.tensor.dtype = m.dtype;
      at.tensor.dims = std::move(m.dims);
      at.tensor.data = m.data;
      break;
    }
    case A::SPARSE_TENSOR: {
      at.kind = Attribute::Kind::Tensor;
      at.tensor.dtype = static_cast<DType>(a.sparse_tensor().values().data_type());
      at.tensor.dims.assign(a.sparse_tensor().dims().begin(), a.sparse_tensor().dims().end());
      break;
    }
    case A::GRAPH:
      at.kind = Attribute::Kind::Graph;
      at.graphs.push_back(add_subgraph(a.g(), n, g));
      break;
    case A::GRAPHS:
      at.kind = Attribute::Kind::Graphs;
      for (const auto& sg : a.graphs()) at.graphs.push_back(add_subgraph(sg, n, g));
      break;
    default:
      // Attributes with type unset (very old models) carry the value in one of the fields.
      if (a.has_i()) {
        at.kind = Attribute::Kind::Int;
        at.i = a.i();
      } else if (a.has_f()) {
        at.kind = Attribute::Kind::Float;
        at.f = a.f();
      } else if (a.has_s()) {
        at.kind = Attribute::Kind::String;
        at.s = a.s();
      } else if (a.ints_size()) {
        at.kind = Attribute::Kind::Ints;
        at.ints.assign(a.ints().begin(), a.ints().end());
      } else if (a.floats_size()) {
        at.kind = Attribute::Kind::Floats;
        at.floats.assign(a.floats().begin(), a.floats().end());
      }
      break;
  }
  n.attrs.insert_or_assign(a.name(), std::move(at));
}

// An attribute from its bytes. The kinds nearly every node has (int, float, string, their lists, a
// tensor) are decoded here, with the same last-one-wins rules as protobuf's parser; any other kind, a
// field this decoder does not read, or a repeated tensor field (which protobuf would merge) goes
// through the generated AttributeProto and import_attr.
void GraphImporter::import_attr_bytes(const uint8_t* base, int size, Node& n, Graph& g) {
  using A = onnx::AttributeProto;
  std::string_view name, str;
  int type = A::UNDEFINED;
  float f = 0;
  int64_t i = 0;
  const uint8_t* tensor = nullptr;
  int tensor_len = 0, tensors = 0;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  bool fast = true;
  pb::io::CodedInputStream in(base, size);
  in.SetTotalBytesLimit(INT32_MAX);
  int field_at = 0;  // where the field being read starts
  auto bad = [&] { src_.bad("a node", base + field_at); };
  while (fast) {
    field_at = in.CurrentPosition();
    uint32_t tag;
    if (!next_tag(in, base, field_at, size, &tag)) bad();
    if (tag == 0) break;
    const int field = WFL::GetTagFieldNumber(tag);
    const auto wt = WFL::GetTagWireType(tag);
    const uint8_t* p;
    int len;
    uint64_t v;
    uint32_t bits;
    if (wt == WFL::WIRETYPE_LENGTH_DELIMITED && (field == 1 || field == 4 || field == 5 || field == 13)) {
      if (!read_len(in, base, size, &p, &len)) bad();
      if (field == 1) name = view_of(p, len);
      if (field == 4) str = view_of(p, len);
      if (field == 5) tensor = p, tensor_len = len, ++tensors;
    } else if (field == 20 && wt == WFL::WIRETYPE_VARINT) {
      if (!in.ReadVarint64(&v)) bad();
      // An enum is read as int32; a value outside it is an unknown field to protobuf, and ignored.
      if (const auto t = static_cast<int32_t>(v); t >= 0 && t <= A::TYPE_PROTOS) type = t;
    } else if (field == 3 && wt == WFL::WIRETYPE_VARINT) {
      if (!in.ReadVarint64(&v)) bad();
      i = static_cast<int64_t>(v);
    } else if (field == 2 && wt == WFL::WIRETYPE_FIXED32) {
      if (!in.ReadLittleEndian32(&bits)) bad();
      std::memcpy(&f, &bits, sizeof f);
    } else if (field == 8 && wt == WFL::WIRETYPE_VARINT) {
      if (!in.ReadVarint64(&v)) bad();
      ints.push_back(static_cast<int64_t>(v));
    } else if (field == 8 && wt == WFL::WIRETYPE_LENGTH_DELIMITED) {  // packed
      if (!read_len(in, base, size, &p, &len)) bad();
      pb::io::CodedInputStream packed(p, len);
      while (packed.CurrentPosition() < len) {
        if (!packed.ReadVarint64(&v)) bad();
        ints.push_back(static_cast<int64_t>(v));
      }
    } else if (field == 7 && wt == WFL::WIRETYPE_FIXED32) {
      if (!in.ReadLittleEndian32(&bits)) bad();
      float x;
      std::memcpy(&x, &bits, sizeof x);
      floats.push_back(x);
    } else if (field == 7 && wt == WFL::WIRETYPE_LENGTH_DELIMITED) {  // packed
      if (!read_len(in, base, size, &p, &len) || len % 4 != 0) bad();
      for (int k = 0; k < len; k += 4) {
        float x;
        std::memcpy(&x, p + k, sizeof x);
        floats.push_back(x);
      }
    } else {
      fast = false;  // a field read only by the generated class
    }
  }
  const bool simple = type == A::INT || type == A::FLOAT || type == A::STRING || type == A::INTS ||
                      type == A::FLOATS || type == A::TENSOR;
  if (!fast || !simple || tensors > 1 || (tensor && type != A::TENSOR)) {
    onnx::AttributeProto a;
    parse_sub(src_, base, size, &a, "a node", 3);
    import_attr(a, n, g);
    return;
  }
  Attribute at;
  switch (type) {
    case A::INT:
      at.kind = Attribute::Kind::Int, at.i = i;
      break;
    case A::FLOAT:
      at.kind = Attribute::Kind::Float, at.f = f;
      break;
    case A::STRING:
      at.kind = Attribute::Kind::String, at.s.assign(str);
      break;
    case A::INTS:
      at.kind = Attribute::Kind::Ints, at.ints = std::move(ints);
      break;
    case A::FLOATS:
      at.kind = Attribute::Kind::Floats, at.floats = std::move(floats);
      break;
    default: {  // TENSOR
      at.kind = Attribute::Kind::Tensor;
      // No tensor field at all: an empty tensor's metadata and contents, as the message gives.
      TensorMeta m = tensor ? tensor_of_bytes(src_, tensor, tensor_len, limits().max_const_elements, false, 4)
                            : meta_from_proto(onnx::TensorProto());
      at.tensor.dtype = m.dtype;
      at.tensor.dims = std::move(m.dims);
      at.tensor.data = m.data;
      break;
    }
  }
  n.attrs.insert_or_assign(std::string(name), std::move(at));
}

}  // namespace flopwise::onnx_detail
