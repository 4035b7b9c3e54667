#pragma once
// Times training steps (forward, backward, optimizer step) of an experiment's model on one fixed
// batch shaped like its data, leaving data loading out, so it compares like for like with the
// Python twin in scripts/bench/.
#include <vector>

#include "trainers/experiment.h"

namespace attnzoo {

struct StepTiming {
  std::vector<double> examples_per_second;  // one per repeat
  double min() const;
  double median() const;
};

StepTiming time_training_steps(Experiment& experiment, int64_t steps, int64_t warmup_steps, int64_t repeats);

}  // namespace attnzoo
