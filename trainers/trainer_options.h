#pragma once
// The `trainer:` section: how long, how precise, where, and how the run is checked and saved.
#include <string>

#include "trainers/config.h"

namespace attnzoo {

struct TrainerOptions {
  int64_t epochs = 10;
  int64_t max_steps = 0;  // 0 = no limit beyond epochs
  std::string precision = "fp32";  // fp32 | bf16 | fp16 (CUDA only)
  std::string device = "auto";     // auto | cpu | cuda
  int64_t threads = 0;             // intra-op threads; 0 = all cores
  double grad_clip_norm = 0.0;     // 0 = off
  int64_t grad_accumulation = 1;
  double label_smoothing = 0.0;
  double ema_decay = 0.0;  // 0 = off; e.g. 0.999
  int64_t log_every_steps = 50;
  int64_t eval_every_steps = 0;   // 0 = evaluate at the end of every eval_every_epochs epochs
  int64_t eval_every_epochs = 1;
  int64_t checkpoint_every_steps = 0;  // besides the end of every epoch; 0 = epoch ends only
  std::string monitor = "accuracy";     // validation metric that picks best.pt
  std::string monitor_mode = "auto";    // max | min | auto (min for loss-like names)
  int64_t early_stopping_patience = 0;  // evaluations without improvement; 0 = off
  bool progress_bar = true;             // on a terminal; plain lines otherwise
};

TrainerOptions read_trainer_options(ConfigSection section);

}  // namespace attnzoo
