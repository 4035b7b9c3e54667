// The `data:` section: fixtures are a tiny fake Fashion-MNIST (IDX files) and tiny image folders written by the
// test. The real Fashion-MNIST is used only by the last test, which is skipped without it (and measures the loader).
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>
#include <zlib.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <set>

#include "datasets/data_config.h"
#include "datasets/data_error.h"
#include "datasets/image_classification.h"
#include "test_paths.h"

namespace attnzoo {
namespace {

namespace fs = std::filesystem;

void write_idx(const fs::path& path, uint32_t magic, const std::vector<uint32_t>& dims,
               const std::vector<uint8_t>& data, bool gzip) {
  std::vector<uint8_t> bytes;
  auto put = [&](uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<uint8_t>(v >> shift));
  };
  put(magic);
  for (uint32_t d : dims) put(d);
  bytes.insert(bytes.end(), data.begin(), data.end());
  if (gzip) {
    gzFile file = gzopen((path.string() + ".gz").c_str(), "wb");
    gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(file);
  } else {
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                static_cast<std::streamsize>(bytes.size()));
  }
}

class DataConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attnzoo_data_config_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // 50 training images (labels i % 10, so 5 per class) and 20 test images, 8x8, pixel value = image index.
  std::string make_idx_set(bool gzip = false) const {
    const fs::path root = dir_ / "idx";
    fs::create_directories(root);
    for (auto [prefix, count] : {std::pair{"train", 50u}, std::pair{"t10k", 20u}}) {
      std::vector<uint8_t> pixels, labels;
      for (uint32_t i = 0; i < count; ++i) {
        pixels.insert(pixels.end(), 64, static_cast<uint8_t>(i));
        labels.push_back(static_cast<uint8_t>(i % 10));
      }
      write_idx(root / (std::string(prefix) + "-images-idx3-ubyte"), 0x803, {count, 8, 8}, pixels, gzip);
      write_idx(root / (std::string(prefix) + "-labels-idx1-ubyte"), 0x801, {count}, labels, gzip);
    }
    return root.string();
  }

  void write_png(const fs::path& relative, const cv::Mat& image) const {
    fs::create_directories((dir_ / relative).parent_path());
    ASSERT_TRUE(cv::imwrite((dir_ / relative).string(), image));
  }

  static DataSplits build(const std::string& yaml, uint64_t seed = 0) {
    return build_datasets(ConfigSection(Config::parse(yaml, "test.yaml"), "data"), seed);
  }

  fs::path dir_;
};

// The message of what `work` throws as E ("" if nothing).
template <class E, class Work>
std::string error_of(Work work) {
  try {
    work();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

TEST_F(DataConfigTest, FashionMnistSplitsDefaultsAndClassNames) {
  const std::string root = make_idx_set();
  const DataSplits splits = build("data:\n  name: fashion_mnist\n  root: " + root + "\n  val_fraction: 0.2\n");
  ASSERT_TRUE(splits.train && splits.val && splits.test);
  EXPECT_EQ(splits.train->size(), 40u);
  EXPECT_EQ(splits.val->size(), 10u);  // one of each class
  EXPECT_EQ(splits.test->size(), 20u);
  EXPECT_EQ(splits.train->class_names(), fashion_mnist_class_names());
  EXPECT_EQ(splits.train->class_names().front(), "T-shirt/top");
  EXPECT_EQ(splits.train->input_shape(), (std::vector<int64_t>{1, 8, 8}));
  EXPECT_EQ(splits.train_loader.batch_size, 128);
  EXPECT_EQ(splits.eval_loader.batch_size, 256);
  EXPECT_EQ(splits.train_loader.num_workers, 2);
  EXPECT_TRUE(splits.train_loader.shuffle);
  EXPECT_FALSE(splits.eval_loader.shuffle);

  // Every class is held out once, and val and train do not overlap.
  std::set<int64_t> val_labels, val_rows;
  const auto& val = dynamic_cast<const ImageClassificationDataset&>(*splits.val);
  const auto& train = dynamic_cast<const ImageClassificationDataset&>(*splits.train);
  for (size_t i = 0; i < val.size(); ++i) val_labels.insert(val.label_of(i));
  EXPECT_EQ(val_labels.size(), 10u);
  val_rows.insert(val.rows().begin(), val.rows().end());
  for (int64_t row : train.rows()) EXPECT_EQ(val_rows.count(row), 0u);

  // Default normalization (x - 0.2860) / 0.3530; pixel value = image index; no augmentation outside train.
  std::mt19937_64 rng(0);
  const Example example = splits.test->get(7, rng);
  EXPECT_NEAR(example.input[0][3][3].item<float>(), (7 / 255.0 - 0.2860) / 0.3530, 1e-5);
  EXPECT_EQ(example.target.item<int64_t>(), 7);
  EXPECT_EQ(example.id, "t10k:7");
  EXPECT_FALSE(val.transforms().is_random());
}

TEST_F(DataConfigTest, SplitIsFixedWhateverTheSeed) {
  const std::string yaml = "data:\n  name: mnist\n  root: " + make_idx_set(/*gzip=*/true) + "\n  val_fraction: 0.2\n";
  const auto a = build(yaml, 1), b = build(yaml, 2);
  EXPECT_EQ(dynamic_cast<const ImageClassificationDataset&>(*a.val).rows(),
            dynamic_cast<const ImageClassificationDataset&>(*b.val).rows());
  EXPECT_EQ(a.train->class_names(), mnist_class_names());
  EXPECT_EQ(a.train_loader.seed, 1u);
}

TEST_F(DataConfigTest, OptionsReachDatasetsAndLoaders) {
  const DataSplits splits = build("data:\n  name: fashion_mnist\n  root: " + make_idx_set() +
                                  "\n  val_fraction: 0\n  train_limit: 12\n  image_size: 16\n"
                                  "  augment: {random_crop_padding: 2, horizontal_flip: true}\n"
                                  "  normalize: {mean: [0.5], std: [0.25]}\n"
                                  "  batch_size: 8\n  num_workers: 0\n  prefetch_batches: 3\n");
  EXPECT_EQ(splits.val, nullptr);
  EXPECT_EQ(splits.train->size(), 12u);
  EXPECT_EQ(splits.train->input_shape(), (std::vector<int64_t>{1, 16, 16}));
  EXPECT_EQ(splits.test->input_shape(), (std::vector<int64_t>{1, 16, 16}));
  const auto& train = dynamic_cast<const ImageClassificationDataset&>(*splits.train);
  EXPECT_EQ(train.transforms().describe(),
            "resize 16x16, random crop pad 2, horizontal flip p=0.5, normalize mean [0.5] std [0.25]");
  EXPECT_EQ(dynamic_cast<const ImageClassificationDataset&>(*splits.test).transforms().describe(),
            "resize 16x16, normalize mean [0.5] std [0.25]");
  EXPECT_EQ(splits.train_loader.batch_size, 8);
  EXPECT_EQ(splits.eval_loader.batch_size, 16);
  EXPECT_EQ(splits.train_loader.num_workers, 0);
  EXPECT_EQ(splits.eval_loader.prefetch_batches, 3);
}

TEST_F(DataConfigTest, BadKeysAndValuesAreConfigErrors) {
  const std::string head = "data:\n  name: fashion_mnist\n  root: " + make_idx_set() + "\n";
  EXPECT_EQ(error_of<ConfigError>([&] { build(head + "  normalize: {mean: [0.5, 0.5, 0.5]}\n"); }),
            "config error: test.yaml:4: data.normalize.mean: has 3 values but the images have 1 channel");
  EXPECT_NE(error_of<ConfigError>([&] { build(head + "  batch_sise: 3\n"); }).find("did you mean 'data.batch_size'"),
            std::string::npos);
  EXPECT_NE(error_of<ConfigError>([&] { build(head + "  augment: {flip: true}\n"); }).find("data.augment.flip"),
            std::string::npos);
  EXPECT_NE(error_of<ConfigError>([&] { build(head + "  test_fraction: 0.1\n"); })
                .find("fashion_mnist has its own test set"),
            std::string::npos);
  EXPECT_NE(error_of<ConfigError>([&] { build(head + "  val_fraction: 1.5\n"); }).find("data.val_fraction"),
            std::string::npos);
  EXPECT_NE(error_of<ConfigError>([&] { build("data:\n  name: cifar\n  root: x\n"); }).find("data.name"),
            std::string::npos);
}

TEST_F(DataConfigTest, MissingFilesSayHowToFetchThem) {
  const std::string root = (dir_ / "absent").string();
  EXPECT_EQ(error_of<DataError>([&] { build("data:\n  name: fashion_mnist\n  root: " + root + "\n"); }),
            "data error: " + root + "/train-images-idx3-ubyte: no such file; run scripts/setup.sh to fetch "
            "Fashion-MNIST");
  EXPECT_NE(error_of<DataError>([&] { build("data:\n  name: image_folder\n  root: " + root + "\n"); })
                .find(root + ": no such folder"),
            std::string::npos);
}

TEST_F(DataConfigTest, ImageFolderWithTrainAndTestFolders) {
  for (const char* split : {"train", "test"})
    for (const char* label : {"ant", "bee"})
      for (int i = 0; i < 5; ++i)
        write_png(fs::path("bugs") / split / label / (std::to_string(i) + ".png"),
                  cv::Mat(6, 6, CV_8UC3, cv::Scalar(i * 10, 0, 255)));
  const std::string yaml = "data:\n  name: image_folder\n  root: " + (dir_ / "bugs").string() + "\n";
  const DataSplits splits = build(yaml + "  val_fraction: 0.2\n");
  EXPECT_EQ(splits.train->class_names(), (std::vector<std::string>{"ant", "bee"}));
  EXPECT_EQ(splits.train->size(), 8u);
  EXPECT_EQ(splits.val->size(), 2u);
  EXPECT_EQ(splits.test->size(), 10u);
  EXPECT_EQ(splits.test->input_shape(), (std::vector<int64_t>{3, 6, 6}));
  // Default normalization is 0.5 / 0.5 per channel: red 1 -> 1, green 0 -> -1.
  std::mt19937_64 rng(0);
  const Example example = splits.test->get(0, rng);
  EXPECT_FLOAT_EQ(example.input[0][0][0].item<float>(), 1.0f);
  EXPECT_FLOAT_EQ(example.input[1][0][0].item<float>(), -1.0f);
  EXPECT_EQ(example.id, "ant/0.png");
  EXPECT_NE(error_of<ConfigError>([&] { build(yaml + "  test_fraction: 0.1\n"); }).find("remove test_fraction"),
            std::string::npos);
}

TEST_F(DataConfigTest, FlatImageFolderIsSplitByFractions) {
  for (const char* label : {"ant", "bee"})
    for (int i = 0; i < 10; ++i)
      write_png(fs::path("flat") / label / (std::to_string(i) + ".png"), cv::Mat(5, 5, CV_8UC1, cv::Scalar(i)));
  const DataSplits splits = build("data:\n  name: image_folder\n  root: " + (dir_ / "flat").string() +
                                  "\n  val_fraction: 0.2\n  test_fraction: 0.3\n  image_size: 4\n");
  EXPECT_EQ(splits.train->size(), 10u);
  EXPECT_EQ(splits.val->size(), 4u);
  EXPECT_EQ(splits.test->size(), 6u);
  EXPECT_EQ(splits.train->input_shape(), (std::vector<int64_t>{1, 4, 4}));
  std::set<std::string> ids;
  std::mt19937_64 rng(0);
  for (const auto& split : {splits.train, splits.val, splits.test})
    for (size_t i = 0; i < split->size(); ++i) ids.insert(split->get(i, rng).id);
  EXPECT_EQ(ids.size(), 20u);  // the three splits share no image
}

TEST(DataConfigFashionMnist, RealDataLoadsAndTheLoaderKeepsUp) {
  const fs::path root = fs::path(ATTNZOO_SOURCE_DIR) / "data" / "fashion-mnist";
  if (!fs::exists(root / "train-images-idx3-ubyte") && !fs::exists(root / "train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << root << " is absent; scripts/setup.sh fetches it";
  const DataSplits splits = build_datasets(
      ConfigSection(Config::parse("data:\n  name: fashion_mnist\n  root: " + root.string() +
                                      "\n  augment: {random_crop_padding: 4, horizontal_flip: true}\n",
                                  "test.yaml"),
                    "data"),
      0);
  EXPECT_EQ(splits.train->size(), 54000u);
  EXPECT_EQ(splits.val->size(), 6000u);
  EXPECT_EQ(splits.test->size(), 10000u);
  EXPECT_EQ(splits.train->input_shape(), (std::vector<int64_t>{1, 28, 28}));

  DataLoader loader(splits.train, splits.train_loader);  // batch 128, 2 workers
  loader.start_epoch(0);
  int64_t batches = 0, images = 0;
  const auto start = std::chrono::steady_clock::now();
  while (auto batch = loader.next()) {
    ASSERT_EQ(batch->input.sizes().slice(1), (std::vector<int64_t>{1, 28, 28}));
    ++batches;
    images += batch->size();
  }
  EXPECT_EQ(batches, 422);  // 54000 / 128, the last batch partial
  EXPECT_EQ(images, 54000);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double rate = batches / seconds;
  std::cout << "[ loader   ] Fashion-MNIST train, batch 128, 2 workers, crop pad 4 + flip: " << rate
            << " batches/s (" << rate * 128 << " images/s)\n";
  RecordProperty("batches_per_second", std::to_string(rate));
  EXPECT_GT(rate, 30.0);  // a small ViT step takes 30-60 ms here: the loader must stay ahead
}

}  // namespace
}  // namespace attnzoo
