#pragma once
// Reader for the IDX files of MNIST and Fashion-MNIST (http://yann.lecun.com/exdb/mnist/), raw or gzipped.
//
// Every problem is a DataError naming the file and ending with `how_to_fetch` (e.g. "run scripts/setup.sh to
// fetch Fashion-MNIST"): a missing file, a wrong magic number, zero dimensions, or a length that does not match
// the header (a truncated download).
#include <torch/types.h>

#include <string>

namespace attnzoo {

// Images: magic 0x00000803, uint8 [N, H, W]. If `path` does not exist but `path`.gz does, that is read.
torch::Tensor read_idx_images(const std::string& path, const std::string& how_to_fetch);

// Labels: magic 0x00000801, uint8 [N].
torch::Tensor read_idx_labels(const std::string& path, const std::string& how_to_fetch);

}  // namespace attnzoo
