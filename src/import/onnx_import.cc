// ONNX importer. The model is walked with protobuf's wire-format reader so that large initializers
// are never copied: only their name, dtype and dims are read (raw weight bytes are skipped, external
// data files are never opened). Nodes, value infos and small tensors go through the generated classes.
#include "flopwise/onnx_import.h"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <queue>
#include <set>
#include <string_view>
#include <unordered_map>

#include "flopwise/errors.h"
#include "flopwise_onnx.pb.h"  // generated from ONNX's onnx.proto, package flopwise.onnx (CMakeLists.txt)
#include "onnx_normalize.h"

namespace flopwise {

namespace pb = google::protobuf;
using WFL = pb::internal::WireFormatLite;

namespace {

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
// limits().max_const_elements (shape constants) and float tensors up to kMaxFloatInitElements (scales, epsilons,
// small masks). Every other initializer is read for its name, type and dims only: its bytes are skipped
// without being touched, so an inline-weights file costs no more memory than its graph-only twin.
constexpr int64_t kMaxFloatInitElements = 64;

[[noreturn]] void malformed(const std::string& path, const std::string& what) {
  throw InputError(path + ": not a valid ONNX model (" + what + ")");
}

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

TensorMeta meta_from_proto(const onnx::TensorProto& t) {
  TensorMeta m;
  m.name = t.name();
  m.dtype = static_cast<DType>(t.data_type());
  m.dims.assign(t.dims().begin(), t.dims().end());
  m.external = t.data_location() == onnx::TensorProto::EXTERNAL;
  m.data = contents(t, checked_numel(m.dims));
  return m;
}

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

// Whether the bytes of a message whose known fields are all scalars or strings (no UTF-8 check in proto2)
// parse, at nesting `depth`: for such a message, whether its fields are well formed. Cheaper than its
// generated class, which would copy the strings.
bool plain_message_ok(const uint8_t* p, int len, int depth) {
  pb::io::CodedInputStream in(p, len);
  for (;;) {
    uint32_t tag;
    if (!next_tag(in, p, in.CurrentPosition(), len, &tag)) return false;
    if (tag == 0) return true;
    if (!skip_field(in, p, len, tag, depth)) return false;
  }
}

// Whether a packed list of varints fills its bytes as protobuf's parser reads them: none longer than 10
// bytes, none cut at the end.
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

// The bytes of a length-delimited field as text (names are views into the mapped file, not copies).
std::string_view view_of(const uint8_t* p, int len) {
  return {reinterpret_cast<const char*>(p), static_cast<size_t>(len)};
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
    const uint8_t* q;
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

// A TensorProto from its bytes, at nesting `depth`: metadata, and contents when it is not external and holds
// at most limits().max_const_elements elements (float ones: at most max_float_elements). Contents given as
// raw_data (what exporters write) are read in place; others through the generated class. A malformed
// tensor throws: an initializer's, naming it; another's (an attribute's), as a node that does not parse.
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

// Weight bytes are skipped, never read; but reading each initializer's header maps the pages around it
// (the kernel's fault-around maps up to 64 KiB of cached file pages per fault), so walking an inline-weights
// file would map most of its weights. Every 16 MiB of progress, the pages already walked are dropped from
// the process (MADV_DONTNEED on a private read-only mapping: touched again, they are re-read from the page
// cache), so peak memory does not grow with the weights.
struct PageReleaser {
  const uint8_t* map = nullptr;
  size_t released = 0;
  void upto(const uint8_t* p) {
    static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size_t off = static_cast<size_t>(p - map) & ~(page - 1);
    if (off < released + (size_t{16} << 20)) return;
    madvise(const_cast<uint8_t*>(map) + released, off - released, MADV_DONTNEED);
    released = off;
  }
};

// The main graph (a GraphProto at nesting 1) from its bytes: nodes kept as bytes, the rest read or parsed.
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

// A dim_param: a name ("batch"), or an expression of names and integers as Hugging Face Optimum writes
// them ("past_sequence_length + sequence_length", "past_sequence_length + 1", "2*seq"): operators between
// spaces, '*' also without. Anything else is one name, as written.
Dim dim_of_param(const std::string& p) {
  std::vector<std::string> tok;
  for (size_t i = 0; i < p.size();) {
    if (p[i] == ' ') {
      ++i;
      continue;
    }
    size_t j = p.find(' ', i);
    tok.push_back(p.substr(i, j == std::string::npos ? std::string::npos : j - i));
    i = j == std::string::npos ? p.size() : j;
  }
  if (tok.size() < 3 || tok.size() % 2 == 0) {
    if (tok.size() != 1 || p.find('*') == std::string::npos) return Dim::symbol(p);
  }
  auto ident = [](const std::string& s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    for (char c : s)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
    return true;
  };
  auto product = [&](const std::string& s, Dim* out) {  // a*b*3
    Dim r(1);
    size_t i = 0;
    while (i <= s.size()) {
      size_t j = s.find('*', i);
      std::string f = s.substr(i, j == std::string::npos ? std::string::npos : j - i);
      if (!f.empty() && std::all_of(f.begin(), f.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
          f.size() < 18)
        r = r * Dim(std::stoll(f));
      else if (ident(f))
        r = r * Dim::symbol(f);
      else
        return false;
      if (j == std::string::npos) break;
      i = j + 1;
    }
    *out = r;
    return !r.is_unknown();
  };
  Dim sum;
  if (!product(tok[0], &sum)) return Dim::symbol(p);
  for (size_t k = 1; k + 1 < tok.size(); k += 2) {
    Dim term;
    if ((tok[k] != "+" && tok[k] != "-") || !product(tok[k + 1], &term)) return Dim::symbol(p);
    sum = tok[k] == "+" ? sum + term : sum - term;
  }
  return sum.is_unknown() ? Dim::symbol(p) : sum;
}


std::pair<DType, Shape> type_of(const onnx::ValueInfoProto& vi) {
  // Optional(tensor) carries the tensor's type; a sequence keeps only its element type (the IR has
  // no sequence type: the shape of one element is not the value's shape).
  const onnx::TypeProto* t = vi.has_type() ? &vi.type() : nullptr;
  if (t && t->has_optional_type()) t = &t->optional_type().elem_type();
  if (t && t->has_sequence_type()) {
    const auto& e = t->sequence_type().elem_type();
    return {e.has_tensor_type() ? static_cast<DType>(e.tensor_type().elem_type()) : DType::Undefined,
            Shape()};
  }
  if (!t || !t->has_tensor_type()) return {DType::Undefined, Shape()};
  const auto& tt = t->tensor_type();
  auto dt = static_cast<DType>(tt.elem_type());
  if (!tt.has_shape() || tt.shape().dim_size() > limits().max_rank) return {dt, Shape()};  // past it: unknown rank
  std::vector<Dim> dims;
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value())
      dims.push_back(Dim(d.dim_value()));
    else if (d.has_dim_param() && !d.dim_param().empty())
      dims.push_back(dim_of_param(d.dim_param()));
    else
      dims.push_back(Dim::unknown());
  }
  return {dt, Shape(dims)};
}

// Parses a python-style list of strings as written by torch's exporter metadata: "['', 'layer1']".
std::vector<std::string> parse_str_list(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    char q = s[i];
    if (q != '\'' && q != '"') {
      ++i;
      continue;
    }
    size_t j = s.find(q, i + 1);
    if (j == std::string::npos) break;
    out.push_back(s.substr(i + 1, j - i - 1));
    i = j + 1;
  }
  return out;
}

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

// metadata_props as a map (StringStringEntryProto {key = 1, value = 2}; an entry that does not parse is
// left out, as before).
std::map<std::string, std::string> node_metadata(const WireNode& n) {
  std::map<std::string, std::string> out;
  for (const auto& [p, len] : n.metadata) {
    onnx::StringStringEntryProto e;
    if (e.ParseFromArray(p, len)) out[e.key()] = e.value();
  }
  return out;
}

class GraphImporter {
 public:
  GraphImporter(const std::map<std::string, int64_t>& opsets, const Source& src,
                std::vector<std::string>* warnings)
      : opsets_(opsets), src_(src), path_(src.path), warnings_(warnings) {}

  // Model-local functions (FunctionProto): calls are inlined at import, so their bodies are analysed
  // like any other nodes; the function's name becomes the class of the calling scope.
  void add_function(onnx::FunctionProto f) {
    std::string key = f.domain() + "::" + f.name();
    functions_[key] = std::move(f);
  }

  void import(const GraphParts& parts, Graph& g) {
    g.name = parts.name;
    std::set<std::string> init_names;
    g.reserve_values(parts.initializers.size() + parts.inputs.size());
    for (const auto& t : parts.initializers) {
      int idx = g.add_value(t.name);
      Value& v = g.values[idx];
      v.is_initializer = true;
      v.dtype = t.dtype;
      v.shape = t.dims.size() > static_cast<size_t>(limits().max_rank)
                    ? Shape()
                    : Shape(std::vector<Dim>(t.dims.begin(), t.dims.end()));
      v.data = t.data;
      v.external = t.external;
      init_names.insert(t.name);
    }
    for (const auto& vi : parts.inputs) {
      if (init_names.count(vi.name())) continue;  // IR < 4: initializers are listed as inputs too
      int idx = g.add_value(vi.name());
      Value& v = g.values[idx];
      v.is_input = true;
      std::tie(v.dtype, v.shape) = type_of(vi);
      g.inputs.push_back(idx);
    }
    for (const auto& vi : parts.value_info) {
      int idx = g.add_value(vi.name());
      g.values[idx].declared = type_of(vi);
    }
    g.nodes.reserve(parts.nodes.size() + parts.node_bytes.size());
    // Most nodes have one output; some (Split, LSTM) several.
    const size_t n_nodes = parts.nodes.size() + parts.node_bytes.size();
    g.reserve_values(g.values.size() + n_nodes + n_nodes / 8);
    for (const auto& np : parts.nodes) import_message(np, g, 0);
    WireNode wn;  // its vectors keep their room from node to node
    for (const auto& [p, len] : parts.node_bytes) {
      const uint8_t* bad_at;
      if (!read_node(p, len, &wn, &bad_at)) src_.bad("a node", bad_at);
      import_or_inline(wn, g, 0);
    }
    for (const auto& vi : parts.outputs) {
      int idx = g.find(vi.name());
      if (idx < 0) idx = ref(g, vi.name());
      if (vi.has_type() || !g.values[idx].declared) g.values[idx].declared = type_of(vi);  // value_info's stays
      g.outputs.push_back(idx);
    }
    // Values used before any node of this graph defined them: defined later in the file (an unsorted
    // graph, sorted below) or never.
    // A dangling input is a warning, not an error (README: Graph validation): the readers' shapes stay
    // unknown and their costs are listed as unknown, as after an unsupported op. One line lists them.
    std::string dangling;
    size_t n_dangling = 0;
    for (const auto& [name, idx] : undefined_[&g])
      if (g.values[idx].producer < 0 && !g.values[idx].is_input && !g.values[idx].is_initializer) {
        if (++n_dangling <= 5) dangling += (n_dangling > 1 ? ", '" : "'") + name + "'";
      } else if (g.values[idx].producer >= 0) {
        g.values[idx].is_outer = false;  // this graph's own value after all
      }
    if (n_dangling == 1)
      warnings_->push_back("value " + dangling + " is used but never defined; its shape is unknown");
    else if (n_dangling > 1)
      warnings_->push_back(std::to_string(n_dangling) + " values are used but never defined (" + dangling +
                           (n_dangling > 5 ? ", ..." : "") + "); their shapes are unknown");
    undefined_.erase(&g);
    sort_nodes(g);
  }

  // Nodes in dependency order. Files are meant to be sorted (the checker rejects others), but fp16
  // converters and hand edits write unsorted ones that ONNX Runtime runs: sorted here, stably (nodes
  // keep their file order where the data allows), once, with a warning. A cycle is an error naming it.
  void sort_nodes(Graph& g) {
    const size_t n = g.nodes.size();
    bool sorted = true;
    for (size_t i = 0; i < n && sorted; ++i)
      for (int v : g.nodes[i].inputs)
        if (v >= 0 && g.values[v].producer >= static_cast<int>(i)) sorted = false;
    if (sorted) return;
    std::vector<std::vector<int>> users(n);
    std::vector<int> pending(n, 0);
    for (size_t i = 0; i < n; ++i) {
      std::vector<int> seen;
      for (int v : g.nodes[i].inputs) {
        int p = v >= 0 ? g.values[v].producer : -1;
        if (p < 0 || std::find(seen.begin(), seen.end(), p) != seen.end()) continue;
        seen.push_back(p);
        users[static_cast<size_t>(p)].push_back(static_cast<int>(i));
        ++pending[i];
      }
    }
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (size_t i = 0; i < n; ++i)
      if (pending[i] == 0) ready.push(static_cast<int>(i));
    std::vector<int> order;
    order.reserve(n);
    while (!ready.empty()) {
      int i = ready.top();
      ready.pop();
      order.push_back(i);
      for (int u : users[static_cast<size_t>(i)])
        if (--pending[static_cast<size_t>(u)] == 0) ready.push(u);
    }
    if (order.size() < n) {
      // The nodes left wait on a cycle; those that also feed one are on it: peel off, repeatedly, the
      // left nodes no left node uses.
      std::vector<int> feeds(n, 0);
      for (size_t i = 0; i < n; ++i)
        if (pending[i] > 0)
          for (int u : users[i]) feeds[i] += pending[static_cast<size_t>(u)] > 0;
      std::vector<int> peel;
      for (size_t i = 0; i < n; ++i)
        if (pending[i] > 0 && feeds[i] == 0) peel.push_back(static_cast<int>(i));
      while (!peel.empty()) {
        int i = peel.back();
        peel.pop_back();
        pending[static_cast<size_t>(i)] = 0;
        std::vector<int> seen;  // each producer once, as `users` counts it
        for (int v : g.nodes[static_cast<size_t>(i)].inputs) {
          int p = v >= 0 ? g.values[v].producer : -1;
          if (p < 0 || std::find(seen.begin(), seen.end(), p) != seen.end()) continue;
          seen.push_back(p);
          if (pending[static_cast<size_t>(p)] > 0 && --feeds[static_cast<size_t>(p)] == 0) peel.push_back(p);
        }
      }
      std::string names;
      size_t on = 0;
      for (size_t i = 0; i < n; ++i)
        if (pending[i] > 0 && ++on <= 5) names += (on > 1 ? ", '" : "'") + g.nodes[i].name + "'";
      throw InputError(path_ + ": the graph has a cycle: " + std::to_string(on) + " nodes wait on each other (" +
                       names + (on > 5 ? ", ..." : "") + ")");
    }
    std::vector<Node> nodes;
    nodes.reserve(n);
    std::vector<int> new_index(n);
    for (size_t k = 0; k < n; ++k) {
      new_index[static_cast<size_t>(order[k])] = static_cast<int>(k);
      nodes.push_back(std::move(g.nodes[static_cast<size_t>(order[k])]));
    }
    g.nodes = std::move(nodes);
    for (auto& v : g.values)
      if (v.producer >= 0 && static_cast<size_t>(v.producer) < n) v.producer = new_index[static_cast<size_t>(v.producer)];
    warnings_->push_back(std::string(g.parent ? "a subgraph's" : "the graph's") +
                         " nodes are not in topological order (the ONNX checker rejects that; ONNX Runtime runs "
                         "it): analysed in dependency order");
  }

 private:
  // Index of a value used as an input: defined here, or an outer-scope reference.
  int ref(Graph& g, std::string_view name) {
    int idx = g.find(name);
    if (idx >= 0) return idx;
    idx = g.add_value(name);
    g.values[idx].is_outer = true;
    bool found = false;
    for (const Graph* p = g.parent; p && !found; p = p->parent) found = p->find(name) >= 0;
    if (!found && !g.parent) g.values[idx].is_outer = false;  // dangling in the main graph: stays unknown
    if (!found) undefined_[&g].emplace_back(name, idx);        // unless a later node defines it
    return idx;
  }

  void import_attr(const onnx::AttributeProto& a, Node& n, Graph& g) {
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

  int add_subgraph(const onnx::GraphProto& gp, Node& n, Graph& parent) {
    auto sub = std::make_unique<Graph>();
    sub->parent = &parent;
    import(parts_from_proto(gp), *sub);
    n.subgraphs.push_back(std::move(sub));
    return static_cast<int>(n.subgraphs.size()) - 1;
  }

  // An attribute from its bytes. The kinds nearly every node has (int, float, string, their lists, a
  // tensor) are decoded here, with the same last-one-wins rules as protobuf's parser; any other kind, a
  // field this decoder does not read, or a repeated tensor field (which protobuf would merge) goes
  // through the generated AttributeProto and import_attr, as before.
  void import_attr_bytes(const uint8_t* base, int size, Node& n, Graph& g) {
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
        TensorMeta m = tensor
                           ? tensor_of_bytes(src_, tensor, tensor_len, limits().max_const_elements, false, 4)
                           : meta_from_proto(onnx::TensorProto());
        at.tensor.dtype = m.dtype;
        at.tensor.dims = std::move(m.dims);
        at.tensor.data = m.data;
        break;
      }
    }
    n.attrs.insert_or_assign(std::string(name), std::move(at));
  }

  // A node given as a message (a subgraph's, or one inlined from a function body): through its bytes,
  // the one path every node takes.
  void import_message(const onnx::NodeProto& np, Graph& g, int depth) {
    const std::string bytes = np.SerializeAsString();
    WireNode wn;
    const uint8_t* bad_at;
    if (!read_node(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()), &wn,
                   &bad_at))
      src_.bad("a node", bad_at);
    import_or_inline(wn, g, depth);
  }

  void import_node(const WireNode& np, Graph& g) {
    Node n;
    n.name.assign(np.name);
    n.op.assign(np.op_type);
    if (np.domain != "ai.onnx") n.domain.assign(np.domain);
    auto it = opsets_.find(n.domain);
    n.opset = it == opsets_.end() ? 0 : static_cast<int>(it->second);
    n.inputs.reserve(np.inputs.size());
    n.outputs.reserve(np.outputs.size());
    for (std::string_view in : np.inputs) n.inputs.push_back(in.empty() ? -1 : ref(g, in));
    for (const auto& [p, len] : np.attributes) import_attr_bytes(p, len, n, g);
    n.scope = scope_of_name(n.name);
    if (!np.metadata.empty()) {
      auto meta = node_metadata(np);
      if (auto s = meta.find("pkg.torch.onnx.name_scopes"); s != meta.end()) {
        auto c = meta.find("pkg.torch.onnx.class_hierarchy");
        std::string key = s->second + '\n' + (c == meta.end() ? std::string("\n") : c->second);
        auto [hit, fresh] = scope_of_metadata_.try_emplace(key);
        if (fresh) hit->second = scope_from_metadata(s->second, c == meta.end() ? nullptr : &c->second);
        n.scope = hit->second.first;
        if (c != meta.end()) n.scope_classes = hit->second.second;
      }
    }
    normalize_onnx_node(n, g);
    int node_index = static_cast<int>(g.nodes.size());
    for (std::string_view out : np.outputs) {
      if (out.empty()) {
        n.outputs.push_back(-1);
        continue;
      }
      int idx = g.add_value(out);
      // Each value has one definition (ONNX graphs are SSA): a second writer would leave every reader
      // with one of two shapes, so two nodes writing one value, or a node overwriting an input or weight,
      // is refused.
      const Value& prev = g.values[idx];
      if (prev.producer >= 0 || prev.is_input || prev.is_initializer) {
        const std::string first = prev.producer == node_index ? std::string("the same node twice")
                                  : prev.producer >= 0 ? "node '" + g.nodes[static_cast<size_t>(prev.producer)].name + "'"
                                  : prev.is_input      ? std::string("a graph input")
                                                       : std::string("an initializer");
        throw InputError(path_ + ": value '" + std::string(out) + "' is written by node '" + n.name +
                         "' and by " + first + " (a value has one definition)");
      }
      g.values[idx].producer = node_index;
      g.values[idx].is_outer = false;
      n.outputs.push_back(idx);
    }
    g.nodes.push_back(std::move(n));
  }

  // The scope levels of a node named "/a/a.0/conv/Conv": they depend on the name's directory only, so
  // the nodes of one module share one list (interned by directory).
  StringList scope_of_name(const std::string& name) {
    size_t slash = name.rfind('/');
    if (name.empty() || name[0] != '/' || slash == 0) return {};
    std::string_view dir(name.data(), slash);
    if (dir == last_dir_) return last_scope_;
    last_dir_.assign(dir);
    auto [it, fresh] = scope_of_dir_.try_emplace(last_dir_);
    if (fresh) it->second = scope_from_node_name(name);
    last_scope_ = it->second;
    return last_scope_;
  }

  // Scope levels and classes from torch.onnx's node metadata (name_scopes: each level's attribute name;
  // class_hierarchy: the root's class, then each level's).
  static std::pair<StringList, StringList> scope_from_metadata(const std::string& name_scopes,
                                                               const std::string* class_hierarchy) {
    auto names = parse_str_list(name_scopes);
    std::vector<std::string> scope, classes;
    std::string path;
    for (const auto& part : names) {
      if (part.empty()) continue;
      if (scope.size() > static_cast<size_t>(limits().max_scope_depth)) break;  // see scope_from_node_name
      // torch writes each level's attribute name; join into dotted paths.
      path = path.empty() ? part : path + "." + part;
      scope.push_back(path);
    }
    if (class_hierarchy) {
      auto qualified = parse_str_list(*class_hierarchy);
      // The first class is the root module; scope levels follow.
      if (!qualified.empty() && qualified.size() == names.size()) qualified.erase(qualified.begin());
      for (auto& cls : qualified) {
        auto dot = cls.rfind('.');
        classes.push_back(dot == std::string::npos ? cls : cls.substr(dot + 1));
      }
      classes.resize(scope.size());
    }
    return {std::move(scope), std::move(classes)};
  }

  // The nodes that inlining a call of function `key` adds, as inlined_nodes_ counts them (its body's, and
  // those of the calls in it), saturated far past any bound; -1 when unknown: the calls recurse or nest past
  // 32, which inlining reports itself. Each function is counted once (memoised): linear in the bodies.
  int64_t inlined_size(const std::string& key, int depth) {
    if (depth > 32) return -1;
    auto [memo, fresh] = inlined_size_.try_emplace(key, -2);  // -2: being counted
    if (!fresh) return memo->second == -2 ? -1 : memo->second;
    const onnx::FunctionProto& f = functions_.at(key);
    int64_t n = f.node_size();
    for (const auto& inner : f.node()) {
      auto callee = functions_.find(inner.domain() + "::" + inner.op_type());
      if (callee == functions_.end()) continue;
      const int64_t m = inlined_size(callee->first, depth + 1);
      if (m < 0) {
        n = -1;
        break;
      }
      n = std::min(n + m, int64_t{1} << 62);
    }
    memo->second = n;
    return n;
  }

  void import_or_inline(const WireNode& wn, Graph& g, int depth) {
    auto it = functions_.end();
    if (!functions_.empty()) {
      std::string key(wn.domain);
      key += "::";
      key += wn.op_type;
      it = functions_.find(key);
    }
    if (it == functions_.end()) {
      import_node(wn, g);
      return;
    }
    onnx::NodeProto np;  // a call: the function's body is rewritten from the call's message
    parse_sub(src_, wn.bytes, wn.size, &np, "a node", 2);
    if (depth > 32)
      throw InputError(path_ + ": function '" + np.op_type() + "' calls itself (recursion > 32)");
    const onnx::FunctionProto& f = it->second;
    // A call whose inlining is known to pass the bound is refused before any of it is done (a fan-out of
    // calls calling each other twice, 2^20 nodes, took a second and 200 MB to be refused).
    const int64_t whole = depth == 0 ? inlined_size(it->first, 0) : -1;
    inlined_nodes_ += f.node_size();
    if (inlined_nodes_ > limits().max_inlined_nodes ||
        (whole >= 0 && inlined_nodes_ - f.node_size() + whole > limits().max_inlined_nodes))
      throw InputError(path_ + ": inlining function '" + np.op_type() + "' gives more than " +
                       std::to_string(limits().max_inlined_nodes) +
                       " nodes (calls nest too deep; the bound is FLOPWISE_MAX_INLINED_NODES)");
    // Rename: formal inputs/outputs to the call's actual names, internal values to unique names.
    std::map<std::string, std::string> rename;
    for (int i = 0; i < f.input_size(); ++i) rename[f.input(i)] = i < np.input_size() ? np.input(i) : "";
    for (int i = 0; i < f.output_size(); ++i) rename[f.output(i)] = i < np.output_size() ? np.output(i) : "";
    std::string prefix = (np.output_size() ? np.output(0) : np.name()) + "::" + f.name() + "::";
    auto mapped = [&](const std::string& n) {
      if (n.empty()) return n;
      auto r = rename.find(n);
      return r != rename.end() ? r->second : prefix + n;
    };
    std::string caller_dir =
        np.name().substr(0, np.name().rfind('/') == std::string::npos ? 0 : np.name().rfind('/'));
    // Each inlined node's name starts with its caller's directory: a long caller name multiplies through
    // nested calls (a 16 KB name over 2^19 calls: 8 GB). Names are bounded with the nodes, 64 bytes a node.
    inlined_name_bytes_ += static_cast<int64_t>(f.node_size()) * static_cast<int64_t>(caller_dir.size() + 1);
    if (inlined_name_bytes_ > 64 * limits().max_inlined_nodes)
      throw InputError(path_ + ": inlining function '" + np.op_type() + "' gives more than " +
                       std::to_string(64 * limits().max_inlined_nodes / (1 << 20)) +
                       " MB of node names (long names through nested calls; the bound is FLOPWISE_MAX_INLINED_NODES, "
                       "64 bytes of name a node)");
    std::vector<std::string> caller_scope = scope_from_node_name(np.name());
    // torch names a module's function after its class, with ".N" for variants: "BasicBlock.1".
    std::string cls = f.name();
    while (!cls.empty() && cls.find('.') != std::string::npos &&
           cls.find_first_not_of("0123456789", cls.rfind('.') + 1) == std::string::npos)
      cls.erase(cls.rfind('.'));
    cls = cls.substr(cls.find_last_of('.') + 1);
    if (!caller_scope.empty()) class_hints_[caller_scope.back()] = cls;
    std::map<std::string, const onnx::AttributeProto*> caller_attrs;
    for (const auto& a : np.attribute()) caller_attrs[a.name()] = &a;
    for (const auto& inner : f.node()) {
      onnx::NodeProto n = inner;
      for (auto& in : *n.mutable_input()) in = mapped(in);
      for (auto& out : *n.mutable_output()) out = mapped(out);
      std::string nm = inner.name().empty() ? inner.op_type() : inner.name();
      n.set_name(caller_dir + "/" + (nm[0] == '/' ? nm.substr(1) : nm));
      // Attributes referring to the caller's (ref_attr_name) take its value, or the default when absent.
      auto* attrs = n.mutable_attribute();
      for (int k = attrs->size() - 1; k >= 0; --k) {
        auto* a = attrs->Mutable(k);
        if (a->ref_attr_name().empty()) continue;
        auto ca = caller_attrs.find(a->ref_attr_name());
        if (ca == caller_attrs.end()) {
          attrs->DeleteSubrange(k, 1);
        } else {
          std::string name = a->name();
          *a = *ca->second;
          a->set_name(name);
        }
      }
      import_message(n, g, depth + 1);
    }
  }

 public:
  // Classes learnt from inlined functions, applied once all nodes are imported.
  void apply_class_hints(Graph& g) {
    if (class_hints_.empty()) return;
    // Nodes sharing a scope (and classes) list share the completed one too.
    std::map<std::pair<const void*, const void*>, StringList> done;
    for (auto& n : g.nodes) {
      auto [it, fresh] = done.try_emplace({n.scope.id(), n.scope_classes.id()});
      if (fresh) {
        std::vector<std::string> classes = n.scope_classes;
        classes.resize(n.scope.size());
        for (size_t i = 0; i < n.scope.size(); ++i)
          if (classes[i].empty())
            if (auto h = class_hints_.find(n.scope[i]); h != class_hints_.end()) classes[i] = h->second;
        it->second = std::move(classes);
      }
      n.scope_classes = it->second;
    }
  }

 private:
  const std::map<std::string, int64_t>& opsets_;
  std::unordered_map<std::string, StringList> scope_of_dir_;
  std::string last_dir_ = "\x01";  // matches no directory
  StringList last_scope_;
  std::unordered_map<std::string, std::pair<StringList, StringList>> scope_of_metadata_;
  const Source& src_;
  std::string path_;
  std::vector<std::string>* warnings_;
  std::map<std::string, onnx::FunctionProto> functions_;
  std::map<std::string, int64_t> inlined_size_;  // inlined_size's memo
  int64_t inlined_nodes_ = 0;  // nodes added by inlining, against limits().max_inlined_nodes
  int64_t inlined_name_bytes_ = 0;  // bytes of their names' caller prefixes, against 64 x that bound
  std::map<const Graph*, std::vector<std::pair<std::string, int>>> undefined_;  // used before defined
  std::map<std::string, std::string> class_hints_;
};

struct MappedFile {
  const uint8_t* data = nullptr;
  size_t size = 0;
  void* map = nullptr;
  ~MappedFile() {
    if (map) munmap(map, size);
  }
};

Model import_buffer(const uint8_t* base, size_t size, const std::string& path, PageReleaser* pages = nullptr) {
  if (size == 0) throw InputError(path + ": file is empty");
  if (size > static_cast<size_t>(INT32_MAX))
    throw InputError(path + ": larger than 2 GiB; ONNX stores such models with external data");
  Model m;
  m.path = path;
  m.format = "onnx";
  const Source src{path, base, base + size};
  pb::io::CodedInputStream in(base, static_cast<int>(size));
  in.SetTotalBytesLimit(INT32_MAX);
  const uint8_t* graph_p = nullptr;
  const uint8_t* graph_at = nullptr;  // its field's tag
  int graph_len = 0;
  int64_t ir_version = 0;
  std::string producer_name, producer_version;
  bool have_opset = false;
  std::vector<onnx::FunctionProto> functions;
  for (;;) {
    const int at = in.CurrentPosition();
    uint32_t tag;
    if (!next_tag(in, base, at, static_cast<int>(size), &tag)) src.bad("the model", base + at);
    if (tag == 0) break;
    int field = WFL::GetTagFieldNumber(tag);
    auto wt = WFL::GetTagWireType(tag);
    const uint8_t* p;
    int len;
    if (field == 1 && wt == WFL::WIRETYPE_VARINT) {
      uint64_t v;
      if (!in.ReadVarint64(&v)) src.bad("the model", base + at);
      ir_version = static_cast<int64_t>(v);
    } else if ((field == 2 || field == 3 || field == 7 || field == 8 || field == 14 || field == 20 ||
                field == 25) &&
               wt == WFL::WIRETYPE_LENGTH_DELIMITED) {
      if (!read_len(in, base, static_cast<int>(size), &p, &len)) src.bad("the model", base + at);
      if (field == 2) producer_name.assign(reinterpret_cast<const char*>(p), len);
      if (field == 3) producer_version.assign(reinterpret_cast<const char*>(p), len);
      if (field == 7) {
        // A second graph field is merged into the first by protobuf; the last one is analysed, the earlier
        // ones are only checked.
        if (graph_p) {
          onnx::GraphProto earlier;
          parse_sub(src, graph_p, graph_len, &earlier, "the graph", 1, graph_at);
        }
        graph_p = p, graph_len = len, graph_at = base + at;
      }
      if (field == 25)
        parse_sub(src, p, len, &functions.emplace_back(), "a model-local function", 1, base + at);
      if (field == 8) {
        onnx::OperatorSetIdProto op;
        parse_sub(src, p, len, &op, "opset_import", 1, base + at);
        std::string dom = op.domain() == "ai.onnx" ? "" : op.domain();
        m.opsets[dom] = op.version();
        have_opset = true;
      }
      if (field == 14) {  // checked only: protobuf would parse it
        onnx::StringStringEntryProto e;
        parse_sub(src, p, len, &e, "metadata_props", 1, base + at);
      }
      if (field == 20) {  // likewise
        onnx::TrainingInfoProto t;
        parse_sub(src, p, len, &t, "training_info", 1, base + at);
      }
    } else if (!skip_field(in, base, static_cast<int>(size), tag, 0)) {
      src.bad("the model", base + at);
    }
  }
  if (!graph_p) malformed(path, "no graph");
  if (ir_version <= 0) malformed(path, "no ir_version");
  if (!have_opset) {
    if (ir_version >= 3) malformed(path, "no opset_import; the file may be truncated");
    m.opsets[""] = 1;
  }
  m.producer = producer_name + (producer_version.empty() ? "" : " " + producer_version);
  GraphParts parts = walk_graph(src, graph_p, graph_len, pages);
  for (const auto& t : parts.initializers)
    for (auto d : t.dims)
      if (d < 0)
        throw InputError(path + ": initializer '" + t.name + "' has negative dim " + std::to_string(d));
  GraphImporter imp(m.opsets, src, &m.warnings);
  std::set<std::string> function_domains;
  for (auto& f : functions) {
    function_domains.insert(f.domain());
    for (const auto& op : f.opset_import()) {
      std::string dom = op.domain() == "ai.onnx" ? "" : op.domain();
      if (!m.opsets.count(dom)) m.opsets[dom] = op.version();
    }
    imp.add_function(std::move(f));
  }
  imp.import(parts, m.graph);
  imp.apply_class_hints(m.graph);
  // Only a domain some node uses is worth a word: exporters and ORT's quantizer import domains they never use.
  std::set<std::string> used;
  std::vector<const Graph*> stack{&m.graph};
  while (!stack.empty()) {
    const Graph* g = stack.back();
    stack.pop_back();
    for (const auto& n : g->nodes) {
      used.insert(n.domain);
      for (const auto& sg : n.subgraphs) stack.push_back(sg.get());
    }
  }
  for (const auto& [dom, ver] : m.opsets)
    if (!dom.empty() && dom != "com.microsoft" && dom != "ai.onnx.ml" && dom != "ai.onnx.preview.training" &&
        !function_domains.count(dom) && used.count(dom))
      m.warnings.push_back("opset domain '" + dom + "' (version " + std::to_string(ver) +
                           ") is not known to flopwise; its ops are listed as unsupported");
  return m;
}

}  // namespace

// A scope path (dotted) longer than this ends the levels: each level repeats its parent's path, so a name of
// long components would make levels whose text grows with the square of the name.
constexpr size_t kMaxScopePathBytes = 4096;

std::vector<std::string> scope_from_node_name(const std::string& name) {
  // Exporter names look like "/layer1/layer1.0/conv1/Conv" or "/layer1/layer1.0/conv1/Conv_1": each
  // component but the last is one module level; levels are full dotted paths, or (older exporters)
  // relative names that we join.
  std::vector<std::string> out;
  if (name.empty() || name[0] != '/') return out;
  std::vector<std::string> parts;
  size_t pos = 1;
  // At most limits().max_scope_depth levels, and one more so that the report, which cuts there, says so:
  // the levels are full paths, so their text grows with the square of the depth.
  const size_t max_levels = static_cast<size_t>(limits().max_scope_depth) + 1;
  while (pos <= name.size() && parts.size() < max_levels) {
    size_t slash = name.find('/', pos);
    if (slash == std::string::npos) break;  // the last component is the op itself
    parts.push_back(name.substr(pos, slash - pos));
    pos = slash + 1;
  }
  // Each component names a module relative to an ancestor: "layer1.0" under "layer1" (the
  // Sequential's own name repeated), "conv.0" under "features.5.conv", "conv1" under "layer1.0".
  // Join by overlapping the longest tail of the current path with the head of the component.
  std::vector<std::string> path;  // dotted segments of the current scope
  for (const auto& p : parts) {
    if (p.empty()) continue;
    std::vector<std::string> seg;
    for (size_t a = 0, b; a <= p.size(); a = b + 1) {
      b = p.find('.', a);
      if (b == std::string::npos) b = p.size();
      seg.push_back(p.substr(a, b - a));
    }
    // The overlap is a few segments in every exporter's names; searching at most 64 keeps a crafted name of
    // many dotted segments per component linear.
    size_t overlap = 0;
    for (size_t k = std::min({path.size(), seg.size() - 1, size_t{64}}); k > 0; --k)
      if (std::equal(path.end() - k, path.end(), seg.begin())) {
        overlap = k;
        break;
      }
    path.insert(path.end(), seg.begin() + overlap, seg.end());
    std::string joined;
    for (size_t i = 0; i < path.size(); ++i) joined += (i ? "." : "") + path[i];
    out.push_back(std::move(joined));
    if (out.back().size() > kMaxScopePathBytes) break;  // deeper levels would repeat a path this long each
  }
  return out;
}

Model import_onnx_bytes(const std::string& bytes, const std::string& path) {
  return import_buffer(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), path);
}

Model import_onnx_file(const std::string& path) {
  require_regular_file(path);
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);  // a FIFO swapped in after the check must not block
  if (fd < 0) throw InputError(path + ": cannot open (" + std::strerror(errno) + ")");
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError(path + ": not a regular file");
  }
  MappedFile f;
  f.size = static_cast<size_t>(st.st_size);
  if (f.size == 0) {
    ::close(fd);
    throw InputError(path + ": file is empty");
  }
  f.map = mmap(nullptr, f.size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (f.map == MAP_FAILED) {
    f.map = nullptr;
    throw InputError(path + ": cannot map file (" + std::strerror(errno) + ")");
  }
  f.data = static_cast<const uint8_t*>(f.map);
  PageReleaser pages{f.data};
  return import_buffer(f.data, f.size, path, &pages);
}

}  // namespace flopwise
