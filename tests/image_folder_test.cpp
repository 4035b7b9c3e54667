// Image folders made by the test: good PNGs in class folders (one nested), plus a corrupt file, a zero-byte file,
// a .txt and a hidden file, which must be skipped and counted, never crash.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <filesystem>
#include <fstream>
#include <random>

#include "datasets/data_error.h"
#include "datasets/image_folder.h"

namespace attnzoo {
namespace {

namespace fs = std::filesystem;

class ImageFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("attnzoo_image_folder_test_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void write_png(const std::string& relative, const cv::Mat& image) const {
    const fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    ASSERT_TRUE(cv::imwrite(path.string(), image)) << path;
  }
  void write_bytes(const std::string& relative, const std::string& bytes) const {
    const fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << bytes;
  }
  // cat: 2 red PNGs + 1 in a subfolder; dog: 1 blue PNG + 1 RGBA PNG; and four files that are not images.
  void make_pets() const {
    write_png("cat/a.png", cv::Mat(4, 4, CV_8UC3, cv::Scalar(0, 0, 255)));
    write_png("cat/b.png", cv::Mat(4, 4, CV_8UC3, cv::Scalar(0, 0, 200)));
    write_png("cat/more/c.png", cv::Mat(4, 4, CV_8UC3, cv::Scalar(0, 0, 100)));
    write_png("dog/d.png", cv::Mat(4, 4, CV_8UC3, cv::Scalar(255, 0, 0)));
    write_png("dog/e.png", cv::Mat(4, 4, CV_8UC4, cv::Scalar(0, 0, 0, 0)));  // fully transparent -> white
    write_bytes("cat/corrupt.png", std::string("\x89PNG\r\n\x1a\n this is not really a png"));
    write_bytes("dog/empty.png", "");
    write_bytes("dog/notes.txt", "a note, not an image");
    write_bytes("dog/.DS_Store", "hidden");
  }
  std::string root() const { return root_.string(); }

  fs::path root_;
};

TEST_F(ImageFolderTest, FindsClassesAndImagesAndSkipsBadFiles) {
  make_pets();
  testing::internal::CaptureStderr();
  const ImageFolder folder(root());
  const std::string warning = testing::internal::GetCapturedStderr();
  EXPECT_EQ(folder.class_names(), (std::vector<std::string>{"cat", "dog"}));
  ASSERT_EQ(folder.size(), 5u);
  EXPECT_EQ(folder.relative_path(0), "cat/a.png");
  EXPECT_EQ(folder.relative_path(2), "cat/more/c.png");
  EXPECT_EQ(folder.relative_path(4), "dog/e.png");
  EXPECT_EQ(folder.labels(), (std::vector<int64_t>{0, 0, 0, 1, 1}));
  EXPECT_EQ(folder.channels(), 3);
  EXPECT_EQ(folder.cached_images(), 5u);
  ASSERT_EQ(folder.skipped().size(), 3u);  // corrupt, empty, txt; the hidden file is ignored
  EXPECT_EQ(folder.skipped()[0], "cat/corrupt.png: not an image, or corrupt");
  EXPECT_EQ(folder.skipped()[1], "dog/empty.png: empty file");
  EXPECT_EQ(folder.skipped()[2], "dog/notes.txt: not an image, or corrupt");
  EXPECT_NE(warning.find("warning: " + root() + ": skipped 3 unreadable files (cat/corrupt.png"), std::string::npos)
      << warning;
}

TEST_F(ImageFolderTest, DatasetGivesRgbTensorsLabelsAndIds) {
  make_pets();
  testing::internal::CaptureStderr();
  auto folder = std::make_shared<const ImageFolder>(root());
  testing::internal::GetCapturedStderr();
  TransformOptions options;
  options.mean = {0.5, 0.5, 0.5};
  options.std = {0.5, 0.5, 0.5};
  const ImageFolderDataset dataset("pets", folder, TransformPipeline(options));
  EXPECT_EQ(dataset.size(), 5u);
  EXPECT_EQ(dataset.input_shape(), (std::vector<int64_t>{3, 4, 4}));
  std::mt19937_64 rng(0);
  const Example red = dataset.get(0, rng);
  EXPECT_EQ(red.id, "cat/a.png");
  EXPECT_EQ(red.target.item<int64_t>(), 0);
  EXPECT_FLOAT_EQ(red.input[0][0][0].item<float>(), 1.0f);   // R = 1 -> (1 - 0.5) / 0.5
  EXPECT_FLOAT_EQ(red.input[2][0][0].item<float>(), -1.0f);  // B = 0
  const Example transparent = dataset.get(4, rng);
  EXPECT_EQ(transparent.target.item<int64_t>(), 1);
  EXPECT_TRUE(torch::allclose(transparent.input, torch::ones({3, 4, 4})));  // white
  const Batch batch = dataset.collate({dataset.get(1, rng), dataset.get(3, rng)});
  EXPECT_EQ(batch.input.sizes(), (std::vector<int64_t>{2, 3, 4, 4}));
  EXPECT_TRUE(torch::equal(batch.target, torch::tensor({0, 1}, torch::kInt64)));
  EXPECT_EQ(batch.ids, (std::vector<std::string>{"cat/b.png", "dog/d.png"}));
  EXPECT_NE(dataset.describe().find("pets: 5 images, 2 classes, 3x4x4"), std::string::npos) << dataset.describe();
}

TEST_F(ImageFolderTest, GrayFolderHasOneChannelAndMixedFoldersBecomeColour) {
  write_png("zero/a.png", cv::Mat(3, 3, CV_8UC1, cv::Scalar(51)));
  write_png("one/b.png", cv::Mat(3, 3, CV_8UC1, cv::Scalar(102)));
  EXPECT_EQ(ImageFolder(root()).channels(), 1);
  write_png("one/colour.png", cv::Mat(3, 3, CV_8UC3, cv::Scalar(1, 2, 3)));
  const ImageFolder mixed(root());
  EXPECT_EQ(mixed.channels(), 3);
  const cv::Mat gray_as_colour = mixed.image(2);  // "zero/a.png" sorts after "one/..."
  EXPECT_EQ(mixed.relative_path(2), "zero/a.png");
  EXPECT_EQ(gray_as_colour.channels(), 3);
  EXPECT_EQ(gray_as_colour.at<cv::Vec3b>(0, 0), cv::Vec3b(51, 51, 51));
}

TEST_F(ImageFolderTest, UncachedImagesAreDecodedAgainTheSame) {
  make_pets();
  testing::internal::CaptureStderr();
  const ImageFolder cached(root());
  ImageFolderOptions options;
  options.cache_limit_bytes = 0;
  const ImageFolder uncached(root(), options);
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(uncached.cached_images(), 0u);
  for (size_t i = 0; i < cached.size(); ++i)
    EXPECT_EQ(cv::norm(cached.image(i), uncached.image(i), cv::NORM_INF), 0.0) << cached.relative_path(i);
}

TEST_F(ImageFolderTest, SixteenBitImagesKeepTheirRange) {
  cv::Mat deep(2, 2, CV_16UC1, cv::Scalar(65535));
  deep.at<uint16_t>(0, 0) = 0;
  write_png("a/deep.png", deep);
  auto folder = std::make_shared<const ImageFolder>(root());
  const ImageFolderDataset dataset("deep", folder, TransformPipeline());
  std::mt19937_64 rng(0);
  const torch::Tensor image = dataset.get(0, rng).input;
  EXPECT_FLOAT_EQ(image[0][0][0].item<float>(), 0.0f);
  EXPECT_FLOAT_EQ(image[0][1][1].item<float>(), 1.0f);
}

// Runs `make` and returns the DataError's message ("" if none was thrown).
template <class Make>
std::string error_of(Make make) {
  try {
    testing::internal::CaptureStderr();
    make();
    testing::internal::GetCapturedStderr();
  } catch (const DataError& e) {
    testing::internal::GetCapturedStderr();
    return e.what();
  }
  return "";
}

TEST_F(ImageFolderTest, EmptyOrMissingFoldersAreDataErrorsNamingTheFolder) {
  EXPECT_EQ(error_of([&] { ImageFolder folder(root()); }),
            "data error: " + root() + ": no class folders; expected one subfolder per class (" + root() +
                "/CLASS/IMAGE.png)");
  write_bytes("cat/broken.jpg", "not a jpeg");
  write_bytes("cat/empty.png", "");
  EXPECT_EQ(error_of([&] { ImageFolder folder(root()); }),
            "data error: " + root() + ": no readable images in the class folders (2 files skipped); add images (PNG, "
            "JPEG, ...) to " + root() + "/CLASS/");
  const std::string missing = root() + "/nowhere";
  EXPECT_EQ(error_of([&] { ImageFolder folder(missing); }),
            "data error: " + missing + ": no such folder; point data.root at a folder with one subfolder per class");
}

TEST_F(ImageFolderTest, DifferentSizesNeedAResize) {
  write_png("a/small.png", cv::Mat(3, 3, CV_8UC1, cv::Scalar(0)));
  write_png("b/big.png", cv::Mat(5, 4, CV_8UC1, cv::Scalar(0)));
  auto folder = std::make_shared<const ImageFolder>(root());
  EXPECT_FALSE(folder->common_size());
  EXPECT_NE(error_of([&] { ImageFolderDataset dataset("x", folder, TransformPipeline()); })
                .find("images have different sizes (a/small.png is 3x3, b/big.png is 5x4); set data.image_size"),
            std::string::npos);
  TransformOptions resize;
  resize.image_height = resize.image_width = 6;
  const ImageFolderDataset resized("x", folder, TransformPipeline(resize));
  EXPECT_EQ(resized.input_shape(), (std::vector<int64_t>{1, 6, 6}));
}

TEST_F(ImageFolderTest, TestFolderMustUseTrainingClasses) {
  write_png("dog/a.png", cv::Mat(2, 2, CV_8UC1, cv::Scalar(0)));
  write_png("horse/b.png", cv::Mat(2, 2, CV_8UC1, cv::Scalar(0)));
  ImageFolderOptions options;
  options.class_names = {"cat", "dog"};
  EXPECT_NE(error_of([&] { ImageFolder folder(root(), options); })
                .find("class folder 'horse' is not one of the training classes (cat, dog)"),
            std::string::npos);
  fs::remove_all(root_ / "horse");
  const ImageFolder test(root(), options);
  EXPECT_EQ(test.labels(), (std::vector<int64_t>{1}));  // dog keeps train's label 1 although cat/ is absent
}

}  // namespace
}  // namespace attnzoo
