#pragma once
// Image classification datasets: each example is one image through a TransformPipeline and its class label.
// A dataset is a view of some rows of its source (so train/val splits share the decoded images), and get()
// only reads shared, immutable data: it is safe from many loader threads at once.
#include <torch/types.h>

#include <random>
#include <string>
#include <vector>

#include "datasets/dataset.h"
#include "datasets/transforms.h"

namespace cv {
class Mat;
}

namespace attnzoo {

const std::vector<std::string>& fashion_mnist_class_names();  // "T-shirt/top", "Trouser", ... "Ankle boot"
const std::vector<std::string>& mnist_class_names();          // "0" .. "9"

// What every image classification dataset shares; subclasses say where row r's image, label and id come from.
class ImageClassificationDataset : public Dataset {
 public:
  size_t size() const override { return rows_.size(); }
  // input: transformed float [C, H, W]; target: 0-dim int64 label; id: source_id(row).
  Example get(size_t index, std::mt19937_64& rng) const override;
  std::vector<std::string> class_names() const override { return class_names_; }
  std::vector<int64_t> input_shape() const override { return input_shape_; }
  // "fashion_mnist train: 54000 images, 10 classes, 1x28x28, transforms: random crop pad 4, normalize ..."
  std::string describe() const override;

  const std::vector<int64_t>& rows() const { return rows_; }
  int64_t label_of(size_t index) const { return source_label(rows_.at(index)); }
  const TransformPipeline& transforms() const { return transforms_; }

 protected:
  ImageClassificationDataset(std::string name, std::vector<std::string> class_names, std::vector<int64_t> rows,
                             TransformPipeline transforms);
  // Subclass constructors call this last (it calls the virtual functions below): runs the transforms on the
  // first image to learn the output shape.
  void find_input_shape();

  // The image of a source row: gray or BGR, 8 or 16 bit; may share memory with the source (never modified).
  virtual cv::Mat source_image(int64_t row) const = 0;
  virtual int64_t source_label(int64_t row) const = 0;
  virtual std::string source_id(int64_t row) const = 0;

 private:
  std::string name_;
  std::vector<std::string> class_names_;
  std::vector<int64_t> rows_;
  TransformPipeline transforms_;
  std::vector<int64_t> input_shape_;
};

// Gray images in memory as one uint8 tensor [N, H, W] with uint8 or int64 labels [N], as read from IDX files.
class ImageArrayDataset : public ImageClassificationDataset {
 public:
  // `name` is for logs ("fashion_mnist val"); ids read "`source`:row" (e.g. "train:1234", the row in the file).
  // Throws DataError if the counts differ or a label is not a class index.
  ImageArrayDataset(std::string name, std::string source, torch::Tensor images, torch::Tensor labels,
                    std::vector<std::string> class_names, std::vector<int64_t> rows, TransformPipeline transforms);

 protected:
  cv::Mat source_image(int64_t row) const override;
  int64_t source_label(int64_t row) const override { return labels_[static_cast<size_t>(row)]; }
  std::string source_id(int64_t row) const override;

 private:
  std::string source_;
  torch::Tensor images_;  // uint8 [N, H, W], contiguous
  std::vector<int64_t> labels_;
};

}  // namespace attnzoo
