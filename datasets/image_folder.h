#pragma once
// A folder of images with one subfolder per class (torchvision's ImageFolder layout):
//   root/cat/1.png, root/cat/more/2.jpg, root/dog/3.png ...   classes = sorted subfolder names.
// Files inside a class folder are collected recursively. Every file is decoded once at construction, so
// unreadable, corrupt, zero-byte and non-image files are found up front: they are skipped, counted and reported
// in one warning line, never a crash later. Hidden files (".DS_Store") are ignored. Decoded images are kept in
// memory up to a limit, so epochs do not decode again.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "datasets/image_classification.h"

namespace cv {
class Mat;
}

namespace attnzoo {

struct ImageFolderOptions {
  // Empty: the subfolder names. Otherwise the classes must come from this list (a test/ folder must use
  // train/'s classes and labels); a subfolder not in it is a DataError.
  std::vector<std::string> class_names;
  // 0: 3 if any image has colour, else 1. Otherwise every image is converted to this many channels (1 or 3).
  int channels = 0;
  // Decoded images are kept while their total stays under this; the rest are decoded again when used.
  int64_t cache_limit_bytes = int64_t{512} << 20;
};

class ImageFolder {
 public:
  // Throws DataError if `root` is missing, has no class folders, or no readable image.
  explicit ImageFolder(std::string root, ImageFolderOptions options = {});
  ~ImageFolder();

  const std::string& root() const { return root_; }
  size_t size() const { return files_.size(); }
  const std::vector<std::string>& class_names() const { return class_names_; }
  int channels() const { return channels_; }
  int64_t label(size_t index) const { return labels_.at(index); }
  const std::vector<int64_t>& labels() const { return labels_; }
  // Path relative to root, e.g. "cat/1.png": the example id in reports.
  const std::string& relative_path(size_t index) const { return files_.at(index); }
  // {height, width} of one image.
  std::pair<int, int> image_size(size_t index) const { return sizes_.at(index); }
  // Gray or BGR (as channels()), 8 or 16 bit, alpha composited onto white. Shared with the cache: do not modify.
  cv::Mat image(size_t index) const;
  // {height, width} if every image has the same size.
  std::optional<std::pair<int, int>> common_size() const;
  // Relative paths of the files that were skipped, with the reason ("cat/x.png: empty file").
  const std::vector<std::string>& skipped() const { return skipped_; }
  size_t cached_images() const;

 private:
  std::string root_;
  std::vector<std::string> class_names_;
  int channels_ = 0;
  std::vector<std::string> files_;  // relative to root
  std::vector<int64_t> labels_;
  std::vector<std::pair<int, int>> sizes_;
  std::vector<cv::Mat> cache_;  // empty Mat = not cached
  std::vector<std::string> skipped_;
};

// A view of some images of an ImageFolder through a TransformPipeline.
class ImageFolderDataset : public ImageClassificationDataset {
 public:
  // `rows` index into `folder`. Throws DataError if the images differ in size and `transforms` does not resize.
  ImageFolderDataset(std::string name, std::shared_ptr<const ImageFolder> folder, std::vector<int64_t> rows,
                     TransformPipeline transforms);
  // Every image of `folder`.
  ImageFolderDataset(std::string name, std::shared_ptr<const ImageFolder> folder, TransformPipeline transforms);

  const ImageFolder& folder() const { return *folder_; }

 protected:
  cv::Mat source_image(int64_t row) const override;
  int64_t source_label(int64_t row) const override { return folder_->label(static_cast<size_t>(row)); }
  std::string source_id(int64_t row) const override { return folder_->relative_path(static_cast<size_t>(row)); }

 private:
  std::shared_ptr<const ImageFolder> folder_;
};

}  // namespace attnzoo
