#include "models/zoo_model.h"

#include <torch/torch.h>

namespace attnzoo {

StepOutput ClassifierImpl::step(const Batch& batch, const StepOptions& options) {
  auto logits = forward(batch.input);
  // Autocast may hand back bf16 logits; the loss and its softmax are taken in fp32.
  auto loss = torch::nn::functional::cross_entropy(
      logits.to(torch::kFloat), batch.target,
      torch::nn::functional::CrossEntropyFuncOptions().label_smoothing(options.label_smoothing));
  StepOutput out;
  out.loss = loss;
  out.count = batch.size();
  torch::NoGradGuard no_grad;
  out.metrics["accuracy"] = logits.argmax(1).eq(batch.target).to(torch::kFloat).mean();
  return out;
}

}  // namespace attnzoo
