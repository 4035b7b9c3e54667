#include "datasets/data_config.h"

#include <torch/torch.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "datasets/data_error.h"
#include "datasets/idx.h"
#include "datasets/image_classification.h"
#include "datasets/image_folder.h"
#include "datasets/random.h"
#include "datasets/transforms.h"

namespace attnzoo {
namespace {

namespace fs = std::filesystem;

// Splits never depend on the experiment's seed: runs with different seeds are evaluated on the same images.
constexpr uint64_t kSplitSeed = 0x73706c6974;  // "split"

struct SplitRows {
  std::vector<int64_t> train, val, test;
};

// For each class: a fixed-seed shuffle of its rows, then round(test_fraction * n) rows go to test,
// round(val_fraction * n) to val, the rest to train. Stratified, so small folders keep their class balance.
// Each list comes back sorted.
SplitRows split_by_class(const std::vector<int64_t>& labels, double val_fraction, double test_fraction) {
  std::map<int64_t, std::vector<int64_t>> rows_of_class;
  for (size_t row = 0; row < labels.size(); ++row) rows_of_class[labels[row]].push_back(static_cast<int64_t>(row));
  SplitRows split;
  for (auto& [label, rows] : rows_of_class) {
    std::mt19937_64 rng(mix_seed({kSplitSeed, static_cast<uint64_t>(label)}));
    shuffle_in_place(rows, rng);
    const auto n = static_cast<double>(rows.size());
    const auto num_test = static_cast<size_t>(std::llround(test_fraction * n));
    const auto num_val = std::min(rows.size() - num_test, static_cast<size_t>(std::llround(val_fraction * n)));
    split.test.insert(split.test.end(), rows.begin(), rows.begin() + num_test);
    split.val.insert(split.val.end(), rows.begin() + num_test, rows.begin() + num_test + num_val);
    split.train.insert(split.train.end(), rows.begin() + num_test + num_val, rows.end());
  }
  for (auto* list : {&split.train, &split.val, &split.test}) std::sort(list->begin(), list->end());
  return split;
}

std::vector<int64_t> all_rows(size_t n) {
  std::vector<int64_t> rows(n);
  for (size_t i = 0; i < n; ++i) rows[i] = static_cast<int64_t>(i);
  return rows;
}

// A fixed random subset of `limit` rows (train_limit), so smoke tests see every class.
std::vector<int64_t> limit_rows(std::vector<int64_t> rows, int64_t limit) {
  if (limit <= 0 || static_cast<size_t>(limit) >= rows.size()) return rows;
  std::mt19937_64 rng(mix_seed({kSplitSeed, 1}));
  shuffle_in_place(rows, rng);
  rows.resize(static_cast<size_t>(limit));
  std::sort(rows.begin(), rows.end());
  return rows;
}

// Everything read from the section before any data is touched, so key errors come first.
struct DataSettings {
  std::string name, root;
  double val_fraction = 0.1, test_fraction = 0.0;
  int64_t train_limit = 0, image_size = 0, random_crop_padding = 0;
  bool horizontal_flip = false;
};

TransformOptions transform_options(const DataSettings& settings, bool train, const std::vector<double>& mean,
                                   const std::vector<double>& stddev) {
  TransformOptions options;
  options.image_height = options.image_width = settings.image_size;
  if (train) {
    options.random_crop_padding = settings.random_crop_padding;
    options.horizontal_flip = settings.horizontal_flip;
  }
  options.mean = mean;
  options.std = stddev;
  return options;
}

// normalize.mean / normalize.std, one value per channel.
std::pair<std::vector<double>, std::vector<double>> read_normalization(ConfigSection normalize, int channels,
                                                                       double default_mean, double default_std) {
  const auto n = static_cast<size_t>(channels);
  const auto mean = normalize.get_double_list("mean", std::vector<double>(n, default_mean));
  const auto stddev = normalize.get_double_list("std", std::vector<double>(n, default_std));
  for (const auto& [key, values] : {std::pair{"mean", &mean}, std::pair{"std", &stddev}})
    if (values->size() != n)
      normalize.fail(key, fmt::format("has {} value{} but the images have {} channel{}", values->size(),
                                      values->size() == 1 ? "" : "s", channels, channels == 1 ? "" : "s"));
  for (double s : stddev)
    if (!(s > 0.0)) normalize.fail("std", fmt::format("{} must be > 0", s));
  normalize.finish();
  return {mean, stddev};
}

void load_idx(const DataSettings& settings, ConfigSection normalize, DataSplits& splits) {
  const bool fashion = settings.name == "fashion_mnist";
  const std::string how_to_fetch =
      fashion ? "run scripts/setup.sh to fetch Fashion-MNIST"
              : "put MNIST's four IDX files (train-images-idx3-ubyte[.gz], ...) in data.root";
  const auto& classes = fashion ? fashion_mnist_class_names() : mnist_class_names();
  const auto [mean, stddev] = fashion ? read_normalization(normalize, 1, 0.2860, 0.3530)
                                   : read_normalization(normalize, 1, 0.1307, 0.3081);
  const fs::path root(settings.root);
  auto file = [&](const char* name) { return (root / name).string(); };
  const torch::Tensor train_images = read_idx_images(file("train-images-idx3-ubyte"), how_to_fetch);
  const torch::Tensor train_labels = read_idx_labels(file("train-labels-idx1-ubyte"), how_to_fetch);
  const torch::Tensor test_images = read_idx_images(file("t10k-images-idx3-ubyte"), how_to_fetch);
  const torch::Tensor test_labels = read_idx_labels(file("t10k-labels-idx1-ubyte"), how_to_fetch);
  if (train_labels.size(0) != train_images.size(0))
    throw DataError(fmt::format("{}: {} training images but {} labels; {}", settings.root, train_images.size(0),
                                train_labels.size(0), how_to_fetch));

  const torch::Tensor labels64 = train_labels.to(torch::kInt64).contiguous();
  const std::vector<int64_t> labels(labels64.data_ptr<int64_t>(), labels64.data_ptr<int64_t>() + labels64.numel());
  SplitRows split = split_by_class(labels, settings.val_fraction, 0.0);
  const TransformPipeline train_transforms(transform_options(settings, true, mean, stddev));
  const TransformPipeline eval_transforms(transform_options(settings, false, mean, stddev));
  splits.train = std::make_shared<ImageArrayDataset>(settings.name + " train", "train", train_images, train_labels,
                                                     classes, limit_rows(split.train, settings.train_limit),
                                                     train_transforms);
  if (!split.val.empty())
    splits.val = std::make_shared<ImageArrayDataset>(settings.name + " val", "train", train_images, train_labels,
                                                     classes, split.val, eval_transforms);
  splits.test = std::make_shared<ImageArrayDataset>(settings.name + " test", "t10k", test_images, test_labels, classes,
                                                    all_rows(static_cast<size_t>(test_images.size(0))),
                                                    eval_transforms);
}

void load_image_folder(const DataSettings& settings, const fs::path& train_dir, const fs::path& val_dir,
                       const fs::path& test_dir, ConfigSection normalize, DataSplits& splits) {
  auto train_folder = std::make_shared<const ImageFolder>(train_dir.string());
  ImageFolderOptions same_classes;
  same_classes.class_names = train_folder->class_names();
  same_classes.channels = train_folder->channels();
  std::shared_ptr<const ImageFolder> val_folder, test_folder;
  if (!val_dir.empty()) val_folder = std::make_shared<const ImageFolder>(val_dir.string(), same_classes);
  if (!test_dir.empty()) test_folder = std::make_shared<const ImageFolder>(test_dir.string(), same_classes);

  const auto [mean, stddev] = read_normalization(normalize, train_folder->channels(), 0.5, 0.5);
  const TransformPipeline train_transforms(transform_options(settings, true, mean, stddev));
  const TransformPipeline eval_transforms(transform_options(settings, false, mean, stddev));

  // Fractions apply only to the splits that have no folder of their own.
  SplitRows split = split_by_class(train_folder->labels(), val_folder ? 0.0 : settings.val_fraction,
                                   test_folder ? 0.0 : settings.test_fraction);
  const std::string& name = settings.name;
  splits.train = std::make_shared<ImageFolderDataset>(name + " train", train_folder,
                                                      limit_rows(split.train, settings.train_limit), train_transforms);
  if (val_folder)
    splits.val = std::make_shared<ImageFolderDataset>(name + " val", val_folder, eval_transforms);
  else if (!split.val.empty())
    splits.val = std::make_shared<ImageFolderDataset>(name + " val", train_folder, split.val, eval_transforms);
  if (test_folder)
    splits.test = std::make_shared<ImageFolderDataset>(name + " test", test_folder, eval_transforms);
  else if (!split.test.empty())
    splits.test = std::make_shared<ImageFolderDataset>(name + " test", train_folder, split.test, eval_transforms);

  // Folders of different native sizes would make batches the model cannot take.
  for (const auto& other : {splits.val, splits.test})
    if (other && other->input_shape() != splits.train->input_shape())
      throw DataError(fmt::format("{}: images are {} but the training images are {}; set data.image_size to resize "
                                  "them all",
                                  other->describe(), fmt::join(other->input_shape(), "x"),
                                  fmt::join(splits.train->input_shape(), "x")));
}

}  // namespace

DataSplits build_datasets(ConfigSection data, uint64_t seed) {
  DataSettings settings;
  settings.name = data.require_choice("name", {"fashion_mnist", "mnist", "image_folder"});
  settings.root = data.require_path("root");
  const bool folder = settings.name == "image_folder";

  // An image folder's splits come from train/ val/ test/ subfolders where they exist.
  fs::path train_dir, val_dir, test_dir;
  if (folder) {
    std::error_code error;
    if (!fs::is_directory(settings.root, error))
      throw DataError(settings.root + ": no such folder; point data.root at a folder of class subfolders");
    const fs::path root(settings.root);
    const bool has_train = fs::is_directory(root / "train", error);
    train_dir = has_train ? root / "train" : root;
    if (has_train && fs::is_directory(root / "val", error)) val_dir = root / "val";
    if (has_train && fs::is_directory(root / "test", error)) test_dir = root / "test";
  }
  auto fraction = [&](const char* key, double default_value, const fs::path& own_folder) {
    if (!own_folder.empty()) {
      if (data.has(key))
        data.fail(key, fmt::format("{} has its own folder {}, so nothing is held out; remove {}",
                                   std::string(key).substr(0, std::string(key).find('_')), own_folder.string(), key));
      return 0.0;
    }
    return data.get_double(key, default_value, 0.0, 0.9);
  };
  settings.val_fraction = fraction("val_fraction", 0.1, val_dir);
  if (folder) {
    settings.test_fraction = fraction("test_fraction", 0.1, test_dir);
    if (settings.val_fraction + settings.test_fraction > 0.9)
      data.fail("test_fraction", fmt::format("val_fraction + test_fraction = {} leaves too little to train on",
                                             settings.val_fraction + settings.test_fraction));
  } else if (data.has("test_fraction")) {
    data.fail("test_fraction", settings.name + " has its own test set; test_fraction applies to image_folder only");
  }
  settings.train_limit = data.get_int("train_limit", 0, 0);
  settings.image_size = data.get_int("image_size", 0, 0, 4096);
  ConfigSection augment = data.section("augment");
  settings.random_crop_padding = augment.get_int("random_crop_padding", 0, 0, 1024);
  settings.horizontal_flip = augment.get_bool("horizontal_flip", false);
  augment.finish();
  ConfigSection normalize = data.section("normalize");  // read once the channel count is known

  DataSplits splits;
  LoaderOptions& train_loader = splits.train_loader;
  train_loader.batch_size = data.get_int("batch_size", 128, 1);
  train_loader.shuffle = true;
  train_loader.num_workers = data.get_int("num_workers", 2, 0, 256);
  train_loader.prefetch_batches = data.get_int("prefetch_batches", 4, 0, 4096);
  train_loader.seed = seed;
  LoaderOptions& eval_loader = splits.eval_loader;
  eval_loader = train_loader;
  eval_loader.shuffle = false;
  eval_loader.batch_size = data.get_int("eval_batch_size", 2 * train_loader.batch_size, 1);
  data.finish();  // every key of `data` is read by now: report typos before the (slow) loading

  if (folder)
    load_image_folder(settings, train_dir, val_dir, test_dir, normalize, splits);
  else
    load_idx(settings, normalize, splits);
  return splits;
}

}  // namespace attnzoo
