// One conversion between cv::Mat and tensors: checked on hand-made 2x2 images whose pixel values are known.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <opencv2/core.hpp>

#include "datasets/image_tensor.h"

namespace attnzoo {
namespace {

float at(const torch::Tensor& t, int64_t c, int64_t y, int64_t x) { return t[c][y][x].item<float>(); }

TEST(ImageToTensor, GrayUint8BecomesOneChannelInZeroOne) {
  cv::Mat gray = (cv::Mat_<uint8_t>(2, 2) << 0, 51, 102, 255);
  torch::Tensor t = image_to_tensor(gray);
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{1, 2, 2}));
  EXPECT_EQ(t.scalar_type(), torch::kFloat32);
  EXPECT_FLOAT_EQ(at(t, 0, 0, 0), 0.0f);
  EXPECT_FLOAT_EQ(at(t, 0, 0, 1), 0.2f);  // 51 / 255
  EXPECT_FLOAT_EQ(at(t, 0, 1, 0), 0.4f);  // 102 / 255
  EXPECT_FLOAT_EQ(at(t, 0, 1, 1), 1.0f);
}

TEST(ImageToTensor, BgrBecomesRgbChannelsFirst) {
  cv::Mat bgr(2, 2, CV_8UC3);
  bgr.at<cv::Vec3b>(0, 0) = {10, 20, 30};  // B, G, R
  bgr.at<cv::Vec3b>(0, 1) = {40, 50, 60};
  bgr.at<cv::Vec3b>(1, 0) = {70, 80, 90};
  bgr.at<cv::Vec3b>(1, 1) = {255, 0, 255};
  torch::Tensor t = image_to_tensor(bgr);
  ASSERT_EQ(t.sizes(), (std::vector<int64_t>{3, 2, 2}));
  // Channel 0 is red, 2 is blue; [c][y][x].
  EXPECT_FLOAT_EQ(at(t, 0, 0, 0), 30 / 255.0f);
  EXPECT_FLOAT_EQ(at(t, 1, 0, 0), 20 / 255.0f);
  EXPECT_FLOAT_EQ(at(t, 2, 0, 0), 10 / 255.0f);
  EXPECT_FLOAT_EQ(at(t, 0, 0, 1), 60 / 255.0f);
  EXPECT_FLOAT_EQ(at(t, 2, 0, 1), 40 / 255.0f);
  EXPECT_FLOAT_EQ(at(t, 0, 1, 0), 90 / 255.0f);
  EXPECT_FLOAT_EQ(at(t, 1, 1, 0), 80 / 255.0f);
  EXPECT_FLOAT_EQ(at(t, 0, 1, 1), 1.0f);
  EXPECT_FLOAT_EQ(at(t, 1, 1, 1), 0.0f);
  EXPECT_FLOAT_EQ(at(t, 2, 1, 1), 1.0f);
}

TEST(ImageToTensor, BgraIsCompositedOntoWhite) {
  cv::Mat bgra(2, 2, CV_8UC4);
  bgra.at<cv::Vec4b>(0, 0) = {10, 20, 30, 255};  // opaque: the colour itself
  bgra.at<cv::Vec4b>(0, 1) = {10, 20, 30, 0};    // transparent: white
  bgra.at<cv::Vec4b>(1, 0) = {0, 0, 0, 128};     // half black: 1 - 128/255 = 127/255
  bgra.at<cv::Vec4b>(1, 1) = {255, 255, 255, 77};
  torch::Tensor t = image_to_tensor(bgra);
  ASSERT_EQ(t.sizes(), (std::vector<int64_t>{3, 2, 2}));
  EXPECT_FLOAT_EQ(at(t, 0, 0, 0), 30 / 255.0f);
  EXPECT_FLOAT_EQ(at(t, 2, 0, 0), 10 / 255.0f);
  for (int c = 0; c < 3; ++c) {
    EXPECT_FLOAT_EQ(at(t, c, 0, 1), 1.0f);
    EXPECT_FLOAT_EQ(at(t, c, 1, 0), 127 / 255.0f);
    EXPECT_FLOAT_EQ(at(t, c, 1, 1), 1.0f);
  }
}

TEST(ImageToTensor, Gray16BitScalesByFullRange) {
  cv::Mat gray = (cv::Mat_<uint16_t>(2, 2) << 0, 65535, 13107, 256);
  torch::Tensor t = image_to_tensor(gray);
  EXPECT_FLOAT_EQ(at(t, 0, 0, 0), 0.0f);
  EXPECT_FLOAT_EQ(at(t, 0, 0, 1), 1.0f);
  EXPECT_FLOAT_EQ(at(t, 0, 1, 0), 0.2f);  // 13107 / 65535
  EXPECT_FLOAT_EQ(at(t, 0, 1, 1), 256 / 65535.0f);
}

TEST(ImageToTensor, Bgr16BitBecomesRgb) {
  cv::Mat bgr(2, 2, CV_16UC3, cv::Scalar(0, 0, 65535));  // pure red
  torch::Tensor t = image_to_tensor(bgr);
  EXPECT_FLOAT_EQ(at(t, 0, 1, 1), 1.0f);
  EXPECT_FLOAT_EQ(at(t, 2, 1, 1), 0.0f);
}

TEST(ImageToTensor, OwnsItsMemory) {
  cv::Mat gray = (cv::Mat_<uint8_t>(2, 2) << 255, 255, 255, 255);
  torch::Tensor t = image_to_tensor(gray);
  gray.setTo(0);
  gray.release();
  EXPECT_FLOAT_EQ(t.sum().item<float>(), 4.0f);
  EXPECT_TRUE(t.is_contiguous());
}

TEST(ImageToTensor, ReadsRegionsOfLargerImages) {
  cv::Mat big = (cv::Mat_<uint8_t>(3, 3) << 0, 1, 2, 3, 4, 5, 6, 7, 8);
  cv::Mat corner = big(cv::Rect(1, 1, 2, 2));  // not continuous: rows are 3 apart
  torch::Tensor t = image_to_tensor(corner).mul(255).round();
  EXPECT_TRUE(torch::equal(t, torch::tensor({4.f, 5.f, 7.f, 8.f}).view({1, 2, 2})));
}

TEST(ImageToTensor, FusedNormalizationIsMeanStdPerChannel) {
  cv::Mat bgr(2, 2, CV_8UC3, cv::Scalar(0, 51, 255));  // B=0, G=0.2, R=1
  torch::Tensor t = image_to_tensor(bgr, {0.5, 0.2, 0.25}, {0.5, 0.1, 0.25});
  EXPECT_NEAR(at(t, 0, 0, 0), (1.0 - 0.5) / 0.5, 1e-6);
  EXPECT_NEAR(at(t, 1, 1, 0), (0.2 - 0.2) / 0.1, 1e-6);
  EXPECT_NEAR(at(t, 2, 0, 1), (0.0 - 0.25) / 0.25, 1e-6);
}

TEST(ImageToTensor, RejectsWhatItCannotConvert) {
  EXPECT_THROW(image_to_tensor(cv::Mat()), std::invalid_argument);
  EXPECT_THROW(image_to_tensor(cv::Mat(2, 2, CV_8UC2, cv::Scalar(0, 0))), std::invalid_argument);
  EXPECT_THROW(image_to_tensor(cv::Mat(2, 2, CV_8UC1, cv::Scalar(0)), {0.5, 0.5, 0.5}, {1, 1, 1}),
               std::invalid_argument);
}

TEST(TensorToImage, RoundTripsBgrAndGrayExactly) {
  cv::Mat bgr(2, 2, CV_8UC3);
  bgr.at<cv::Vec3b>(0, 0) = {10, 20, 30};
  bgr.at<cv::Vec3b>(0, 1) = {40, 50, 60};
  bgr.at<cv::Vec3b>(1, 0) = {70, 80, 90};
  bgr.at<cv::Vec3b>(1, 1) = {255, 0, 128};
  cv::Mat back = tensor_to_image(image_to_tensor(bgr));
  ASSERT_EQ(back.type(), CV_8UC3);
  EXPECT_EQ(cv::norm(back, bgr, cv::NORM_INF), 0.0);

  cv::Mat gray = (cv::Mat_<uint8_t>(2, 2) << 0, 51, 102, 255);
  cv::Mat gray_back = tensor_to_image(image_to_tensor(gray));
  ASSERT_EQ(gray_back.type(), CV_8UC1);
  EXPECT_EQ(cv::norm(gray_back, gray, cv::NORM_INF), 0.0);
}

TEST(TensorToImage, ClampsAndAcceptsPlainHeightWidth) {
  cv::Mat image = tensor_to_image(torch::tensor({-1.0f, 0.5f, 1.0f, 7.0f}).view({2, 2}));
  ASSERT_EQ(image.type(), CV_8UC1);
  EXPECT_EQ(image.at<uint8_t>(0, 0), 0);
  EXPECT_EQ(image.at<uint8_t>(0, 1), 128);  // round(127.5)
  EXPECT_EQ(image.at<uint8_t>(1, 0), 255);
  EXPECT_EQ(image.at<uint8_t>(1, 1), 255);
  EXPECT_THROW(tensor_to_image(torch::zeros({2, 4, 4})), std::invalid_argument);
}

}  // namespace
}  // namespace attnzoo
