// src/pt2/archive.cc — the layouts of a torch.export archive and the entry points of program.h: which
// programs a .pt2 holds (<folder>/models/<name>.json beside <folder>/archive_format = "pt2", or the
// legacy serialized_exported_program.json of torch 2.1-2.6), what it is when it holds none (an
// AOTInductor package), and the chosen program read, its schema version checked, validated.
#include <algorithm>

#include "flopwise/errors.h"
#include "pt2/json_reader.h"
#include "pt2/validate.h"
#include "pt2/zip_reader.h"

namespace flopwise::pt2 {

namespace {
constexpr std::string_view kLegacyProgram = "serialized_exported_program.json";
constexpr std::string_view kModelsDir = "models/";
constexpr std::string_view kJson = ".json";
constexpr int kNewestMajor = 8;  // schema majors this reader knows: the bare integer (2.1), 1 .. 8

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// What the archive's entries say it is: the layout, its folder and its programs.
ArchiveInfo classify(const ZipReader& zip) {
  ArchiveInfo info;
  bool aoti = false, format_file = false;
  for (const ZipEntry& e : zip.entries()) {
    std::string_view n = e.name;
    info.entries.push_back(e.name);
    size_t slash = n.find('/');
    std::string_view folder = slash == std::string_view::npos ? std::string_view() : n.substr(0, slash);
    std::string_view rest = slash == std::string_view::npos ? n : n.substr(slash + 1);
    if (n == kLegacyProgram || rest == kLegacyProgram) {
      info.layout = ArchiveInfo::Layout::Legacy;
      info.folder = std::string(n == kLegacyProgram ? std::string_view() : folder);
    }
    if (rest == "archive_format") format_file = true, info.folder = std::string(folder);
    if (starts_with(rest, "data/aotinductor/")) aoti = true;
    if (starts_with(rest, kModelsDir) && ends_with(rest, kJson) &&
        rest.find('/', kModelsDir.size()) == std::string_view::npos)
      info.programs.emplace_back(
          rest.substr(kModelsDir.size(), rest.size() - kModelsDir.size() - kJson.size()));
  }
  if (info.layout == ArchiveInfo::Layout::Legacy && info.programs.empty()) {
    info.programs = {""};
    return info;
  }
  info.layout = ArchiveInfo::Layout::Current;
  std::sort(info.programs.begin(), info.programs.end());
  if (info.programs.empty() && aoti)
    throw InputError(zip.label() + ": an AOTInductor package (compiled code), not an exported program");
  if (info.programs.empty())
    throw InputError(zip.label() +
                     (format_file ? ": a .pt2 archive with no exported program (no models/<name>.json)"
                                  : ": a zip archive that is no torch.export archive (no archive_format "
                                    "or serialized_exported_program.json)"));
  return info;
}

std::string pick(const ArchiveInfo& info, const std::string& wanted, const std::string& label) {
  if (wanted.empty() && info.programs.size() == 1) return info.programs[0];
  std::string names;
  for (const std::string& p : info.programs) names += (names.empty() ? "" : ", ") + p;
  if (wanted.empty())
    throw InputError(label + ": holds " + std::to_string(info.programs.size()) + " programs (" + names +
                     "): name one (--program NAME)");
  if (std::find(info.programs.begin(), info.programs.end(), wanted) == info.programs.end())
    throw InputError(label + ": no program named '" + wanted + "' (it holds " + names + ")");
  return wanted;
}

std::string entry_path(const ArchiveInfo& info, std::string_view rest) {
  return info.folder.empty() ? std::string(rest) : info.folder + "/" + std::string(rest);
}

void check_version(const Program& p, const std::string& label) {
  if (p.schema_major < 0 || p.schema_major > kNewestMajor)
    throw InputError(label + ": schema version " + std::to_string(p.schema_major) + "." +
                     std::to_string(p.schema_minor) +
                     " is not one this reader knows (it reads the bare integer "
                     "of torch 2.1 through " +
                     std::to_string(kNewestMajor) + ".x)");
}

// Parses JSON (with SIMDJSON_PADDING bytes after `size`) into p with `read`, simdjson's errors made one line.
// One DOM parser a thread, reused (its buffers kept) for texts up to kKeepParser bytes. The text is freed
// once parsed (the DOM holds copies of its strings): the walk's peak memory is the DOM and the Program.
constexpr size_t kKeepParser = size_t{16} << 20;  // Llama-3-70B's program is 10.6 MB
template <class Read>
void parse_json(std::string buf, size_t size, const std::string& label, Program& p, Read read) {
  thread_local simdjson::dom::parser kept;
  simdjson::dom::parser once;
  JsonReader r(p, label);
  try {
    bool marked = false;
    Value root =
        parse_json_text(size <= kKeepParser ? kept : once, std::string_view(buf.data(), size), marked);
    r.set_marked(marked);
    std::string().swap(buf);
    read(r, root);
  } catch (const simdjson::simdjson_error& e) {
    r.fail(e);
  }
  if (r.legacy_signature) order_legacy_signature(p);
}

Program read_program(std::string buf, size_t size, const std::string& label) {
  Program p;
  parse_json(std::move(buf), size, label, p, [](JsonReader& r, Value v) { r.read_program(v); });
  check_version(p, label);
  validate_program(p, label);
  return p;
}

Program read_archive(const ZipReader& zip, const std::string& wanted) {
  ArchiveInfo info = classify(zip);
  std::string name = pick(info, wanted, zip.label());
  std::string rest = info.layout == ArchiveInfo::Layout::Legacy
                         ? std::string(kLegacyProgram)
                         : std::string(kModelsDir) + name + std::string(kJson);
  const ZipEntry* e = zip.find(entry_path(info, rest));
  if (!e) throw InputError(zip.label() + ": no entry " + entry_path(info, rest));
  const std::string label = zip.label() + ": " + e->name;
  std::string buf = zip.read(*e, simdjson::SIMDJSON_PADDING);
  Program p = read_program(std::move(buf), static_cast<size_t>(e->size), label);
  p.name = name;
  for (const char* dir : {"data/weights/", "data/constants/"}) {
    std::string config = entry_path(
        info, std::string(dir) + name + (dir[5] == 'w' ? "_weights_config.json" : "_constants_config.json"));
    if (const ZipEntry* c = zip.find(config)) {
      std::string cbuf = zip.read(*c, simdjson::SIMDJSON_PADDING);
      parse_json(std::move(cbuf), static_cast<size_t>(c->size), zip.label() + ": " + c->name, p,
                 [](JsonReader& r, Value v) { r.read_payload_config(v); });
    }
  }
  return p;
}
}  // namespace

Program read_program_json(std::string_view json, const std::string& label) {
  std::string buf(json.size() + simdjson::SIMDJSON_PADDING, '\0');
  std::copy(json.begin(), json.end(), buf.begin());
  return read_program(std::move(buf), json.size(), label);
}

Program read_pt2_file(const std::string& path, const std::string& program) {
  return read_archive(ZipReader::open_file(path), program);
}

Program read_pt2_bytes(std::string_view bytes, const std::string& label, const std::string& program) {
  return read_archive(ZipReader::open_memory(bytes, label), program);
}

ArchiveInfo inspect_pt2_file(const std::string& path) { return classify(ZipReader::open_file(path)); }

}  // namespace flopwise::pt2
