#pragma once
// The one conversion between OpenCV images and tensors (see shared/DESIGN.md: nowhere else converts).
//
// Conventions, the same as torchvision's ToTensor:
//   - input: 8-bit or 16-bit (or float in [0,1]) gray, BGR or BGRA, as cv::imread(IMREAD_UNCHANGED) returns it;
//   - BGR is turned into RGB; BGRA is composited onto a white background first (transparent -> white);
//   - output: float32 [C, H, W] in [0, 1] (C = 1 for gray, 3 for colour), owning its memory.
#include <torch/types.h>

#include <vector>

namespace cv {
class Mat;
}

namespace attnzoo {

// cv::Mat (gray / BGR / BGRA, 8U / 16U / 32F) -> float [C, H, W] in [0, 1], RGB order.
torch::Tensor image_to_tensor(const cv::Mat& image);

// The same, then (x - mean[c]) / std[c] per channel, fused into the one pass over the pixels so the
// loader does no extra tensor work per sample. mean and std have one entry per output channel.
torch::Tensor image_to_tensor(const cv::Mat& image, const std::vector<double>& mean, const std::vector<double>& stddev);

// Flattens alpha: BGRA -> BGR composited onto white, at the same depth (rounded). Gray and BGR come back as
// they are (shared, not copied). Datasets call it once at decode time so later crops pad with black, not
// with transparency.
cv::Mat composite_onto_white(const cv::Mat& image);

// The reverse, for overlays and reports: float [C, H, W] (C = 1 or 3, RGB) or [H, W] in [0, 1] -> 8-bit
// gray or BGR cv::Mat owning its memory. Values outside [0, 1] are clamped.
cv::Mat tensor_to_image(const torch::Tensor& image);

}  // namespace attnzoo
