#include "trainers/step_benchmark.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>

#include "trainers/precision.h"

namespace attnzoo {

double StepTiming::min() const { return *std::min_element(examples_per_second.begin(), examples_per_second.end()); }

double StepTiming::median() const {
  auto sorted = examples_per_second;
  std::sort(sorted.begin(), sorted.end());
  return sorted[sorted.size() / 2];
}

StepTiming time_training_steps(Experiment& e, int64_t steps, int64_t warmup_steps, int64_t repeats) {
  auto device = resolve_device(e.trainer.device);
  if (e.trainer.threads > 0) torch::set_num_threads(static_cast<int>(e.trainer.threads));
  e.model->to(device);
  e.model->train();
  auto optimizer = build_optimizer(e.optim, *e.model);
  const int64_t batch_size = e.data.train_loader.batch_size;
  auto shape = e.data.train->input_shape();
  std::vector<int64_t> sizes = {batch_size};
  sizes.insert(sizes.end(), shape.begin(), shape.end());
  Batch batch;
  batch.input = torch::randn(sizes, torch::TensorOptions().device(device));
  batch.target = torch::randint(static_cast<int64_t>(e.data.train->class_names().size()), {batch_size},
                                torch::TensorOptions().dtype(torch::kLong).device(device));
  StepOptions options;
  options.label_smoothing = e.trainer.label_smoothing;
  auto one_step = [&] {
    auto out = step_in_precision(*e.model, batch, options, e.trainer.precision, device);
    out.loss.backward();
    optimizer->step();
    optimizer->zero_grad();
    out.loss.item<double>();  // wait for the step to finish (matters on CUDA)
  };
  for (int64_t i = 0; i < warmup_steps; ++i) one_step();
  StepTiming timing;
  for (int64_t r = 0; r < repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < steps; ++i) one_step();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    timing.examples_per_second.push_back(static_cast<double>(steps * batch_size) / seconds);
  }
  return timing;
}

}  // namespace attnzoo
