#pragma once
// Checkpoints: a tensors archive (never pickled objects) holding the model, optimizer, EMA weights,
// training position, RNG state, best metric and the resolved config, with a format version.
// Written to a temporary file, synced, then renamed: a crash, Ctrl-C or full disk while saving
// leaves the previous checkpoint as it was.
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnzoo {

class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where training stands; everything resume needs besides tensors.
struct TrainingState {
  int64_t global_step = 0;     // optimizer updates done
  int64_t epoch = 0;           // epoch in progress (0-based)
  int64_t batch_in_epoch = 0;  // batches of `epoch` already consumed
  double best_metric = std::numeric_limits<double>::quiet_NaN();
  int64_t best_step = -1;
  int64_t evals_without_improvement = 0;
  bool finished = false;
};

struct CheckpointMeta {
  std::string family;       // model family ("vit")
  std::string model_name;   // preset name ("vit_mnist")
  std::string config_yaml;  // resolved config of the run
};

constexpr int64_t kCheckpointFormatVersion = 1;

// Named tensors of a module: parameters then buffers, by their registered names.
std::vector<std::pair<std::string, torch::Tensor>> module_tensors(const torch::nn::Module& module);

void save_checkpoint(const std::string& path, const torch::nn::Module& model, const torch::optim::Optimizer* optimizer,
                     const std::vector<torch::Tensor>& ema, const TrainingState& state, const CheckpointMeta& meta);

// Loads into `model` (and optimizer / ema when given). Throws CheckpointError naming the file when
// it is unreadable or holds a different model.
TrainingState load_checkpoint(const std::string& path, torch::nn::Module& model, torch::optim::Optimizer* optimizer,
                              std::vector<torch::Tensor>* ema, CheckpointMeta* meta);
// Just the metadata (family, name, config), without touching a model.
CheckpointMeta read_checkpoint_meta(const std::string& path);

// Writes `bytes` to `path` atomically (temp file + fsync + rename). Throws std::runtime_error with
// the OS reason (e.g. "No space left on device").
void write_file_atomically(const std::string& path, const std::string& bytes);

}  // namespace attnzoo
