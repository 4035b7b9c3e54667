#pragma once
// The one struct every dataset produces and every model consumes (see shared/DESIGN.md).
#include <torch/types.h>

#include <string>
#include <vector>

namespace attnzoo {

struct Batch {
  torch::Tensor input;           // images [B, C, H, W] float, or source tokens [B, S] int64
  torch::Tensor target;          // labels [B] int64, or target tokens [B, T] int64
  torch::Tensor input_lengths;   // [B] int64; sequence tasks only, undefined otherwise
  torch::Tensor target_lengths;  // [B] int64; sequence tasks only
  std::vector<std::string> ids;  // file names or row numbers, for reports

  int64_t size() const { return input.defined() ? input.size(0) : 0; }
  // Moves every tensor to `device` (non_blocking when it can be).
  Batch to(const torch::Device& device) const;
};

}  // namespace attnzoo
