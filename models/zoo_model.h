#pragma once
// What the trainer, evaluator and exporter know about a model (shared/DESIGN.md): its loss for a
// Batch plus scalar logs, and its predictions. Every zoo model derives from ZooModelImpl.
#include <torch/nn/module.h>

#include <map>
#include <string>
#include <vector>

#include "datasets/batch.h"

namespace attnzoo {

struct StepOptions {
  double label_smoothing = 0.0;
};

struct StepOutput {
  torch::Tensor loss;                            // scalar, mean over the batch; has grad in training
  std::map<std::string, torch::Tensor> metrics;  // detached scalars, means over the batch ("accuracy")
  int64_t count = 0;                             // examples (or tokens) the means are over
};

class ZooModelImpl : public torch::nn::Module {
 public:
  using torch::nn::Module::Module;
  // Loss and metrics for one batch. The trainer calls it in train() and eval() mode alike.
  virtual StepOutput step(const Batch& batch, const StepOptions& options) = 0;
  // Model family name, e.g. "vit"; checkpoints store it to refuse a mismatched load.
  virtual std::string family() const = 0;
  // Names of the metrics step() reports besides "loss"; trainer.monitor is checked against them.
  virtual std::vector<std::string> metric_names() const = 0;
};

// Image classifiers share their loss: cross-entropy with optional label smoothing, and accuracy.
class ClassifierImpl : public ZooModelImpl {
 public:
  using ZooModelImpl::ZooModelImpl;
  // images [B, C, H, W] -> logits [B, num_classes]
  virtual torch::Tensor forward(torch::Tensor images) = 0;
  StepOutput step(const Batch& batch, const StepOptions& options) override;
  std::vector<std::string> metric_names() const override { return {"accuracy"}; }
};

}  // namespace attnzoo
