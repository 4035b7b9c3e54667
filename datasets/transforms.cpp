#include "datasets/transforms.h"

#include <torch/torch.h>

#include <fmt/format.h>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <stdexcept>

#include "datasets/image_tensor.h"
#include "datasets/random.h"

namespace attnzoo {
namespace {

std::string list_text(const std::vector<double>& values) {
  return fmt::format("[{:.4g}]", fmt::join(values, ", "));
}

}  // namespace

Resize::Resize(int64_t height, int64_t width) : height_(height), width_(width) {
  if (height <= 0 || width <= 0) throw std::invalid_argument(fmt::format("Resize: bad size {}x{}", height, width));
}

cv::Mat Resize::apply(const cv::Mat& image, std::mt19937_64&) const {
  if (image.rows == height_ && image.cols == width_) return image;
  const bool shrinking = height_ <= image.rows && width_ <= image.cols;
  cv::Mat resized;
  cv::resize(image, resized, cv::Size(static_cast<int>(width_), static_cast<int>(height_)), 0, 0,
             shrinking ? cv::INTER_AREA : cv::INTER_LINEAR);
  return resized;
}

std::string Resize::describe() const { return fmt::format("resize {}x{}", height_, width_); }

RandomCrop::RandomCrop(int64_t height, int64_t width, int64_t padding)
    : height_(height), width_(width), padding_(padding) {
  if (height < 0 || width < 0 || padding < 0)
    throw std::invalid_argument(fmt::format("RandomCrop: bad size {}x{} or padding {}", height, width, padding));
}

cv::Mat RandomCrop::apply(const cv::Mat& image, std::mt19937_64& rng) const {
  const int pad = static_cast<int>(padding_);
  const int crop_height = height_ > 0 ? static_cast<int>(height_) : image.rows;
  const int crop_width = width_ > 0 ? static_cast<int>(width_) : image.cols;
  const int padded_height = image.rows + 2 * pad, padded_width = image.cols + 2 * pad;
  if (crop_height > padded_height || crop_width > padded_width)
    throw std::invalid_argument(fmt::format("RandomCrop: crop {}x{} is larger than the padded image {}x{}",
                                            crop_height, crop_width, padded_height, padded_width));
  const int top = static_cast<int>(uniform_below(rng, padded_height - crop_height + 1));
  const int left = static_cast<int>(uniform_below(rng, padded_width - crop_width + 1));
  // The same result as padding then cropping, without building the padded image: start from zeros and copy
  // in the part of the crop window that overlaps the original.
  const cv::Rect window(left - pad, top - pad, crop_width, crop_height);  // in the original's coordinates
  const cv::Rect inside = window & cv::Rect(0, 0, image.cols, image.rows);
  cv::Mat crop = cv::Mat::zeros(crop_height, crop_width, image.type());
  if (inside.area() > 0) image(inside).copyTo(crop(inside - window.tl()));
  return crop;
}

std::string RandomCrop::describe() const {
  if (height_ == 0 && width_ == 0) return fmt::format("random crop pad {}", padding_);
  return fmt::format("random crop {}x{} pad {}", height_, width_, padding_);
}

RandomHorizontalFlip::RandomHorizontalFlip(double p) : p_(p) {
  if (!(p >= 0.0 && p <= 1.0)) throw std::invalid_argument(fmt::format("RandomHorizontalFlip: p={} not in [0, 1]", p));
}

cv::Mat RandomHorizontalFlip::apply(const cv::Mat& image, std::mt19937_64& rng) const {
  if (uniform_unit(rng) >= p_) return image;
  cv::Mat flipped;
  cv::flip(image, flipped, 1);  // 1 = around the vertical axis
  return flipped;
}

std::string RandomHorizontalFlip::describe() const { return fmt::format("horizontal flip p={}", p_); }

Normalize::Normalize(std::vector<double> mean, std::vector<double> std) : mean_(std::move(mean)), std_(std::move(std)) {
  if (mean_.empty() || mean_.size() != std_.size())
    throw std::invalid_argument(fmt::format("Normalize: {} means and {} stds", mean_.size(), std_.size()));
  for (double s : std_)
    if (!(s > 0.0)) throw std::invalid_argument(fmt::format("Normalize: std {} must be > 0", s));
}

torch::Tensor Normalize::operator()(const torch::Tensor& image) const {
  const auto channels = static_cast<int64_t>(mean_.size());
  if (image.dim() != 3 || image.size(0) != channels)
    throw std::invalid_argument(fmt::format("Normalize: expected [{}, H, W], got {} dims", channels, image.dim()));
  const auto options = image.options();
  const auto mean = torch::tensor(mean_, options.dtype(torch::kFloat64)).to(options.dtype()).view({channels, 1, 1});
  const auto stddev = torch::tensor(std_, options.dtype(torch::kFloat64)).to(options.dtype()).view({channels, 1, 1});
  return (image - mean) / stddev;
}

std::string Normalize::describe() const {
  return fmt::format("normalize mean {} std {}", list_text(mean_), list_text(std_));
}

TransformPipeline::TransformPipeline(const TransformOptions& options) {
  if (options.image_height > 0 || options.image_width > 0) {
    steps_.push_back(std::make_shared<Resize>(options.image_height, options.image_width));
    fixed_size_ = std::make_pair(options.image_height, options.image_width);
  }
  if (options.random_crop_padding > 0) {
    steps_.push_back(std::make_shared<RandomCrop>(0, 0, options.random_crop_padding));
    random_ = true;
  }
  if (options.horizontal_flip) {
    steps_.push_back(std::make_shared<RandomHorizontalFlip>(0.5));
    random_ = true;
  }
  if (!options.mean.empty() || !options.std.empty()) normalize_.emplace(options.mean, options.std);
}

cv::Mat TransformPipeline::transform_image(const cv::Mat& image, std::mt19937_64& rng) const {
  cv::Mat current = image;
  for (const auto& step : steps_) current = step->apply(current, rng);
  return current;
}

torch::Tensor TransformPipeline::operator()(const cv::Mat& image, std::mt19937_64& rng) const {
  const cv::Mat transformed = transform_image(image, rng);
  if (!normalize_) return image_to_tensor(transformed);
  return image_to_tensor(transformed, normalize_->mean(), normalize_->std());
}

std::string TransformPipeline::describe() const {
  std::vector<std::string> parts;
  for (const auto& step : steps_) parts.push_back(step->describe());
  if (normalize_) parts.push_back(normalize_->describe());
  return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace attnzoo
