#include "datasets/image_folder.h"

#include <torch/torch.h>

#include <fmt/format.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "datasets/data_error.h"
#include "datasets/image_tensor.h"

namespace attnzoo {
namespace {

namespace fs = std::filesystem;

constexpr size_t kSkippedNamesInWarning = 3;
constexpr size_t kDecodeChunk = 64;  // files decoded in parallel before the cache accounting catches up

struct Decoded {
  cv::Mat image;        // gray or BGR, 8 or 16 bit; empty if `problem` is set
  std::string problem;  // why the file was skipped
};

// Reads and decodes one file as cv::imread(IMREAD_UNCHANGED) would, then applies image_tensor's conventions
// (alpha onto white). Reading the bytes ourselves lets a zero-byte file be named as such, and imdecode throws
// rather than crashing on some corrupt files, which is caught here.
Decoded decode_image_file(const fs::path& path) {
  std::error_code error;
  const auto size = fs::file_size(path, error);
  if (error) return {{}, "cannot read it (" + error.message() + ")"};
  if (size == 0) return {{}, "empty file"};
  std::vector<uchar> bytes(size);
  std::ifstream in(path, std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)))
    return {{}, "cannot read it"};
  cv::Mat image;
  try {
    image = cv::imdecode(bytes, cv::IMREAD_UNCHANGED);
  } catch (const cv::Exception&) {
    image.release();
  }
  if (image.empty()) return {{}, "not an image, or corrupt"};
  if (image.depth() != CV_8U && image.depth() != CV_16U) return {{}, "unsupported pixel depth (not 8 or 16 bit)"};
  if (image.channels() != 1 && image.channels() != 3 && image.channels() != 4)
    return {{}, fmt::format("unsupported channel count {}", image.channels())};
  return {composite_onto_white(image), ""};
}

cv::Mat with_channels(const cv::Mat& image, int channels) {
  if (image.channels() == channels) return image;
  cv::Mat converted;
  cv::cvtColor(image, converted, channels == 3 ? cv::COLOR_GRAY2BGR : cv::COLOR_BGR2GRAY);
  return converted;
}

bool is_hidden(const fs::path& name) { return !name.empty() && name.string().front() == '.'; }

// Runs work(i) for i in [0, n) on a few threads; decoding dominates construction time on large folders.
template <class Work>
void parallel_for_each_index(size_t n, const Work& work) {
  const size_t threads = std::min<size_t>({n, std::max(1u, std::thread::hardware_concurrency()), 4});
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) work(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (size_t i = next++; i < n; i = next++) work(i);
    });
  for (auto& thread : pool) thread.join();
}

}  // namespace

ImageFolder::ImageFolder(std::string root, ImageFolderOptions options) : root_(std::move(root)) {
  std::error_code error;
  if (!fs::is_directory(root_, error))
    throw DataError(root_ + (fs::exists(root_, error) ? ": not a folder" : ": no such folder") +
                    "; point data.root at a folder with one subfolder per class");

  std::vector<std::string> folders;
  for (const auto& entry : fs::directory_iterator(root_, fs::directory_options::skip_permission_denied, error))
    if (entry.is_directory() && !is_hidden(entry.path().filename())) folders.push_back(entry.path().filename().string());
  std::sort(folders.begin(), folders.end());
  if (folders.empty())
    throw DataError(root_ + ": no class folders; expected one subfolder per class (" + root_ + "/CLASS/IMAGE.png)");

  class_names_ = options.class_names.empty() ? folders : options.class_names;
  // Every image path with its label, in a fixed order (sorted), so row numbers mean the same on every run.
  std::vector<std::pair<std::string, int64_t>> candidates;
  for (const auto& folder : folders) {
    const auto found = std::find(class_names_.begin(), class_names_.end(), folder);
    if (found == class_names_.end())
      throw DataError(fmt::format("{}: class folder '{}' is not one of the training classes ({}); remove it or add it "
                                  "to the training data",
                                  root_, folder, fmt::join(class_names_, ", ")));
    const auto label = static_cast<int64_t>(found - class_names_.begin());
    std::vector<std::string> files;
    const fs::path class_dir = fs::path(root_) / folder;
    auto options_flags = fs::directory_options::follow_directory_symlink | fs::directory_options::skip_permission_denied;
    for (auto it = fs::recursive_directory_iterator(class_dir, options_flags, error);
         it != fs::recursive_directory_iterator(); it.increment(error)) {
      if (error) break;
      if (is_hidden(it->path().filename())) {
        if (it->is_directory()) it.disable_recursion_pending();  // e.g. .ipynb_checkpoints
        continue;
      }
      if (it->is_regular_file()) files.push_back(it->path().lexically_relative(root_).generic_string());
    }
    std::sort(files.begin(), files.end());
    for (auto& file : files) candidates.emplace_back(std::move(file), label);
  }

  // Decode every file once (in parallel, a chunk at a time), keeping the good ones in order.
  int64_t cached_bytes = 0;
  bool any_colour = false;
  std::vector<Decoded> chunk;
  for (size_t start = 0; start < candidates.size(); start += kDecodeChunk) {
    const size_t count = std::min(kDecodeChunk, candidates.size() - start);
    chunk.assign(count, Decoded{});
    parallel_for_each_index(count, [&](size_t i) {
      chunk[i] = decode_image_file(fs::path(root_) / candidates[start + i].first);
    });
    for (size_t i = 0; i < count; ++i) {
      auto& [file, label] = candidates[start + i];
      Decoded& decoded = chunk[i];
      if (!decoded.problem.empty()) {
        skipped_.push_back(file + ": " + decoded.problem);
        continue;
      }
      const cv::Mat& image = decoded.image;
      any_colour = any_colour || image.channels() == 3;
      const int64_t bytes = static_cast<int64_t>(image.total() * image.elemSize());
      const bool keep = cached_bytes + bytes <= options.cache_limit_bytes;
      if (keep) cached_bytes += bytes;
      files_.push_back(std::move(file));
      labels_.push_back(label);
      sizes_.emplace_back(image.rows, image.cols);
      cache_.push_back(keep ? image : cv::Mat());
    }
  }

  if (!skipped_.empty()) {
    const size_t shown = std::min(skipped_.size(), kSkippedNamesInWarning);
    std::cerr << fmt::format("warning: {}: skipped {} unreadable file{} ({}{})\n", root_, skipped_.size(),
                             skipped_.size() == 1 ? "" : "s",
                             fmt::join(skipped_.begin(), skipped_.begin() + static_cast<std::ptrdiff_t>(shown), "; "),
                             skipped_.size() > shown ? "; ..." : "");
  }
  if (files_.empty())
    throw DataError(fmt::format("{}: no readable images in the class folders{}; add images (PNG, JPEG, ...) to "
                                "{}/CLASS/",
                                root_, skipped_.empty() ? "" : fmt::format(" ({} files skipped)", skipped_.size()),
                                root_));

  channels_ = options.channels != 0 ? options.channels : (any_colour ? 3 : 1);
  if (channels_ != 1 && channels_ != 3)
    throw std::invalid_argument(fmt::format("ImageFolder: channels must be 0, 1 or 3, not {}", channels_));
  for (auto& image : cache_)
    if (!image.empty()) image = with_channels(image, channels_);
}

ImageFolder::~ImageFolder() = default;

cv::Mat ImageFolder::image(size_t index) const {
  const cv::Mat& cached = cache_.at(index);
  if (!cached.empty()) return cached;
  Decoded decoded = decode_image_file(fs::path(root_) / files_[index]);
  if (!decoded.problem.empty())
    throw DataError(fmt::format("{}/{}: {} now, though it was readable when the data set was opened; was it changed "
                                "during training?",
                                root_, files_[index], decoded.problem));
  return with_channels(decoded.image, channels_);
}

std::optional<std::pair<int, int>> ImageFolder::common_size() const {
  for (const auto& size : sizes_)
    if (size != sizes_.front()) return std::nullopt;
  return sizes_.front();
}

size_t ImageFolder::cached_images() const {
  return static_cast<size_t>(std::count_if(cache_.begin(), cache_.end(), [](const cv::Mat& m) { return !m.empty(); }));
}

ImageFolderDataset::ImageFolderDataset(std::string name, std::shared_ptr<const ImageFolder> folder,
                                       TransformPipeline transforms)
    : ImageFolderDataset(std::move(name), folder, [&] {
        std::vector<int64_t> rows(folder->size());
        for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int64_t>(i);
        return rows;
      }(), std::move(transforms)) {}

ImageFolderDataset::ImageFolderDataset(std::string name, std::shared_ptr<const ImageFolder> folder,
                                       std::vector<int64_t> rows, TransformPipeline transforms)
    : ImageClassificationDataset(std::move(name), folder->class_names(), std::move(rows), std::move(transforms)),
      folder_(std::move(folder)) {
  const auto& my_rows = ImageClassificationDataset::rows();
  for (int64_t row : my_rows)
    if (row < 0 || static_cast<size_t>(row) >= folder_->size())
      throw std::out_of_range(fmt::format("{}: row {} outside [0, {})", folder_->root(), row, folder_->size()));
  // Images of different sizes cannot be stacked into a batch unless the transforms resize them.
  if (!ImageClassificationDataset::transforms().fixed_size()) {
    for (int64_t row : my_rows) {
      const auto first = folder_->image_size(static_cast<size_t>(my_rows.front()));
      const auto size = folder_->image_size(static_cast<size_t>(row));
      if (size != first)
        throw DataError(fmt::format("{}: images have different sizes ({} is {}x{}, {} is {}x{}); set data.image_size "
                                    "to resize them",
                                    folder_->root(), folder_->relative_path(static_cast<size_t>(my_rows.front())),
                                    first.first, first.second, folder_->relative_path(static_cast<size_t>(row)),
                                    size.first, size.second));
    }
  }
  find_input_shape();
}

cv::Mat ImageFolderDataset::source_image(int64_t row) const { return folder_->image(static_cast<size_t>(row)); }

}  // namespace attnzoo
