#pragma once
// Learning-rate schedules (LibTorch 1.13 has only StepLR). Each is a pure function of the number of
// optimizer updates done, so the whole schedule state is that count: the checkpoint stores it and
// resume lands on exactly the same rate (the off-by-one and lagging-scheduler resume bugs peers'
// users report cannot happen).
#include <cstdint>
#include <string>

#include "trainers/config.h"

namespace attnzoo {

struct ScheduleOptions {
  std::string name = "constant";  // constant | step | cosine | inverse_sqrt
  int64_t warmup_steps = 0;       // linear ramp from 0 to the base rate
  double warmup_epochs = 0.0;     // alternative to warmup_steps
  double min_lr = 0.0;            // cosine: floor at the end
  double step_epochs = 1.0;       // step: multiply by gamma every step_epochs
  double gamma = 0.1;             // step
};

ScheduleOptions read_schedule_options(ConfigSection section);

class LearningRateSchedule {
 public:
  LearningRateSchedule(ScheduleOptions options, double base_lr, int64_t total_steps, int64_t steps_per_epoch);
  // Rate for the update that follows `step` completed updates.
  double lr_at(int64_t step) const;
  int64_t warmup_steps() const { return warmup_steps_; }

 private:
  ScheduleOptions options_;
  double base_lr_;
  int64_t total_steps_, steps_per_epoch_, warmup_steps_;
};

}  // namespace attnzoo
