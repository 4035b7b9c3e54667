// Transforms on cv::Mat: checked against their definitions (pad-then-crop, mirror, area resize) with known pixels.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <opencv2/core.hpp>

#include <random>
#include <set>

#include "datasets/image_tensor.h"
#include "datasets/transforms.h"

namespace attnzoo {
namespace {

cv::Mat counting_image(int rows, int cols) {
  cv::Mat image(rows, cols, CV_8UC1);
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) image.at<uint8_t>(y, x) = static_cast<uint8_t>(1 + y * cols + x);  // no zeros
  return image;
}

bool same_pixels(const cv::Mat& a, const cv::Mat& b) {
  return a.size() == b.size() && a.type() == b.type() && cv::norm(a, b, cv::NORM_INF) == 0.0;
}

TEST(RandomCrop, EqualsZeroPaddingThenCroppingAtEveryOffset) {
  const cv::Mat image = counting_image(4, 5);
  const int padding = 2;
  cv::Mat padded;
  cv::copyMakeBorder(image, padded, padding, padding, padding, padding, cv::BORDER_CONSTANT, cv::Scalar(0));
  const RandomCrop crop(0, 0, padding);  // back to 4x5
  std::mt19937_64 rng(1);
  std::set<std::pair<int, int>> offsets_seen;
  for (int trial = 0; trial < 400; ++trial) {
    const cv::Mat out = crop.apply(image, rng);
    ASSERT_EQ(out.size(), image.size());
    // Find which window of the padded image it equals: exactly one offset must match.
    int matches = 0;
    for (int top = 0; top <= 2 * padding; ++top)
      for (int left = 0; left <= 2 * padding; ++left)
        if (same_pixels(out, padded(cv::Rect(left, top, image.cols, image.rows)))) {
          ++matches;
          offsets_seen.emplace(top, left);
        }
    ASSERT_EQ(matches, 1);
  }
  EXPECT_EQ(offsets_seen.size(), 25u);  // every one of the 5 x 5 offsets occurs
}

TEST(RandomCrop, ExplicitSizeAndColourImages) {
  cv::Mat bgr(6, 6, CV_8UC3, cv::Scalar(1, 2, 3));
  std::mt19937_64 rng(7);
  const cv::Mat out = RandomCrop(3, 4, 0).apply(bgr, rng);
  EXPECT_EQ(out.rows, 3);
  EXPECT_EQ(out.cols, 4);
  EXPECT_EQ(out.at<cv::Vec3b>(1, 1), cv::Vec3b(1, 2, 3));
  EXPECT_THROW(RandomCrop(8, 8, 0).apply(bgr, rng), std::invalid_argument);
}

TEST(RandomHorizontalFlip, MirrorsWithProbabilityP) {
  const cv::Mat image = counting_image(2, 3);
  cv::Mat mirrored;
  cv::flip(image, mirrored, 1);
  EXPECT_EQ(mirrored.at<uint8_t>(0, 0), 3);
  std::mt19937_64 rng(3);
  EXPECT_TRUE(same_pixels(RandomHorizontalFlip(1.0).apply(image, rng), mirrored));
  EXPECT_TRUE(same_pixels(RandomHorizontalFlip(0.0).apply(image, rng), image));
  int flips = 0;
  const RandomHorizontalFlip half(0.5);
  for (int i = 0; i < 2000; ++i) flips += same_pixels(half.apply(image, rng), mirrored) ? 1 : 0;
  EXPECT_NEAR(flips, 1000, 120);
}

TEST(Resize, AveragesBlocksWhenShrinking) {
  const cv::Mat image = (cv::Mat_<uint8_t>(4, 4) << 0, 0, 4, 4,  //
                         0, 0, 4, 4,                             //
                         8, 8, 12, 12,                           //
                         8, 8, 12, 12);
  std::mt19937_64 rng(0);
  const cv::Mat small = Resize(2, 2).apply(image, rng);
  EXPECT_TRUE(same_pixels(small, (cv::Mat_<uint8_t>(2, 2) << 0, 4, 8, 12)));
  const cv::Mat big = Resize(8, 6).apply(image, rng);
  EXPECT_EQ(big.rows, 8);
  EXPECT_EQ(big.cols, 6);
}

TEST(Normalize, SubtractsMeanDividesByStdPerChannel) {
  const Normalize normalize({0.5, 0.0}, {0.25, 2.0});
  const torch::Tensor image = torch::tensor({1.0f, 0.5f, 0.0f, 4.0f}).view({2, 1, 2});
  const torch::Tensor out = normalize(image);
  EXPECT_TRUE(torch::allclose(out, torch::tensor({2.0f, 0.0f, 0.0f, 2.0f}).view({2, 1, 2})));
  EXPECT_THROW(Normalize({0.5}, {0.0}), std::invalid_argument);
  EXPECT_THROW(normalize(torch::zeros({3, 2, 2})), std::invalid_argument);
}

TEST(TransformPipeline, FusedNormalizationEqualsNormalizeAfterConversion) {
  cv::Mat bgr(5, 7, CV_8UC3);
  cv::randu(bgr, 0, 256);
  TransformOptions options;
  options.mean = {0.485, 0.456, 0.406};
  options.std = {0.229, 0.224, 0.225};
  const TransformPipeline pipeline(options);
  std::mt19937_64 rng(0);
  const torch::Tensor fused = pipeline(bgr, rng);
  const torch::Tensor separate = Normalize(options.mean, options.std)(image_to_tensor(bgr));
  EXPECT_TRUE(torch::allclose(fused, separate, 1e-5, 1e-5));
}

TEST(TransformPipeline, SameGeneratorStateGivesTheSameAugmentation) {
  TransformOptions options;
  options.image_height = options.image_width = 8;
  options.random_crop_padding = 2;
  options.horizontal_flip = true;
  options.mean = {0.5};
  options.std = {0.5};
  const TransformPipeline pipeline(options);
  EXPECT_TRUE(pipeline.is_random());
  EXPECT_EQ(pipeline.describe(), "resize 8x8, random crop pad 2, horizontal flip p=0.5, normalize mean [0.5] std [0.5]");
  const cv::Mat image = counting_image(6, 6);
  std::mt19937_64 a(42), b(42);
  const torch::Tensor first = pipeline(image, a);
  EXPECT_EQ(first.sizes(), (std::vector<int64_t>{1, 8, 8}));
  EXPECT_TRUE(torch::equal(first, pipeline(image, b)));
  // Over many draws the augmentation varies.
  std::set<float> sums;
  for (int i = 0; i < 50; ++i) sums.insert(pipeline(image, a).sum().item<float>());
  EXPECT_GT(sums.size(), 5u);
  EXPECT_EQ(TransformPipeline().describe(), "none");
  EXPECT_FALSE(TransformPipeline().is_random());
}

TEST(TransformPipeline, LeavesTheInputUntouched) {
  const cv::Mat image = counting_image(4, 4);
  const cv::Mat copy = image.clone();
  TransformOptions options;
  options.random_crop_padding = 1;
  options.horizontal_flip = true;
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20; ++i) (void)TransformPipeline(options)(image, rng);
  EXPECT_TRUE(same_pixels(image, copy));
}

}  // namespace
}  // namespace attnzoo
