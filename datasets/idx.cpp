#include "datasets/idx.h"

#include <torch/torch.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "datasets/data_error.h"

namespace attnzoo {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kUnsignedByteType = 0x08;  // third byte of the magic: element type

// gzopen reads both gzip and plain files (zlib passes plain data through), so one code path serves both.
class IdxFile {
 public:
  IdxFile(std::string path, std::string how_to_fetch) : path_(std::move(path)), how_to_fetch_(std::move(how_to_fetch)) {
    std::error_code error;
    if (!fs::exists(path_, error) && fs::exists(path_ + ".gz", error)) path_ += ".gz";
    if (!fs::exists(path_, error)) fail("no such file");
    if (fs::is_directory(path_, error)) fail("is a folder, expected an IDX file");
    file_ = gzopen(path_.c_str(), "rb");
    if (file_ == nullptr) fail("cannot open it");
    gzbuffer(file_, 1 << 17);
  }
  ~IdxFile() {
    if (file_ != nullptr) gzclose(file_);
  }
  IdxFile(const IdxFile&) = delete;
  IdxFile& operator=(const IdxFile&) = delete;

  [[noreturn]] void fail(const std::string& what) const {
    throw DataError(path_ + ": " + what + "; " + how_to_fetch_);
  }

  // Reads exactly `size` bytes, or fails saying how many were there.
  void read(void* into, size_t size, const char* what) {
    auto* bytes = static_cast<unsigned char*>(into);
    size_t done = 0;
    while (done < size) {
      const unsigned chunk = static_cast<unsigned>(std::min<size_t>(size - done, 1u << 30));
      const int got = gzread(file_, bytes + done, chunk);
      if (got < 0) {
        int code = 0;
        fail(std::string("corrupt file (") + gzerror(file_, &code) + ")");
      }
      if (got == 0) break;
      done += static_cast<size_t>(got);
    }
    if (done != size)
      fail(std::string("file is truncated: ") + what + " needs " + std::to_string(size) + " bytes, found " +
           std::to_string(done));
  }

  uint32_t read_big_endian_u32(const char* what) {
    std::array<unsigned char, 4> b{};
    read(b.data(), b.size(), what);
    return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
  }

  // After the data there must be nothing: a longer file means the header does not describe it.
  void expect_end() {
    unsigned char extra = 0;
    const int got = gzread(file_, &extra, 1);
    if (got < 0) {
      int code = 0;
      fail(std::string("corrupt file (") + gzerror(file_, &code) + ")");
    }
    if (got > 0) fail("file is longer than its header says; it is not a valid IDX file");
  }

 private:
  std::string path_;
  std::string how_to_fetch_;
  gzFile file_ = nullptr;
};

// Reads header (magic with `expected_dims`, then the sizes) and the uint8 payload.
torch::Tensor read_idx(const std::string& path, const std::string& how_to_fetch, uint32_t expected_dims,
                       const char* kind) {
  IdxFile file(path, how_to_fetch);
  const uint32_t magic = file.read_big_endian_u32("the header");
  const uint32_t expected_magic = (kUnsignedByteType << 8) | expected_dims;
  if (magic != expected_magic) {
    char text[96];
    std::snprintf(text, sizeof text, "magic number 0x%08x, expected 0x%08x for %s", magic, expected_magic, kind);
    file.fail(std::string("not an IDX ") + kind + " file (" + text + ")");
  }
  std::vector<int64_t> sizes;
  uint64_t total = 1;
  for (uint32_t d = 0; d < expected_dims; ++d) {
    const uint32_t size = file.read_big_endian_u32("the header");
    if (size == 0) file.fail("dimension " + std::to_string(d) + " is 0 in the header");
    // 2^31 elements per dimension and 2^40 bytes in all are far beyond any IDX data set; beyond them it is garbage.
    if (size > (1u << 31) || total * size > (uint64_t{1} << 40))
      file.fail("implausible size " + std::to_string(size) + " in the header");
    total *= size;
    sizes.push_back(static_cast<int64_t>(size));
  }
  torch::Tensor data = torch::empty(sizes, torch::kUInt8);
  file.read(data.data_ptr<uint8_t>(), static_cast<size_t>(total), kind);
  file.expect_end();
  return data;
}

}  // namespace

torch::Tensor read_idx_images(const std::string& path, const std::string& how_to_fetch) {
  return read_idx(path, how_to_fetch, 3, "images");
}

torch::Tensor read_idx_labels(const std::string& path, const std::string& how_to_fetch) {
  return read_idx(path, how_to_fetch, 1, "labels");
}

}  // namespace attnzoo
