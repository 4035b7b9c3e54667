#pragma once
// The one generic trainer: epochs x batches of model.step -> backward -> clip -> optimizer step ->
// schedule, with autocast, gradient accumulation, EMA, periodic evaluation, best/last checkpoints,
// early stopping, exact resume, Ctrl-C, NaN detection, metrics.jsonl, plots and progress display.
// It knows models only through ZooModelImpl and data only through Dataset/DataLoader.
#include <map>
#include <memory>
#include <string>

#include "trainers/checkpoint.h"
#include "trainers/experiment.h"

namespace attnzoo {

// How a training run ended; the CLI maps it to an exit code.
enum class TrainOutcome { kFinished, kInterrupted, kNonFiniteLoss };

struct TrainResult {
  TrainOutcome outcome = TrainOutcome::kFinished;
  std::map<std::string, double> test_metrics;  // empty when there is no test split or training stopped early
  std::string message;                         // the final line shown to the user
  int64_t global_step = 0;
};

class Trainer {
 public:
  explicit Trainer(Experiment& experiment);
  ~Trainer();
  // Resumes from run_dir/checkpoints/last.pt when it exists.
  TrainResult run();
  // Mean loss and metrics of the model (or its EMA weights) over a dataset.
  std::map<std::string, double> evaluate(const std::shared_ptr<Dataset>& dataset);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnzoo
