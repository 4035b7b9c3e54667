// IDX files (MNIST / Fashion-MNIST): written by the test, raw and gzipped, then read back; and the errors a user
// meets with a missing, wrong or truncated download.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "datasets/data_error.h"
#include "datasets/idx.h"
#include "test_paths.h"

namespace attnzoo {
namespace {

namespace fs = std::filesystem;

const std::string kFetch = "run scripts/setup.sh to fetch Fashion-MNIST";

void put_u32(std::vector<uint8_t>& bytes, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<uint8_t>(value >> shift));
}

std::vector<uint8_t> idx_bytes(uint32_t magic, const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> bytes;
  put_u32(bytes, magic);
  for (uint32_t d : dims) put_u32(bytes, d);
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

void write_raw(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

void write_gz(const fs::path& path, const std::vector<uint8_t>& bytes) {
  gzFile file = gzopen(path.string().c_str(), "wb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  gzclose(file);
}

class IdxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("attnzoo_idx_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    // 3 images of 2x2 with pixels 0..11, labels 7 8 9.
    for (uint8_t v = 0; v < 12; ++v) pixels_.push_back(v);
    images_ = idx_bytes(0x803, {3, 2, 2}, pixels_);
    labels_ = idx_bytes(0x801, {3}, {7, 8, 9});
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
  std::vector<uint8_t> pixels_, images_, labels_;
};

TEST_F(IdxTest, ReadsRawImagesAndLabels) {
  write_raw(path("images"), images_);
  write_raw(path("labels"), labels_);
  torch::Tensor images = read_idx_images(path("images"), kFetch);
  torch::Tensor labels = read_idx_labels(path("labels"), kFetch);
  EXPECT_EQ(images.sizes(), (std::vector<int64_t>{3, 2, 2}));
  EXPECT_EQ(images.scalar_type(), torch::kUInt8);
  EXPECT_EQ(images[2][1][0].item<int>(), 10);  // image 2, row 1, column 0 = 2*4 + 1*2 + 0
  EXPECT_TRUE(torch::equal(labels, torch::tensor({7, 8, 9}, torch::kUInt8)));
}

TEST_F(IdxTest, ReadsGzipAndFindsItWithoutTheSuffix) {
  write_gz(path("images.gz"), images_);
  write_gz(path("labels.gz"), labels_);
  torch::Tensor from_gz = read_idx_images(path("images.gz"), kFetch);
  torch::Tensor found = read_idx_images(path("images"), kFetch);  // only images.gz exists
  torch::Tensor expected = torch::arange(12, torch::kUInt8).view({3, 2, 2});
  EXPECT_TRUE(torch::equal(from_gz, expected));
  EXPECT_TRUE(torch::equal(found, expected));
  EXPECT_EQ(read_idx_labels(path("labels"), kFetch)[1].item<int>(), 8);
}

// Runs `read` and returns the DataError's message ("" if none was thrown).
template <class Read>
std::string error_of(Read read) {
  try {
    read();
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

TEST_F(IdxTest, MissingFileNamesTheFileAndTheFix) {
  const std::string missing = path("train-images-idx3-ubyte");
  EXPECT_EQ(error_of([&] { read_idx_images(missing, kFetch); }),
            "data error: " + missing + ": no such file; run scripts/setup.sh to fetch Fashion-MNIST");
}

TEST_F(IdxTest, WrongMagicIsRejected) {
  write_raw(path("labels"), labels_);
  const std::string message = error_of([&] { read_idx_images(path("labels"), kFetch); });
  EXPECT_NE(message.find("not an IDX images file (magic number 0x00000801, expected 0x00000803"), std::string::npos)
      << message;
  EXPECT_NE(message.find(kFetch), std::string::npos);
}

TEST_F(IdxTest, TruncatedFileIsRejectedRawAndGzipped) {
  std::vector<uint8_t> truncated(images_.begin(), images_.end() - 1);
  write_raw(path("raw"), truncated);
  write_gz(path("packed.gz"), truncated);
  for (const char* name : {"raw", "packed.gz"}) {
    const std::string message = error_of([&] { read_idx_images(path(name), kFetch); });
    EXPECT_NE(message.find("file is truncated: images needs 12 bytes, found 11"), std::string::npos) << message;
  }
  write_raw(path("header_only"), std::vector<uint8_t>(images_.begin(), images_.begin() + 6));
  EXPECT_NE(error_of([&] { read_idx_images(path("header_only"), kFetch); }).find("truncated"), std::string::npos);
}

TEST_F(IdxTest, LongerFileThanHeaderIsRejected) {
  std::vector<uint8_t> longer = labels_;
  longer.push_back(0);
  write_raw(path("labels"), longer);
  EXPECT_NE(error_of([&] { read_idx_labels(path("labels"), kFetch); }).find("longer than its header"),
            std::string::npos);
}

TEST_F(IdxTest, ZeroSizeAndCorruptGzipAreRejected) {
  write_raw(path("zero"), idx_bytes(0x803, {0, 2, 2}, {}));
  EXPECT_NE(error_of([&] { read_idx_images(path("zero"), kFetch); }).find("dimension 0 is 0"), std::string::npos);
  // A gzip header followed by garbage.
  write_raw(path("bad.gz"), {0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 0x03, 0xde, 0xad, 0xbe, 0xef, 0x01, 0x02});
  EXPECT_NE(error_of([&] { read_idx_images(path("bad.gz"), kFetch); }), "");
  EXPECT_NE(error_of([&] { read_idx_images(dir_.string(), kFetch); }).find("is a folder"), std::string::npos);
}

TEST(IdxFashionMnist, ReadsTheRealFilesWhenPresent) {
  const fs::path root = fs::path(ATTNZOO_SOURCE_DIR) / "data" / "fashion-mnist";
  if (!fs::exists(root / "train-images-idx3-ubyte") && !fs::exists(root / "train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << root << " is absent; scripts/setup.sh fetches it";
  torch::Tensor images = read_idx_images((root / "train-images-idx3-ubyte").string(), kFetch);
  torch::Tensor labels = read_idx_labels((root / "train-labels-idx1-ubyte").string(), kFetch);
  EXPECT_EQ(images.sizes(), (std::vector<int64_t>{60000, 28, 28}));
  EXPECT_EQ(labels.size(0), 60000);
  EXPECT_EQ(labels[0].item<int>(), 9);  // the first training image is an ankle boot
  EXPECT_EQ(labels.max().item<int>(), 9);
  EXPECT_EQ(torch::bincount(labels.to(torch::kInt64)).min().item<int64_t>(), 6000);  // 6000 per class
  EXPECT_EQ(read_idx_images((root / "t10k-images-idx3-ubyte").string(), kFetch).size(0), 10000);
}

}  // namespace
}  // namespace attnzoo
