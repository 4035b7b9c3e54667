#include "datasets/dataset.h"

#include <torch/torch.h>

namespace attnzoo {

Batch Dataset::collate(std::vector<Example>&& examples) const {
  std::vector<torch::Tensor> inputs, targets;
  Batch batch;
  inputs.reserve(examples.size());
  targets.reserve(examples.size());
  for (auto& example : examples) {
    inputs.push_back(std::move(example.input));
    targets.push_back(std::move(example.target));
    batch.ids.push_back(std::move(example.id));
  }
  batch.input = torch::stack(inputs);
  batch.target = torch::stack(targets);
  return batch;
}

}  // namespace attnzoo
