#include "datasets/image_tensor.h"

#include <torch/torch.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <stdexcept>
#include <string>

namespace attnzoo {
namespace {

// The value that means "full intensity" at each depth, so every depth maps onto [0, 1].
double max_value(const cv::Mat& image) {
  switch (image.depth()) {
    case CV_8U: return 255.0;
    case CV_16U: return 65535.0;
    case CV_32F: return 1.0;
    default:
      throw std::invalid_argument("image_to_tensor: unsupported pixel depth " + std::to_string(image.depth()) +
                                  " (expected 8-bit, 16-bit or float)");
  }
}

void check_layout(const cv::Mat& image) {
  if (image.empty() || image.dims != 2) throw std::invalid_argument("image_to_tensor: empty or non-2-D image");
  const int channels = image.channels();
  if (channels != 1 && channels != 3 && channels != 4)
    throw std::invalid_argument("image_to_tensor: " + std::to_string(channels) +
                                " channels (expected gray, BGR or BGRA)");
}

}  // namespace

cv::Mat composite_onto_white(const cv::Mat& image) {
  check_layout(image);
  if (image.channels() != 4) return image;
  const double full = max_value(image);
  cv::Mat pixels;
  image.convertTo(pixels, CV_32F, 1.0 / full);
  cv::Mat planes[4];
  cv::split(pixels, planes);
  const cv::Mat& alpha = planes[3];
  cv::Mat transparency = 1.0 - alpha;  // how much of the white background shows through
  cv::Mat composited[3];
  for (int c = 0; c < 3; ++c) composited[c] = planes[c].mul(alpha) + transparency;  // c*a + 1*(1-a)
  cv::Mat merged, result;
  cv::merge(composited, 3, merged);
  merged.convertTo(result, image.depth(), full);  // rounds to nearest at integer depths
  return result;
}

torch::Tensor image_to_tensor(const cv::Mat& image) { return image_to_tensor(image, {}, {}); }

torch::Tensor image_to_tensor(const cv::Mat& image, const std::vector<double>& mean, const std::vector<double>& stddev) {
  check_layout(image);
  const cv::Mat source = composite_onto_white(image);
  const int channels = source.channels();
  const bool normalize = !mean.empty() || !stddev.empty();
  if (normalize && (mean.size() != static_cast<size_t>(channels) || stddev.size() != static_cast<size_t>(channels)))
    throw std::invalid_argument("image_to_tensor: normalization has " + std::to_string(mean.size()) + " means and " +
                                std::to_string(stddev.size()) + " stds for a " + std::to_string(channels) +
                                "-channel image");
  const double scale = 1.0 / max_value(source);
  const int height = source.rows, width = source.cols;

  // The tensor owns the memory; OpenCV writes each channel plane straight into it (HWC -> CHW).
  torch::Tensor tensor = torch::empty({channels, height, width}, torch::kFloat32);
  float* data = tensor.data_ptr<float>();
  auto plane = [&](int c) { return cv::Mat(height, width, CV_32F, data + static_cast<size_t>(c) * height * width); };
  // x -> (x * scale - mean) / std, as one affine map per channel: alpha * x + beta.
  auto convert = [&](const cv::Mat& from, int c) {
    const double alpha = normalize ? scale / stddev[c] : scale;
    const double beta = normalize ? -mean[c] / stddev[c] : 0.0;
    cv::Mat to = plane(c);
    from.convertTo(to, CV_32F, alpha, beta);  // `to` already has the right size and type: no reallocation
  };
  if (channels == 1) {
    convert(source, 0);
  } else {
    cv::Mat bgr[3];
    cv::split(source, bgr);
    for (int c = 0; c < 3; ++c) convert(bgr[2 - c], c);  // RGB channel c comes from BGR plane 2 - c
  }
  return tensor;
}

cv::Mat tensor_to_image(const torch::Tensor& image) {
  torch::Tensor chw = image.detach().to(torch::kCPU, torch::kFloat32);
  if (chw.dim() == 2) chw = chw.unsqueeze(0);
  if (chw.dim() != 3 || (chw.size(0) != 1 && chw.size(0) != 3))
    throw std::invalid_argument("tensor_to_image: expected [C, H, W] with C = 1 or 3, or [H, W]; got " +
                                std::to_string(chw.dim()) + " dims");
  const int channels = static_cast<int>(chw.size(0));
  torch::Tensor hwc = chw.clamp(0.0, 1.0).mul(255.0).round().to(torch::kUInt8).permute({1, 2, 0}).contiguous();
  const cv::Mat view(static_cast<int>(hwc.size(0)), static_cast<int>(hwc.size(1)), CV_8UC(channels), hwc.data_ptr());
  cv::Mat result;
  if (channels == 3)
    cv::cvtColor(view, result, cv::COLOR_RGB2BGR);  // writes a new, owned Mat
  else
    result = view.clone();  // `view` points into `hwc`, which dies here
  return result;
}

}  // namespace attnzoo
