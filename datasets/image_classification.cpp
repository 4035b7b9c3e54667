#include "datasets/image_classification.h"

#include <torch/torch.h>

#include <fmt/format.h>
#include <opencv2/core.hpp>

#include "datasets/data_error.h"

namespace attnzoo {

const std::vector<std::string>& fashion_mnist_class_names() {
  static const std::vector<std::string> names{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                              "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  return names;
}

const std::vector<std::string>& mnist_class_names() {
  static const std::vector<std::string> names{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
  return names;
}

ImageClassificationDataset::ImageClassificationDataset(std::string name, std::vector<std::string> class_names,
                                                       std::vector<int64_t> rows, TransformPipeline transforms)
    : name_(std::move(name)),
      class_names_(std::move(class_names)),
      rows_(std::move(rows)),
      transforms_(std::move(transforms)) {}

void ImageClassificationDataset::find_input_shape() {
  if (rows_.empty()) return;
  std::mt19937_64 rng(0);  // crops and flips keep the shape, so any draw gives the same answer
  input_shape_ = transforms_(source_image(rows_.front()), rng).sizes().vec();
}

Example ImageClassificationDataset::get(size_t index, std::mt19937_64& rng) const {
  const int64_t row = rows_.at(index);
  Example example;
  example.input = transforms_(source_image(row), rng);
  example.target = torch::scalar_tensor(source_label(row), torch::kInt64);
  example.id = source_id(row);
  return example;
}

std::string ImageClassificationDataset::describe() const {
  return fmt::format("{}: {} images, {} classes, {}, transforms: {}", name_, rows_.size(), class_names_.size(),
                     fmt::join(input_shape_, "x"), transforms_.describe());
}

ImageArrayDataset::ImageArrayDataset(std::string name, std::string source, torch::Tensor images, torch::Tensor labels,
                                     std::vector<std::string> class_names, std::vector<int64_t> rows,
                                     TransformPipeline transforms)
    : ImageClassificationDataset(name, std::move(class_names), std::move(rows), std::move(transforms)),
      source_(std::move(source)),
      images_(images.contiguous()) {
  if (images_.dim() != 3 || images_.scalar_type() != torch::kUInt8)
    throw DataError(fmt::format("{}: images must be uint8 [N, H, W], got {} dims", name, images_.dim()));
  if (labels.dim() != 1 || labels.size(0) != images_.size(0))
    throw DataError(fmt::format("{}: {} images but {} labels; the files do not belong together (re-fetch them)", name,
                                images_.size(0), labels.dim() == 1 ? labels.size(0) : -1));
  const torch::Tensor labels64 = labels.to(torch::kInt64).contiguous();
  labels_.assign(labels64.data_ptr<int64_t>(), labels64.data_ptr<int64_t>() + labels64.numel());
  const auto num_classes = static_cast<int64_t>(ImageClassificationDataset::class_names().size());
  for (size_t i = 0; i < labels_.size(); ++i)
    if (labels_[i] < 0 || labels_[i] >= num_classes)
      throw DataError(fmt::format("{}: label {} of row {} is not one of the {} classes", name, labels_[i], i,
                                  num_classes));
  for (int64_t row : ImageClassificationDataset::rows())
    if (row < 0 || row >= images_.size(0))
      throw std::out_of_range(fmt::format("{}: row {} outside [0, {})", name, row, images_.size(0)));
  find_input_shape();
}

cv::Mat ImageArrayDataset::source_image(int64_t row) const {
  // A header over the row's pixels, no copy. Transforms and image_to_tensor only read it.
  const int height = static_cast<int>(images_.size(1)), width = static_cast<int>(images_.size(2));
  uint8_t* pixels = images_.data_ptr<uint8_t>() + row * height * width;
  return cv::Mat(height, width, CV_8UC1, pixels);
}

std::string ImageArrayDataset::source_id(int64_t row) const { return fmt::format("{}:{}", source_, row); }

}  // namespace attnzoo
