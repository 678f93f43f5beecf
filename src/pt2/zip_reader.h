// src/pt2/zip_reader.h — a zip archive's central directory and one entry's bytes, for hostile input.
// Owns: ZipReader (end-of-central-directory record, zip64, stored and deflated entries). Knows nothing of
// torch: the archive layouts are src/pt2/archive.cc's. Only the entries asked for are read, so a .pt2's
// weights are never touched; a file is read with pread, never mapped or loaded whole.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace flopwise::pt2 {

struct ZipEntry {
  std::string name;
  uint64_t header_offset = 0;  // of its local file header
  uint64_t compressed = 0, size = 0;
  uint16_t method = 0;  // 0 stored, 8 deflated; anything else is refused when the entry is read
  uint16_t flags = 0;
};

// Bounds on what a reader accepts (README: Limits); an archive beyond them is refused, not truncated.
struct ZipLimits {
  uint64_t max_entries = 1u << 20;
  uint64_t max_directory_bytes = 256u << 20;  // the central directory
  uint64_t max_entry_bytes = 2ull << 30;      // one entry read into memory (a program JSON)
};

// The central directory of a zip archive in a file or in memory. Every offset and size is checked against
// the archive's length before it is used; a truncated file, a bad offset, overlapping entries or an entry
// over the limits is an InputError of one line naming the archive (and the entry).
class ZipReader {
 public:
  static ZipReader open_file(const std::string& path, const ZipLimits& limits = {});
  // `bytes` must outlive the reader. `label` names the archive in errors.
  static ZipReader open_memory(std::string_view bytes, const std::string& label,
                               const ZipLimits& limits = {});

  const std::vector<ZipEntry>& entries() const { return entries_; }
  const ZipEntry* find(std::string_view name) const;  // nullptr when absent
  // The entry's contents, with `padding` zero bytes after them (a JSON parser's look-ahead), so that the
  // returned string's size() is entry.size + padding.
  std::string read(const ZipEntry& e, size_t padding = 0) const;
  const std::string& label() const { return label_; }

 private:
  struct Source;
  ZipReader(std::shared_ptr<Source> src, std::string label, const ZipLimits& limits);
  void read_directory();
  void parse_directory(const std::string& dir, uint64_t dir_at);
  void check_extents(uint64_t dir_at) const;
  void read_at(uint64_t offset, void* out, size_t n, const char* what) const;
  [[noreturn]] void fail(const std::string& why) const;

  std::shared_ptr<Source> src_;
  std::string label_;
  ZipLimits limits_;
  uint64_t length_ = 0;
  std::vector<ZipEntry> entries_;
  std::vector<uint32_t> by_name_;  // indices of entries_ sorted by name
};

}  // namespace flopwise::pt2
