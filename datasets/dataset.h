#pragma once
// A dataset is a random-access list of examples. The threaded loader (datasets/loader.h) calls
// get() from several threads at once, so get() must be thread-safe and must take all randomness
// (augmentation) from the generator it is given: the loader seeds it from (seed, epoch, index),
// which makes every epoch reproducible whatever the thread count, and resume bit-exact.
#include <torch/types.h>

#include <random>
#include <string>
#include <vector>

#include "datasets/batch.h"

namespace attnzoo {

struct Example {
  torch::Tensor input;   // one image [C, H, W] float, or one token sequence [S] int64
  torch::Tensor target;  // a label (0-dim int64), or a token sequence [T] int64
  std::string id;
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual size_t size() const = 0;
  virtual Example get(size_t index, std::mt19937_64& rng) const = 0;
  // Stacks examples into a batch. Sequence datasets override it to pad and fill lengths.
  virtual Batch collate(std::vector<Example>&& examples) const;
  // Class names for classification data (index = label), empty otherwise.
  virtual std::vector<std::string> class_names() const { return {}; }
  // Shape of one input, e.g. {1, 28, 28}; models use it so configs need not repeat it.
  virtual std::vector<int64_t> input_shape() const = 0;
  // Human-readable description for logs: "fashion_mnist train: 54000 images".
  virtual std::string describe() const = 0;
};

}  // namespace attnzoo
