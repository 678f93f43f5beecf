// src/import/onnx_import.cc — the ONNX importer (flopwise/onnx_import.h): the file mapped, the ModelProto
// walked with protobuf's wire-format reader so that large initializers are never copied (only their name,
// dtype and dims are read; raw weight bytes are skipped, external data files are never opened), and its graph
// and model-local functions handed to GraphImporter. Nodes, value infos and small tensors go through the
// generated classes.
#include "flopwise/onnx_import.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "flopwise/errors.h"
#include "flopwise/limits.h"
#include "onnx_graph_importer.h"
#include "onnx_wire.h"

namespace flopwise {

namespace {

struct MappedFile {
  const uint8_t* data = nullptr;
  size_t size = 0;
  void* map = nullptr;
  ~MappedFile() {
    if (map) munmap(map, size);
  }
};

}  // namespace

namespace onnx_detail {
namespace {

Model import_buffer(const uint8_t* base, size_t size, const std::string& path,
                    PageReleaser* pages = nullptr) {
  if (size == 0) throw InputError(path + ": file is empty");
  if (size > static_cast<size_t>(INT32_MAX))
    throw InputError(path + ": larger than 2 GiB; ONNX stores such models with external data");
  Model m;
  m.path = path;
  m.format = ModelFormat::Onnx;
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
  // Only a domain some node uses is worth a word: exporters and ORT's quantizer import domains they never
  // use.
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
}  // namespace onnx_detail

Model import_onnx_bytes(const std::string& bytes, const std::string& path) {
  return onnx_detail::import_buffer(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), path);
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
  onnx_detail::PageReleaser pages{f.data};
  return onnx_detail::import_buffer(f.data, f.size, path, &pages);
}

}  // namespace flopwise
