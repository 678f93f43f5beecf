// src/import/onnx_tensors.cc — a TensorProto's metadata and small contents (onnx_wire.h): read in place from
// its bytes without copying its data fields, or from its generated class; weight bytes are never touched.
#include <cstring>

#include "onnx_wire.h"

namespace flopwise::onnx_detail {

namespace {

// Contents given as raw_data (little-endian elements): a supported element type whose bytes match numel.
std::optional<ConstData> raw_contents(DType dt, int64_t numel, std::string_view raw) {
  ConstData d;
  auto from_raw = [&](auto sample) {
    using T = decltype(sample);
    if (raw.size() != static_cast<size_t>(numel) * sizeof(T)) return false;
    if constexpr (std::is_floating_point_v<T>)
      d.floats.reserve(static_cast<size_t>(numel));
    else
      d.ints.reserve(static_cast<size_t>(numel));
    for (int64_t i = 0; i < numel; ++i) {
      T v;
      std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
      if constexpr (std::is_floating_point_v<T>)
        d.floats.push_back(static_cast<double>(v));
      else
        d.ints.push_back(Dim(static_cast<int64_t>(v)));
    }
    return true;
  };
  bool ok = false;
  switch (dt) {
    case DType::Int64:
      ok = from_raw(int64_t{});
      break;
    case DType::Int32:
      ok = from_raw(int32_t{});
      break;
    case DType::Int16:
      ok = from_raw(int16_t{});
      break;
    case DType::Int8:
      ok = from_raw(int8_t{});
      break;
    case DType::UInt16:
      ok = from_raw(uint16_t{});
      break;
    case DType::UInt8:
    case DType::Bool:
      ok = from_raw(uint8_t{});
      break;
    case DType::UInt32:
      ok = from_raw(uint32_t{});
      break;
    case DType::UInt64:
      ok = from_raw(uint64_t{});
      break;
    case DType::Float32:
      d.is_float = true;
      ok = from_raw(float{});
      break;
    case DType::Float64:
      d.is_float = true;
      ok = from_raw(double{});
      break;
    default:
      return std::nullopt;  // float16/bfloat16/string contents are not needed for shapes
  }
  if (!ok || static_cast<int64_t>(d.size()) != numel) return std::nullopt;
  return d;
}

std::optional<ConstData> contents(const onnx::TensorProto& t, int64_t numel) {
  if (numel < 0 || numel > limits().max_const_elements) return std::nullopt;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  auto dt = static_cast<DType>(t.data_type());
  if (!t.raw_data().empty()) return raw_contents(dt, numel, t.raw_data());
  ConstData d;
  auto push_int = [&](int64_t v) { d.ints.push_back(Dim(v)); };
  switch (dt) {
    case DType::Int64:
      for (auto v : t.int64_data()) push_int(v);
      break;
    case DType::Int32:
    case DType::Int16:
    case DType::Int8:
    case DType::UInt8:
    case DType::UInt16:
    case DType::Bool:
      for (auto v : t.int32_data()) push_int(v);
      break;
    case DType::UInt32:
    case DType::UInt64:
      for (auto v : t.uint64_data()) push_int(static_cast<int64_t>(v));
      break;
    case DType::Float32:
      d.is_float = true;
      for (auto v : t.float_data()) d.floats.push_back(v);
      break;
    case DType::Float64:
      d.is_float = true;
      for (auto v : t.double_data()) d.floats.push_back(v);
      break;
    default:
      return std::nullopt;
  }
  if (static_cast<int64_t>(d.size()) != numel) return std::nullopt;
  return d;
}

int64_t checked_numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (auto d : dims)
    if (d < 0 || !checked_mul(n, d, &n)) return -1;
  return n;
}

// Where a TensorProto's contents are, as walk_tensor saw them.
struct TensorData {
  std::string_view raw;     // raw_data (the last one, as protobuf keeps)
  bool other_data = false;  // typed data fields or segments: read through the generated class
};

// Reads a TensorProto's metadata, at nesting `depth`, without copying its data fields; the fields it skips
// are checked as protobuf's parser checks them. A malformed tensor throws, as `what`.
void walk_tensor(const Source& src, const uint8_t* p, int size, int depth, const char* what, TensorMeta* m,
                 TensorData* data) {
  pb::io::CodedInputStream in(p, size);
  in.SetTotalBytesLimit(INT32_MAX);
  for (;;) {
    const int at = in.CurrentPosition();
    uint32_t tag;
    if (!next_tag(in, p, at, size, &tag)) src.bad(what, p + at);
    if (tag == 0) return;
    const int field = WFL::GetTagFieldNumber(tag);
    const auto wt = WFL::GetTagWireType(tag);
    const bool len_delim = wt == WFL::WIRETYPE_LENGTH_DELIMITED;
    const uint8_t* q = nullptr;  // set by read_len; initialised for -Wmaybe-uninitialized
    int len;
    uint64_t v;
    bool ok = true;
    if (data && (field == 3 || (field >= 4 && field <= 7) || field == 10 || field == 11))
      data->other_data = true;
    if (field == 1 && wt == WFL::WIRETYPE_VARINT) {
      ok = in.ReadVarint64(&v);
      m->dims.push_back(static_cast<int64_t>(v));
    } else if (field == 1 && len_delim) {  // packed
      ok = read_len(in, p, size, &q, &len);
      pb::io::CodedInputStream packed(q, ok ? len : 0);
      while (ok && packed.CurrentPosition() < len) {
        ok = packed.ReadVarint64(&v);
        m->dims.push_back(static_cast<int64_t>(v));
      }
    } else if (field == 2 && wt == WFL::WIRETYPE_VARINT) {
      ok = in.ReadVarint64(&v);
      m->dtype = static_cast<DType>(v);
    } else if (field == 8 && len_delim) {
      ok = read_len(in, p, size, &q, &len);
      if (ok) m->name.assign(reinterpret_cast<const char*>(q), static_cast<size_t>(len));
    } else if (field == 14 && wt == WFL::WIRETYPE_VARINT) {
      ok = in.ReadVarint64(&v);
      // An enum: a value outside it is an unknown field to protobuf, and ignored.
      if (const auto loc = static_cast<int32_t>(v);
          loc == onnx::TensorProto::DEFAULT || loc == onnx::TensorProto::EXTERNAL)
        m->external = loc == onnx::TensorProto::EXTERNAL;
    } else if (len_delim && (field == 9 || field == 3 || field == 13 || field == 4 || field == 10 ||
                             field == 5 || field == 7 || field == 11)) {
      ok = read_len(in, p, size, &q, &len);
      if (!ok) src.bad(what, p + at);
      switch (field) {
        case 9:  // raw_data
          if (data) data->raw = view_of(q, len);
          break;
        case 3:   // segment: two int64 fields
        case 13:  // external_data: a StringStringEntryProto, two strings
          ok = plain_message_ok(q, len, depth + 1);
          break;
        case 4:  // float_data, packed
          ok = len % 4 == 0;
          break;
        case 10:  // double_data, packed
          ok = len % 8 == 0;
          break;
        default:  // int32_data, int64_data, uint64_data, packed
          ok = packed_varints_ok(q, len);
      }
    } else {
      ok = skip_field(in, p, size, tag, depth);
    }
    if (!ok) src.bad(what, p + at);
  }
}

}  // namespace

TensorMeta meta_from_proto(const onnx::TensorProto& t) {
  TensorMeta m;
  m.name = t.name();
  m.dtype = static_cast<DType>(t.data_type());
  m.dims.assign(t.dims().begin(), t.dims().end());
  m.external = t.data_location() == onnx::TensorProto::EXTERNAL;
  m.data = contents(t, checked_numel(m.dims));
  return m;
}

TensorMeta tensor_of_bytes(const Source& src, const uint8_t* p, int len, int64_t max_float_elements,
                           bool initializer, int depth) {
  const char* what = initializer ? "an initializer" : "a node";
  TensorMeta m;
  TensorData data;
  walk_tensor(src, p, len, depth, what, &m, &data);
  const int64_t numel = checked_numel(m.dims);
  if (m.external || numel < 0 ||
      numel > (is_float(m.dtype) ? max_float_elements : static_cast<int64_t>(limits().max_const_elements)))
    return m;
  if (!data.other_data && !data.raw.empty()) {
    if (numel <= limits().max_const_elements) m.data = raw_contents(m.dtype, numel, data.raw);
    return m;
  }
  onnx::TensorProto t;
  parse_sub(src, p, len, &t, what, depth);
  return meta_from_proto(t);
}

}  // namespace flopwise::onnx_detail
