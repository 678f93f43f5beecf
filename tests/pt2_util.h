// tests/pt2_util.h — zip archives written in the test (stored or deflated entries, optionally zip64
// records) and small program JSONs, for the .pt2 reader's tests (tests/test_pt2_*.cc).
#pragma once

#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

namespace pt2test {

struct File {
  std::string name, data;
  bool deflate = false;
};

inline void put16(std::string& s, uint32_t v) {
  s += static_cast<char>(v & 0xff);
  s += static_cast<char>((v >> 8) & 0xff);
}
inline void put32(std::string& s, uint32_t v) {
  put16(s, v & 0xffff);
  put16(s, v >> 16);
}
inline void put64(std::string& s, uint64_t v) {
  put32(s, static_cast<uint32_t>(v));
  put32(s, static_cast<uint32_t>(v >> 32));
}

inline std::string deflate_raw(const std::string& in) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, in.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// A zip archive of `files`; with zip64, the end records are the zip64 ones (the 32-bit fields 0xffff...).
inline std::string make_zip(const std::vector<File>& files, bool zip64 = false) {
  std::string out, dir;
  for (const File& f : files) {
    std::string body = f.deflate ? deflate_raw(f.data) : f.data;
    uint32_t crc = static_cast<uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(f.data.data()), static_cast<uInt>(f.data.size())));
    uint32_t offset = static_cast<uint32_t>(out.size());
    put32(out, 0x04034b50);
    put16(out, 20), put16(out, 0), put16(out, f.deflate ? 8 : 0), put16(out, 0), put16(out, 0);
    put32(out, crc), put32(out, static_cast<uint32_t>(body.size())),
        put32(out, static_cast<uint32_t>(f.data.size()));
    put16(out, static_cast<uint32_t>(f.name.size())), put16(out, 0);
    out += f.name + body;
    put32(dir, 0x02014b50);
    put16(dir, 20), put16(dir, 20), put16(dir, 0), put16(dir, f.deflate ? 8 : 0), put16(dir, 0),
        put16(dir, 0);
    put32(dir, crc), put32(dir, static_cast<uint32_t>(body.size())),
        put32(dir, static_cast<uint32_t>(f.data.size()));
    put16(dir, static_cast<uint32_t>(f.name.size())), put16(dir, 0), put16(dir, 0), put16(dir, 0),
        put16(dir, 0);
    put32(dir, 0), put32(dir, offset);
    dir += f.name;
  }
  uint64_t dir_at = out.size();
  out += dir;
  if (zip64) {
    uint64_t z_at = out.size();
    put32(out, 0x06064b50), put64(out, 44), put16(out, 45), put16(out, 45), put32(out, 0), put32(out, 0);
    put64(out, files.size()), put64(out, files.size()), put64(out, dir.size()), put64(out, dir_at);
    put32(out, 0x07064b50), put32(out, 0), put64(out, z_at), put32(out, 1);
  }
  put32(out, 0x06054b50), put16(out, 0), put16(out, 0);
  put16(out, zip64 ? 0xffff : static_cast<uint32_t>(files.size()));
  put16(out, zip64 ? 0xffff : static_cast<uint32_t>(files.size()));
  put32(out, zip64 ? 0xffffffffu : static_cast<uint32_t>(dir.size()));
  put32(out, zip64 ? 0xffffffffu : static_cast<uint32_t>(dir_at));
  put16(out, 0);
  return out;
}

// A current-layout archive: <folder>/archive_format, <folder>/models/<name>.json for each program.
inline std::string make_pt2(const std::vector<std::pair<std::string, std::string>>& programs,
                            const std::string& folder = "model", std::vector<File> extra = {}) {
  std::vector<File> files{{folder + "/archive_format", "pt2"}, {folder + "/archive_version", "0"}};
  for (const auto& [name, json] : programs) files.push_back({folder + "/models/" + name + ".json", json});
  for (File& f : extra) files.push_back({folder + "/" + f.name, f.data, f.deflate});
  return make_zip(files);
}

}  // namespace pt2test
