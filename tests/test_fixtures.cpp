#include "test_fixtures.h"

#include <unistd.h>

#include <fstream>
#include <random>
#include <sstream>
#include <vector>

namespace attnzoo::testing {

TempDir::TempDir(const std::string& name) {
  path_ = std::filesystem::temp_directory_path() / ("attnzoo_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

namespace {
void put_u32(std::ofstream& out, uint32_t v) {
  unsigned char b[4] = {static_cast<unsigned char>(v >> 24), static_cast<unsigned char>(v >> 16),
                        static_cast<unsigned char>(v >> 8), static_cast<unsigned char>(v)};
  out.write(reinterpret_cast<char*>(b), 4);
}

void write_split(const std::filesystem::path& dir, const std::string& prefix, int64_t n, std::mt19937& rng) {
  std::ofstream images(dir / (prefix + "-images-idx3-ubyte"), std::ios::binary);
  std::ofstream labels(dir / (prefix + "-labels-idx1-ubyte"), std::ios::binary);
  put_u32(images, 0x803);
  put_u32(images, static_cast<uint32_t>(n));
  put_u32(images, 28);
  put_u32(images, 28);
  put_u32(labels, 0x801);
  put_u32(labels, static_cast<uint32_t>(n));
  std::uniform_int_distribution<int> noise(0, 60), label_of(0, 9);
  for (int64_t i = 0; i < n; ++i) {
    int label = label_of(rng);
    std::vector<unsigned char> pixels(28 * 28);
    for (auto& p : pixels) p = static_cast<unsigned char>(noise(rng));
    for (int row = 2 + label * 2; row < 4 + label * 2; ++row)
      for (int col = 4; col < 24; ++col) pixels[row * 28 + col] = 255;
    images.write(reinterpret_cast<char*>(pixels.data()), static_cast<std::streamsize>(pixels.size()));
    labels.put(static_cast<char>(label));
  }
}
}  // namespace

void write_tiny_mnist(const std::filesystem::path& dir, int64_t train, int64_t test, uint32_t seed) {
  std::filesystem::create_directories(dir);
  std::mt19937 rng(seed);
  write_split(dir, "train", train, rng);
  write_split(dir, "t10k", test, rng);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::shared_ptr<ZooModelImpl> build_model_from_yaml(const std::string& yaml, const DataShape& data) {
  auto config = Config::parse(yaml, "test.yaml");
  return build_model(ConfigSection(config, "model"), data);
}

std::string model_config_error(const std::string& yaml, const DataShape& data) {
  try {
    build_model_from_yaml(yaml, data);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace attnzoo::testing
