#include "datasets/batch.h"

namespace attnzoo {

Batch Batch::to(const torch::Device& device) const {
  auto move = [&](const torch::Tensor& t) { return t.defined() ? t.to(device, /*non_blocking=*/true) : t; };
  return Batch{move(input), move(target), move(input_lengths), move(target_lengths), ids};
}

}  // namespace attnzoo
