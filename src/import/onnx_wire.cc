// src/import/onnx_wire.cc — the protobuf wire walker (onnx_wire.h): fields skipped and checked as protobuf's
// own parser checks them, the main graph walked in place (nodes kept as their bytes, initializers read for
// their metadata), and a node read from its bytes.
#include "onnx_wire.h"

#include <sys/mman.h>
#include <unistd.h>

#include "flopwise/errors.h"

namespace flopwise::onnx_detail {

[[noreturn]] void malformed(const std::string& path, const std::string& what) {
  throw InputError(path + ": not a valid ONNX model (" + what + ")");
}

bool skip_field(pb::io::CodedInputStream& in, const uint8_t* base, int size, uint32_t tag, int depth) {
  switch (WFL::GetTagWireType(tag)) {
    case WFL::WIRETYPE_VARINT: {
      uint64_t v;
      return in.ReadVarint64(&v);
    }
    case WFL::WIRETYPE_FIXED64:
      return in.Skip(8);
    case WFL::WIRETYPE_FIXED32:
      return in.Skip(4);
    case WFL::WIRETYPE_LENGTH_DELIMITED: {
      const uint8_t* p;
      int len;
      return read_len(in, base, size, &p, &len);
    }
    case WFL::WIRETYPE_START_GROUP: {
      if (depth + 1 > kMaxDepth) return false;
      for (;;) {
        uint32_t t;
        if (!next_tag(in, base, in.CurrentPosition(), size, &t, true) || t == 0) return false;
        if (WFL::GetTagWireType(t) == WFL::WIRETYPE_END_GROUP)
          return WFL::GetTagFieldNumber(t) == WFL::GetTagFieldNumber(tag);
        if (!skip_field(in, base, size, t, depth + 1)) return false;
      }
    }
    default:
      return false;
  }
}

bool plain_message_ok(const uint8_t* p, int len, int depth) {
  pb::io::CodedInputStream in(p, len);
  for (;;) {
    uint32_t tag;
    if (!next_tag(in, p, in.CurrentPosition(), len, &tag)) return false;
    if (tag == 0) return true;
    if (!skip_field(in, p, len, tag, depth)) return false;
  }
}

bool packed_varints_ok(const uint8_t* p, int len) {
  int run = 0;
  for (int i = 0; i < len; ++i)
    if (p[i] & 0x80) {
      if (++run == 10) return false;
    } else {
      run = 0;
    }
  return run == 0;
}

void PageReleaser::upto(const uint8_t* p) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t off = static_cast<size_t>(p - map) & ~(page - 1);
  if (off < released + (size_t{16} << 20)) return;
  madvise(const_cast<uint8_t*>(map) + released, off - released, MADV_DONTNEED);
  released = off;
}

GraphParts walk_graph(const Source& src, const uint8_t* base, int size, PageReleaser* pages) {
  GraphParts g;
  pb::io::CodedInputStream in(base, size);
  in.SetTotalBytesLimit(INT32_MAX);
  for (;;) {
    const int at = in.CurrentPosition();
    uint32_t tag;
    if (!next_tag(in, base, at, size, &tag)) src.bad("the graph", base + at);
    if (tag == 0) break;
    int field = WFL::GetTagFieldNumber(tag);
    bool len_delim = WFL::GetTagWireType(tag) == WFL::WIRETYPE_LENGTH_DELIMITED;
    const uint8_t* p;
    int len;
    if (len_delim && (field == 1 || field == 2 || field == 5 || field == 11 || field == 12 || field == 13 ||
                      field == 14 || field == 15)) {
      if (!read_len(in, base, size, &p, &len)) src.bad("the graph", base + at);
      switch (field) {
        case 1:
          g.node_bytes.emplace_back(p, len);
          break;
        case 2:
          g.name.assign(reinterpret_cast<const char*>(p), len);
          break;
        case 5:
          g.initializers.push_back(tensor_of_bytes(src, p, len, kMaxFloatInitElements, true, 2));
          if (pages) pages->upto(p + len);
          break;
        case 11:
          parse_sub(src, p, len, &g.inputs.emplace_back(), "a graph input", 2, base + at);
          break;
        case 12:
          parse_sub(src, p, len, &g.outputs.emplace_back(), "a graph output", 2, base + at);
          break;
        case 13:
          parse_sub(src, p, len, &g.value_info.emplace_back(), "a value_info", 2, base + at);
          break;
        case 14: {  // checked only: protobuf would parse it
          onnx::TensorAnnotation a;
          parse_sub(src, p, len, &a, "a quantization annotation", 2, base + at);
          break;
        }
        case 15: {
          onnx::SparseTensorProto s;
          parse_sub(src, p, len, &s, "a sparse initializer", 2, base + at);
          TensorMeta m = meta_from_proto(s.values());
          m.name = s.values().name();
          m.dims.assign(s.dims().begin(), s.dims().end());
          m.data.reset();
          g.initializers.push_back(std::move(m));
          break;
        }
      }
    } else if (!skip_field(in, base, size, tag, 1)) {
      src.bad("the graph", base + at);
    }
  }
  return g;
}

GraphParts parts_from_proto(const onnx::GraphProto& gp) {
  GraphParts g;
  g.name = gp.name();
  g.nodes.assign(gp.node().begin(), gp.node().end());
  for (const auto& t : gp.initializer()) g.initializers.push_back(meta_from_proto(t));
  for (const auto& s : gp.sparse_initializer()) {
    TensorMeta m = meta_from_proto(s.values());
    m.name = s.values().name();
    m.dims.assign(s.dims().begin(), s.dims().end());
    m.data.reset();
    g.initializers.push_back(std::move(m));
  }
  g.inputs.assign(gp.input().begin(), gp.input().end());
  g.outputs.assign(gp.output().begin(), gp.output().end());
  g.value_info.assign(gp.value_info().begin(), gp.value_info().end());
  return g;
}

bool read_node(const uint8_t* base, int size, WireNode* n, const uint8_t** bad_at) {
  n->bytes = base;
  n->size = size;
  n->name = n->op_type = n->domain = {};
  n->inputs.clear();
  n->outputs.clear();
  n->attributes.clear();
  n->metadata.clear();
  pb::io::CodedInputStream in(base, size);
  in.SetTotalBytesLimit(INT32_MAX);
  for (;;) {
    const int at = in.CurrentPosition();
    *bad_at = base + at;
    uint32_t tag;
    if (!next_tag(in, base, at, size, &tag)) return false;
    if (tag == 0) return true;
    const int field = WFL::GetTagFieldNumber(tag);
    if (WFL::GetTagWireType(tag) == WFL::WIRETYPE_LENGTH_DELIMITED && field >= 1 && field <= 9 &&
        field != 6 && field != 8) {
      const uint8_t* p;
      int len;
      if (!read_len(in, base, size, &p, &len)) return false;
      switch (field) {
        case 1:
          n->inputs.push_back(view_of(p, len));
          break;
        case 2:
          n->outputs.push_back(view_of(p, len));
          break;
        case 3:
          n->name = view_of(p, len);
          break;
        case 4:
          n->op_type = view_of(p, len);
          break;
        case 5:
          n->attributes.emplace_back(p, len);
          break;
        case 7:
          n->domain = view_of(p, len);
          break;
        case 9:
          n->metadata.emplace_back(p, len);
          break;
      }
    } else if (!skip_field(in, base, size, tag, 2)) {
      return false;
    }
  }
}

std::map<std::string, std::string> node_metadata(const WireNode& n) {
  std::map<std::string, std::string> out;
  for (const auto& [p, len] : n.metadata) {
    onnx::StringStringEntryProto e;
    if (e.ParseFromArray(p, len)) out[e.key()] = e.value();
  }
  return out;
}

}  // namespace flopwise::onnx_detail
