// src/import/onnx_wire.h — reading ONNX's protobuf messages in place, shared by the importer's files: the
// wire walker's primitives (onnx_wire.cc), the main graph and its nodes as bytes (onnx_wire.cc),
// initializers' metadata without their weight bytes (onnx_tensors.cc) and value types (onnx_types.cc).
#pragma once

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flopwise/ir.h"
#include "flopwise_onnx.pb.h"  // generated from ONNX's onnx.proto, package flopwise.onnx (CMakeLists.txt)

namespace flopwise::onnx_detail {

namespace pb = google::protobuf;
using WFL = pb::internal::WireFormatLite;

// Metadata of an initializer: everything but the weight bytes (small tensors keep contents).
struct TensorMeta {
  std::string name;
  DType dtype = DType::Undefined;
  std::vector<int64_t> dims;
  bool external = false;
  std::optional<ConstData> data;
};

struct GraphParts {
  std::string name;
  std::vector<onnx::NodeProto> nodes;  // a subgraph's (parsed with its attribute)
  // The main graph's nodes as their bytes in the mapped file, each parsed only when it is imported: a
  // parsed copy of every node at once would double the import's peak memory on a large graph.
  std::vector<std::pair<const uint8_t*, int>> node_bytes;
  std::vector<TensorMeta> initializers;
  std::vector<onnx::ValueInfoProto> inputs, outputs, value_info;
};

// Initializers whose contents the shape pass may need are parsed fully: integer tensors up to
// limits().max_const_elements (shape constants) and float tensors up to kMaxFloatInitElements (scales,
// epsilons, small masks). Every other initializer is read for its name, type and dims only: its bytes are
// skipped without being touched, so an inline-weights file costs no more memory than its graph-only twin.
constexpr int64_t kMaxFloatInitElements = 64;

// Throws the InputError of a file that is not a valid ONNX model: "PATH: not a valid ONNX model (WHAT)".
[[noreturn]] void malformed(const std::string& path, const std::string& what);

// The file being read: its path, and its bytes, so that an error can name the byte where a message breaks
// (bytes that are not the file's, a message written back by the importer, are named without one).
struct Source {
  std::string path;
  const uint8_t* begin = nullptr;
  const uint8_t* end = nullptr;

  // "cannot parse WHAT at byte N; ...": at, where the broken field or message starts.
  [[noreturn]] void bad(const char* what, const uint8_t* at) const {
    std::string where;
    if (at >= begin && at < end) where = " at byte " + std::to_string(at - begin);
    malformed(path, std::string("cannot parse ") + what + where + "; the file is truncated or corrupt");
  }
};

// ---- The wire, read as protobuf's own parser reads it ----
// The walkers below read messages in place with CodedInputStream, which alone is more lenient than the parser
// behind ParseFromArray (protobuf's ParseContext, the one ONNX's own tools use): it takes a 0 byte or a cut
// tag at a message's very end for that end, reads tags and lengths of 6 to 10 bytes, and looks inside no
// field it skips. A file that parser rejects is rejected here too, naming the byte where it breaks: next_tag
// and read_len read tags and lengths by its rules, skip_field skips an unknown field as it does (groups
// included, to its depth limit), and the walkers check the fields they skip whose contents it would parse
// (a message through its generated class, or by its fields when they are all scalars and strings; a packed
// list by its length or varints). Linear in the bytes; only packed varint lists are read (rare: exporters
// write raw_data, whose bytes are never touched).

// Messages and groups nest at most this deep below the model (protobuf's default recursion limit); depth
// arguments count from the ModelProto (0): its graph 1, a node 2, an attribute 3.
constexpr int kMaxDepth = 100;

// A message of a known type from its bytes, through its generated class, at nesting `depth`; when it does not
// parse, the error names `at` (its field's tag), or its first byte.
template <class Msg>
void parse_sub(const Source& src, const uint8_t* p, int len, Msg* m, const char* what, int depth,
               const uint8_t* at = nullptr) {
  // Each level of nesting takes 2 bytes at least (a tag and a length): a message shorter than twice the depth
  // left cannot pass it, and is parsed the faster way (ParseFromArray allows 100 from its own level).
  bool ok;
  if (len < 2 * (kMaxDepth - depth)) {
    ok = m->ParseFromArray(p, len);
  } else {
    pb::io::CodedInputStream in(p, len);
    in.SetRecursionLimit(kMaxDepth - depth);
    ok = m->ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
  }
  if (!ok) src.bad(what, at ? at : p);
}

// The next tag of a message whose bytes `base` end at `size`, `at` being the stream's position: 0 at that
// end. False for a tag protobuf's parser rejects: cut, longer than 5 bytes, of field number 0, of wire type 6
// or 7, or ending a group outside one (in_group: an end-group tag is the caller's to match).
inline bool next_tag(pb::io::CodedInputStream& in, const uint8_t* base, int at, int size, uint32_t* tag,
                     bool in_group = false) {
  if (at == size) {
    *tag = 0;
    return true;
  }
  const uint32_t t = in.ReadTag();
  *tag = t;
  const uint32_t wt = t & 7;
  if (t < 8 || wt >= 6 || (wt == 4 && !in_group)) return false;  // field 0 (a 0 byte: a failed read too)
  return base[at] < 0x80 || in.CurrentPosition() - at <= 5;      // a 1-byte tag, or one of at most 5
}

// Reads a length-delimited field's bounds as protobuf's parser does (a length of at most 5 bytes, under
// 2 GiB); false when it is malformed or runs past the message's end, `size`.
inline bool read_len(pb::io::CodedInputStream& in, const uint8_t* base, int size, const uint8_t** p,
                     int* len) {
  const int at = in.CurrentPosition();
  const uint8_t* q = base + at;
  const int avail = size - at;
  uint32_t n = 0;
  int k = 0;  // the length's bytes, less one
  for (;; ++k) {
    if (k == 5 || k >= avail) return false;
    n |= static_cast<uint32_t>(q[k] & 0x7f) << (7 * k);
    if (!(q[k] & 0x80)) break;
  }
  if (k == 4 && q[4] >= 8) return false;
  const int pos = at + k + 1;
  if (static_cast<int64_t>(pos) + n > size) return false;
  *p = base + pos;
  *len = static_cast<int>(n);
  return in.Skip(k + 1 + static_cast<int>(n));
}

// Skips an unknown field (or a known one this walker does not read) as protobuf's parser does: false where
// that parser would fail. A group's fields are skipped to its matching end tag, `depth` being the nesting of
// the message that holds it.
bool skip_field(pb::io::CodedInputStream& in, const uint8_t* base, int size, uint32_t tag, int depth);

// Whether the bytes of a message whose known fields are all scalars or strings (no UTF-8 check in proto2)
// parse, at nesting `depth`: for such a message, whether its fields are well formed. Cheaper than its
// generated class, which would copy the strings.
bool plain_message_ok(const uint8_t* p, int len, int depth);

// Whether a packed list of varints fills its bytes as protobuf's parser reads them: none longer than 10
// bytes, none cut at the end.
bool packed_varints_ok(const uint8_t* p, int len);

// The bytes of a length-delimited field as text (names are views into the mapped file, not copies).
inline std::string_view view_of(const uint8_t* p, int len) {
  return {reinterpret_cast<const char*>(p), static_cast<size_t>(len)};
}

// ---- Tensors (onnx_tensors.cc) ----

// An initializer's or attribute's metadata from its generated class, with its contents when it is small.
TensorMeta meta_from_proto(const onnx::TensorProto& t);

// A TensorProto from its bytes, at nesting `depth`: metadata, and contents when it is not external and holds
// at most limits().max_const_elements elements (float ones: at most max_float_elements). Contents given as
// raw_data (what exporters write) are read in place; others through the generated class. A malformed
// tensor throws: an initializer's, naming it; another's (an attribute's), as a node that does not parse.
TensorMeta tensor_of_bytes(const Source& src, const uint8_t* p, int len, int64_t max_float_elements,
                           bool initializer, int depth);

// ---- Graphs and nodes (onnx_wire.cc) ----

// Weight bytes are skipped, never read; but reading each initializer's header maps the pages around it
// (the kernel's fault-around maps up to 64 KiB of cached file pages per fault), so walking an inline-weights
// file would map most of its weights. Every 16 MiB of progress, the pages already walked are dropped from
// the process (MADV_DONTNEED on a private read-only mapping: touched again, they are re-read from the page
// cache), so peak memory does not grow with the weights.
struct PageReleaser {
  const uint8_t* map = nullptr;
  size_t released = 0;
  void upto(const uint8_t* p);
};

// The main graph (a GraphProto at nesting 1) from its bytes: nodes kept as bytes, the rest read or parsed.
GraphParts walk_graph(const Source& src, const uint8_t* base, int size, PageReleaser* pages);

// A subgraph's parts from its parsed message (nodes kept as messages).
GraphParts parts_from_proto(const onnx::GraphProto& gp);

// A NodeProto read in place from its bytes: views into them, no message objects. Like protobuf's own
// parser: the last occurrence of a singular field wins, a field of another wire type than its own is
// skipped as unknown, and anything malformed fails the node. The attributes stay bytes, decoded one by
// one by the importer (GraphImporter::import_attr_bytes).
struct WireNode {
  const uint8_t* bytes = nullptr;  // the whole NodeProto (a function call parses it as a message)
  int size = 0;
  std::string_view name, op_type, domain;
  std::vector<std::string_view> inputs, outputs;
  std::vector<std::pair<const uint8_t*, int>> attributes;  // AttributeProto bytes
  std::vector<std::pair<const uint8_t*, int>> metadata;    // metadata_props: StringStringEntryProto bytes
};

// NodeProto: input 1, output 2, name 3, op_type 4, attribute 5, domain 7, metadata_props 9 (newer than
// the onnx.proto generated here, so a parsed message keeps it in its unknown fields). False when a field is
// malformed (protobuf's parser rules: see next_tag), *bad_at then where it starts; its attributes are checked
// as they are imported.
bool read_node(const uint8_t* base, int size, WireNode* n, const uint8_t** bad_at);

// metadata_props as a map (StringStringEntryProto {key = 1, value = 2}; an entry that does not parse is
// left out).
std::map<std::string, std::string> node_metadata(const WireNode& n);

// ---- Value types (onnx_types.cc) ----

// A value's element type and shape as its ValueInfoProto declares them (unknown where it does not).
std::pair<DType, Shape> type_of(const onnx::ValueInfoProto& vi);

}  // namespace flopwise::onnx_detail
