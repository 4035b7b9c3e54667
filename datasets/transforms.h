#pragma once
// Image transforms in the torchvision style, applied to cv::Mat (cheap on small images, no tensor work per
// sample), with all randomness from the generator the loader gives each example (see datasets/dataset.h).
// Order in a pipeline: Resize -> RandomCrop -> RandomHorizontalFlip -> to tensor -> Normalize.
#include <torch/types.h>

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace cv {
class Mat;
}

namespace attnzoo {

class ImageTransform {
 public:
  virtual ~ImageTransform() = default;
  // Returns a new image (or `image` itself when nothing changes); never modifies `image`.
  virtual cv::Mat apply(const cv::Mat& image, std::mt19937_64& rng) const = 0;
  virtual std::string describe() const = 0;
};

// Resizes to exactly height x width (area interpolation when shrinking, bilinear when enlarging).
class Resize : public ImageTransform {
 public:
  Resize(int64_t height, int64_t width);
  cv::Mat apply(const cv::Mat& image, std::mt19937_64& rng) const override;
  std::string describe() const override;

 private:
  int64_t height_, width_;
};

// torchvision RandomCrop(size, padding=padding): pads every side with `padding` zeros, then crops
// height x width at a uniformly random position. height = width = 0 crops back to the input's size.
class RandomCrop : public ImageTransform {
 public:
  RandomCrop(int64_t height, int64_t width, int64_t padding);
  cv::Mat apply(const cv::Mat& image, std::mt19937_64& rng) const override;
  std::string describe() const override;

 private:
  int64_t height_, width_, padding_;
};

// Mirrors left-right with probability p.
class RandomHorizontalFlip : public ImageTransform {
 public:
  explicit RandomHorizontalFlip(double p = 0.5);
  cv::Mat apply(const cv::Mat& image, std::mt19937_64& rng) const override;
  std::string describe() const override;

 private:
  double p_;
};

// (x - mean[c]) / std[c] on a float [C, H, W] tensor. The pipeline fuses it into image_to_tensor instead
// of calling it, which gives the same numbers without a second pass.
class Normalize {
 public:
  Normalize(std::vector<double> mean, std::vector<double> std);
  torch::Tensor operator()(const torch::Tensor& image) const;
  const std::vector<double>& mean() const { return mean_; }
  const std::vector<double>& std() const { return std_; }
  std::string describe() const;

 private:
  std::vector<double> mean_, std_;
};

struct TransformOptions {
  int64_t image_height = 0;  // resize to image_height x image_width; 0 = keep the native size
  int64_t image_width = 0;
  int64_t random_crop_padding = 0;  // > 0: RandomCrop(same size, padding)
  bool horizontal_flip = false;     // RandomHorizontalFlip(0.5)
  std::vector<double> mean, std;    // Normalize; empty = none
};

// image (gray / BGR / BGRA, any size) -> normalized float [C, H, W].
class TransformPipeline {
 public:
  explicit TransformPipeline(const TransformOptions& options = {});
  // The cv::Mat steps only (resize, crop, flip).
  cv::Mat transform_image(const cv::Mat& image, std::mt19937_64& rng) const;
  // transform_image, then image_to_tensor with normalization.
  torch::Tensor operator()(const cv::Mat& image, std::mt19937_64& rng) const;
  bool is_random() const { return random_; }
  // {height, width} every output has whatever the input size, if the pipeline resizes.
  std::optional<std::pair<int64_t, int64_t>> fixed_size() const { return fixed_size_; }
  const std::optional<Normalize>& normalize() const { return normalize_; }
  // "resize 32x32, random crop pad 4, horizontal flip p=0.5, normalize mean [0.5] std [0.5]" or "none".
  std::string describe() const;

 private:
  std::vector<std::shared_ptr<const ImageTransform>> steps_;
  std::optional<Normalize> normalize_;
  bool random_ = false;
  std::optional<std::pair<int64_t, int64_t>> fixed_size_;
};

}  // namespace attnzoo
