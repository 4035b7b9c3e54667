#pragma once
// Builds the optimizer named in the `optim:` section: sgd (momentum, nesterov), adam or adamw.
// Biases, norm weights, embeddings, class tokens and position embeddings get no weight decay
// (decaying them only hurts; timm and torchvision recipes exclude them the same way).
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <memory>
#include <string>

#include "trainers/config.h"

namespace attnzoo {

struct OptimizerOptions {
  std::string name = "adamw";
  double lr = 1e-3;
  double weight_decay = 0.0;
  double momentum = 0.9;  // sgd
  bool nesterov = false;  // sgd
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // adam, adamw
};

OptimizerOptions read_optimizer_options(ConfigSection section);
// True for parameters that should not be decayed, judged by shape and name.
bool exempt_from_weight_decay(const std::string& name, const torch::Tensor& parameter);
std::unique_ptr<torch::optim::Optimizer> build_optimizer(const OptimizerOptions& options, torch::nn::Module& model);
// Sets the learning rate of every parameter group.
void set_learning_rate(torch::optim::Optimizer& optimizer, double lr);

}  // namespace attnzoo
