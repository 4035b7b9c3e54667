#include "trainers/schedule.h"

#include <algorithm>
#include <cmath>

namespace attnzoo {

ScheduleOptions read_schedule_options(ConfigSection section) {
  ScheduleOptions o;
  o.name = section.get_choice("name", o.name, {"constant", "step", "cosine", "inverse_sqrt"});
  o.warmup_steps = section.get_int("warmup_steps", 0, 0);
  o.warmup_epochs = section.get_double("warmup_epochs", 0.0, 0.0);
  if (o.warmup_steps > 0 && o.warmup_epochs > 0)
    section.fail("warmup_epochs", "set either schedule.warmup_steps or schedule.warmup_epochs, not both");
  auto only_for = [&](const std::string& key, const std::string& which) {
    if (section.has(key) && o.name != which)
      section.fail(key, "is only used by schedule.name=" + which + " (this config uses " + o.name + ")");
  };
  only_for("min_lr", "cosine");
  only_for("step_epochs", "step");
  only_for("gamma", "step");
  if (o.name == "cosine") o.min_lr = section.get_double("min_lr", 0.0, 0.0);
  if (o.name == "step") {
    o.step_epochs = section.get_double("step_epochs", o.step_epochs, 1e-9);
    o.gamma = section.get_double("gamma", o.gamma, 0.0, 1.0);
  }
  if (o.name == "inverse_sqrt" && o.warmup_steps == 0 && o.warmup_epochs == 0.0)
    section.fail("name", "inverse_sqrt needs schedule.warmup_steps > 0 (the rate peaks at the end of warmup)");
  section.finish();
  return o;
}

LearningRateSchedule::LearningRateSchedule(ScheduleOptions options, double base_lr, int64_t total_steps,
                                           int64_t steps_per_epoch)
    : options_(std::move(options)),
      base_lr_(base_lr),
      total_steps_(std::max<int64_t>(total_steps, 1)),
      steps_per_epoch_(std::max<int64_t>(steps_per_epoch, 1)) {
  warmup_steps_ = options_.warmup_steps > 0
                      ? options_.warmup_steps
                      : static_cast<int64_t>(std::llround(options_.warmup_epochs * steps_per_epoch_));
}

double LearningRateSchedule::lr_at(int64_t step) const {
  // Linear warmup: update k (1-based) gets k/warmup of the rate, so the first update is not at 0.
  if (step < warmup_steps_) return base_lr_ * static_cast<double>(step + 1) / warmup_steps_;
  const auto& o = options_;
  if (o.name == "constant") return base_lr_;
  if (o.name == "step") {
    auto period = std::max<int64_t>(1, std::llround(o.step_epochs * steps_per_epoch_));
    return base_lr_ * std::pow(o.gamma, static_cast<double>(step / period));
  }
  if (o.name == "cosine") {
    double progress = static_cast<double>(step - warmup_steps_) / std::max<int64_t>(1, total_steps_ - warmup_steps_);
    progress = std::min(1.0, progress);
    return o.min_lr + 0.5 * (base_lr_ - o.min_lr) * (1.0 + std::cos(M_PI * progress));
  }
  // inverse_sqrt (Vaswani): peaks at base_lr at the end of warmup, then decays as 1/sqrt(step).
  return base_lr_ * std::sqrt(static_cast<double>(warmup_steps_) / static_cast<double>(step + 1));
}

}  // namespace attnzoo
