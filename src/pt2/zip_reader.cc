// src/pt2/zip_reader.cc — the zip central directory (APPNOTE 6.3: EOCD, zip64 EOCD and extra field) and
// reading one stored or deflated entry, every offset checked against the archive's length.
#include "pt2/zip_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "flopwise/errors.h"

namespace flopwise::pt2 {

namespace {
constexpr uint32_t kEocdSig = 0x06054b50, kZip64LocatorSig = 0x07064b50, kZip64EocdSig = 0x06064b50;
constexpr uint32_t kCentralSig = 0x02014b50, kLocalSig = 0x04034b50;
constexpr size_t kEocdSize = 22, kLocatorSize = 20, kZip64EocdSize = 56, kCentralSize = 46, kLocalSize = 30;
constexpr size_t kMaxComment = 65535;

uint16_t le16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
uint32_t le32(const unsigned char* p) { return le16(p) | static_cast<uint32_t>(le16(p + 2)) << 16; }
uint64_t le64(const unsigned char* p) { return le32(p) | static_cast<uint64_t>(le32(p + 4)) << 32; }

// A printable form of an entry name for a one-line message (control bytes and quotes escaped, cut at 200).
std::string quoted(std::string_view s) {
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < 200; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f || c == '\'' || c == '\\') {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > 200) out += "...";
  return out + "'";
}
}  // namespace

struct ZipReader::Source {
  int fd = -1;
  std::string_view memory;
  uint64_t length = 0;
  ~Source() {
    if (fd >= 0) ::close(fd);
  }
};

ZipReader ZipReader::open_file(const std::string& path, const ZipLimits& limits) {
  require_regular_file(path);
  auto src = std::make_shared<Source>();
  src->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (src->fd < 0) throw InputError(path + ": cannot open (" + std::strerror(errno) + ")");
  struct stat st;
  if (::fstat(src->fd, &st) != 0) throw InputError(path + ": cannot stat (" + std::strerror(errno) + ")");
  src->length = static_cast<uint64_t>(st.st_size);
  return ZipReader(std::move(src), path, limits);
}

ZipReader ZipReader::open_memory(std::string_view bytes, const std::string& label, const ZipLimits& limits) {
  auto src = std::make_shared<Source>();
  src->memory = bytes;
  src->length = bytes.size();
  return ZipReader(std::move(src), label, limits);
}

ZipReader::ZipReader(std::shared_ptr<Source> src, std::string label, const ZipLimits& limits)
    : src_(std::move(src)), label_(std::move(label)), limits_(limits), length_(src_->length) {
  read_directory();
}

void ZipReader::fail(const std::string& why) const { throw InputError(label_ + ": " + why); }

void ZipReader::read_at(uint64_t offset, void* out, size_t n, const char* what) const {
  if (offset > length_ || n > length_ - offset)
    fail(std::string("truncated zip archive (") + what + " at byte " + std::to_string(offset) +
         " runs past the end, " + std::to_string(length_) + " bytes)");
  if (src_->fd < 0) {
    std::memcpy(out, src_->memory.data() + offset, n);
    return;
  }
  auto* p = static_cast<char*>(out);
  while (n > 0) {
    ssize_t got = ::pread(src_->fd, p, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      fail(std::string("cannot read the ") + what +
           (got < 0 ? std::string(" (") + std::strerror(errno) + ")" : " (file shrank)"));
    p += got;
    offset += static_cast<uint64_t>(got);
    n -= static_cast<size_t>(got);
  }
}

namespace {
// The sizes and offset a central directory header gives, completed from its zip64 extra field (id 1),
// whose 8-byte values are present exactly for the 32-bit fields that hold 0xffffffff.
bool apply_zip64_extra(const unsigned char* extra, size_t n, ZipEntry& e) {
  bool need_size = e.size == 0xffffffffu, need_comp = e.compressed == 0xffffffffu;
  bool need_off = e.header_offset == 0xffffffffu;
  if (!need_size && !need_comp && !need_off) return true;
  for (size_t at = 0; at + 4 <= n;) {
    uint16_t id = le16(extra + at), len = le16(extra + at + 2);
    if (len > n - at - 4) return false;
    if (id == 1) {
      const unsigned char* p = extra + at + 4;
      size_t left = len;
      for (uint64_t* field : {need_size ? &e.size : nullptr, need_comp ? &e.compressed : nullptr,
                              need_off ? &e.header_offset : nullptr}) {
        if (!field) continue;
        if (left < 8) return false;
        *field = le64(p);
        p += 8;
        left -= 8;
      }
      return true;
    }
    at += 4 + static_cast<size_t>(len);
  }
  return false;
}
}  // namespace

void ZipReader::read_directory() {
  if (length_ < kEocdSize) fail("not a zip archive (" + std::to_string(length_) + " bytes, too short)");
  size_t tail_len = static_cast<size_t>(std::min<uint64_t>(length_, kEocdSize + kMaxComment));
  std::string tail(tail_len, '\0');
  uint64_t tail_at = length_ - tail_len;
  read_at(tail_at, tail.data(), tail_len, "end of central directory");
  const auto* t = reinterpret_cast<const unsigned char*>(tail.data());
  size_t eocd = std::string::npos;
  for (size_t i = tail_len - kEocdSize + 1; i-- > 0;) {
    if (le32(t + i) == kEocdSig && i + kEocdSize + le16(t + i + 20) <= tail_len) {
      eocd = i;
      break;
    }
  }
  if (eocd == std::string::npos) fail("not a zip archive (no end-of-central-directory record; truncated?)");
  const unsigned char* r = t + eocd;
  uint64_t eocd_at = tail_at + eocd, dir_end = eocd_at;
  uint64_t count = le16(r + 10), dir_size = le32(r + 12), dir_at = le32(r + 16);
  if (le16(r + 4) != 0 || le16(r + 6) != 0) fail("a multi-disk (split) zip archive, not supported");
  if (eocd_at >= kLocatorSize) {
    unsigned char loc[kLocatorSize];
    read_at(eocd_at - kLocatorSize, loc, kLocatorSize, "zip64 locator");
    if (le32(loc) == kZip64LocatorSig) {
      uint64_t z_at = le64(loc + 8);
      if (z_at > eocd_at - kLocatorSize || eocd_at - kLocatorSize - z_at < kZip64EocdSize)
        fail("bad zip64 end-of-central-directory offset " + std::to_string(z_at));
      unsigned char z[kZip64EocdSize];
      read_at(z_at, z, kZip64EocdSize, "zip64 end of central directory");
      if (le32(z) != kZip64EocdSig) fail("bad zip64 end-of-central-directory record");
      count = le64(z + 32);
      dir_size = le64(z + 40);
      dir_at = le64(z + 48);
      dir_end = z_at;
    }
  }
  if (count > limits_.max_entries)
    fail(std::to_string(count) + " zip entries, over the limit of " + std::to_string(limits_.max_entries));
  if (dir_size > limits_.max_directory_bytes)
    fail("a zip central directory of " + std::to_string(dir_size) + " bytes, over the limit");
  if (dir_at > dir_end || dir_size > dir_end - dir_at)
    fail("bad zip central directory (offset " + std::to_string(dir_at) + ", " + std::to_string(dir_size) +
         " bytes, past its end record)");
  if (count * kCentralSize > dir_size)
    fail("bad zip central directory (" + std::to_string(count) + " entries in " + std::to_string(dir_size) +
         " bytes)");
  std::string dir(static_cast<size_t>(dir_size), '\0');
  read_at(dir_at, dir.data(), dir.size(), "central directory");
  parse_directory(dir, dir_at);
}

void ZipReader::parse_directory(const std::string& dir, uint64_t dir_at) {
  const auto* d = reinterpret_cast<const unsigned char*>(dir.data());
  size_t at = 0;
  while (at + kCentralSize <= dir.size() && le32(d + at) == kCentralSig) {
    if (entries_.size() >= limits_.max_entries) fail("more zip entries than the limit");
    const unsigned char* h = d + at;
    size_t name_len = le16(h + 28), extra_len = le16(h + 30), comment_len = le16(h + 32);
    if (kCentralSize + name_len + extra_len + comment_len > dir.size() - at)
      fail("bad zip central directory (entry " + std::to_string(entries_.size()) + " runs past it)");
    ZipEntry e;
    e.flags = le16(h + 8);
    e.method = le16(h + 10);
    e.compressed = le32(h + 20);
    e.size = le32(h + 24);
    e.header_offset = le32(h + 42);
    e.name.assign(reinterpret_cast<const char*>(h + kCentralSize), name_len);
    if (!apply_zip64_extra(h + kCentralSize + name_len, extra_len, e))
      fail("bad zip64 extra field of entry " + quoted(e.name));
    entries_.push_back(std::move(e));
    at += kCentralSize + name_len + extra_len + comment_len;
  }
  if (entries_.empty() && dir_at > 0) fail("not a zip archive (empty or unreadable central directory)");
  check_extents(dir_at);
  by_name_.resize(entries_.size());
  for (uint32_t i = 0; i < by_name_.size(); ++i) by_name_[i] = i;
  std::sort(by_name_.begin(), by_name_.end(),
            [&](uint32_t a, uint32_t b) { return entries_[a].name < entries_[b].name; });
  for (size_t i = 1; i < by_name_.size(); ++i)
    if (entries_[by_name_[i]].name == entries_[by_name_[i - 1]].name)
      fail("two zip entries named " + quoted(entries_[by_name_[i]].name));
}

// Every entry's local header and data lie before the central directory, and no two overlap (an
// overlapping archive is a zip bomb's shape): checked on the extents the central directory gives.
void ZipReader::check_extents(uint64_t dir_at) const {
  std::vector<std::pair<uint64_t, uint64_t>> spans;  // [start, end) of each entry
  spans.reserve(entries_.size());
  for (const ZipEntry& e : entries_) {
    uint64_t fixed = kLocalSize + e.name.size();
    if (e.header_offset > dir_at || dir_at - e.header_offset < fixed ||
        e.compressed > dir_at - e.header_offset - fixed)
      fail("zip entry " + quoted(e.name) + " lies outside the archive's data (offset " +
           std::to_string(e.header_offset) + ", " + std::to_string(e.compressed) + " bytes)");
    spans.emplace_back(e.header_offset, e.header_offset + fixed + e.compressed);
  }
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i)
    if (spans[i].first < spans[i - 1].second)
      fail("overlapping zip entries (at bytes " + std::to_string(spans[i - 1].first) + " and " +
           std::to_string(spans[i].first) + ")");
}

const ZipEntry* ZipReader::find(std::string_view name) const {
  auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
                             [&](uint32_t i, std::string_view n) { return entries_[i].name < n; });
  return it != by_name_.end() && entries_[*it].name == name ? &entries_[*it] : nullptr;
}

std::string ZipReader::read(const ZipEntry& e, size_t padding) const {
  const std::string what = "zip entry " + quoted(e.name);
  if (e.size > limits_.max_entry_bytes)
    fail(what + " holds " + std::to_string(e.size) + " bytes, over the limit of " +
         std::to_string(limits_.max_entry_bytes));
  if (e.flags & 1) fail(what + " is encrypted");
  if (e.method != 0 && e.method != 8)
    fail(what + " is compressed with method " + std::to_string(e.method) +
         " (only stored and deflated are read)");
  if (e.method == 0 && e.compressed != e.size)
    fail(what + " is stored but its sizes differ (" + std::to_string(e.compressed) + " vs " +
         std::to_string(e.size) + ")");
  unsigned char local[kLocalSize];
  read_at(e.header_offset, local, kLocalSize, "local file header");
  if (le32(local) != kLocalSig)
    fail(what + ": bad local file header at byte " + std::to_string(e.header_offset));
  uint64_t data_at = e.header_offset + kLocalSize + le16(local + 26) + le16(local + 28);
  std::string out(static_cast<size_t>(e.size) + padding, '\0');
  if (e.method == 0) {
    read_at(data_at, out.data(), static_cast<size_t>(e.size), what.c_str());
    return out;
  }
  std::string packed(static_cast<size_t>(e.compressed), '\0');
  read_at(data_at, packed.data(), packed.size(), what.c_str());
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) fail(what + ": zlib cannot start");
  z.next_in = reinterpret_cast<Bytef*>(packed.data());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  int rc = Z_OK;
  uint64_t in_left = packed.size(), out_left = e.size;
  while (rc == Z_OK) {  // zlib's counters are 32-bit: feed at most 1 GiB at a time
    if (z.avail_in == 0)
      z.avail_in = static_cast<uInt>(std::min<uint64_t>(in_left, 1u << 30)), in_left -= z.avail_in;
    if (z.avail_out == 0)
      z.avail_out = static_cast<uInt>(std::min<uint64_t>(out_left, 1u << 30)), out_left -= z.avail_out;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc == Z_BUF_ERROR && (in_left > 0 || out_left > 0)) rc = Z_OK;
    if (rc == Z_OK && z.avail_in == 0 && in_left == 0 && z.avail_out != 0) rc = Z_DATA_ERROR;
  }
  uint64_t produced = z.total_out;
  inflateEnd(&z);
  if (rc != Z_STREAM_END || produced != e.size)
    fail(what + ": corrupt deflate data (" + std::to_string(produced) + " of " + std::to_string(e.size) +
         " bytes)");
  return out;
}

}  // namespace flopwise::pt2
