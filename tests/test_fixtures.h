#pragma once
// Fixtures the tests make for themselves: temporary folders and tiny MNIST-format datasets.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "models/zoo.h"

namespace attnzoo::testing {

// A fresh, empty folder under the system temp dir, removed when the object goes.
class TempDir {
 public:
  explicit TempDir(const std::string& name);
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::string str(const std::string& child = "") const { return (path_ / child).string(); }

 private:
  std::filesystem::path path_;
};

// Writes {train,t10k}-{images-idx3,labels-idx1}-ubyte with `train`/`test` 28x28 images whose
// label (0..9) is drawn as a bright bar at a label-dependent row, so a model can learn it quickly.
void write_tiny_mnist(const std::filesystem::path& dir, int64_t train, int64_t test, uint32_t seed = 1);

std::string read_file(const std::string& path);

inline const DataShape kMnistShape{{1, 28, 28}, 10};
// Builds a zoo model from a YAML text with a `model:` section ("test.yaml" in messages).
std::shared_ptr<ZooModelImpl> build_model_from_yaml(const std::string& yaml, const DataShape& data = kMnistShape);
// The config error that building raises, or "no error".
std::string model_config_error(const std::string& yaml, const DataShape& data = kMnistShape);

}  // namespace attnzoo::testing
