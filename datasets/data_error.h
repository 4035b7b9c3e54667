#pragma once
// Errors about input data (missing files, corrupt archives, empty folders). Like ConfigError they are
// values a user can act on: one line that names the file and says what to do, e.g.
// `data error: data/fashion-mnist/train-images-idx3-ubyte: no such file; run scripts/setup.sh to fetch Fashion-MNIST`.
#include <stdexcept>
#include <string>

namespace attnzoo {

class DataError : public std::runtime_error {
 public:
  // `what` is the message without the "data error: " prefix, which is added here so every message has it.
  explicit DataError(const std::string& what) : std::runtime_error("data error: " + what) {}
};

}  // namespace attnzoo
