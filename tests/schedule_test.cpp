#include "trainers/schedule.h"

#include <gtest/gtest.h>

#include <cmath>

namespace attnzoo {
namespace {

ScheduleOptions named(const std::string& name) {
  ScheduleOptions o;
  o.name = name;
  return o;
}

TEST(Schedule, WarmupRampsLinearlyToTheBaseRate) {
  auto o = named("constant");
  o.warmup_steps = 4;
  LearningRateSchedule s(o, 1.0, 100, 10);
  EXPECT_DOUBLE_EQ(s.lr_at(0), 0.25);
  EXPECT_DOUBLE_EQ(s.lr_at(3), 1.0);
  EXPECT_DOUBLE_EQ(s.lr_at(50), 1.0);
}

TEST(Schedule, WarmupEpochsConvertToSteps) {
  auto o = named("constant");
  o.warmup_epochs = 0.5;
  EXPECT_EQ(LearningRateSchedule(o, 1.0, 100, 10).warmup_steps(), 5);
}

TEST(Schedule, CosineGoesFromBaseToMinAfterWarmup) {
  auto o = named("cosine");
  o.warmup_steps = 10;
  o.min_lr = 0.1;
  LearningRateSchedule s(o, 1.0, 110, 10);
  EXPECT_DOUBLE_EQ(s.lr_at(10), 1.0);
  EXPECT_NEAR(s.lr_at(60), 0.55, 1e-12);  // halfway: the mean of base and min
  EXPECT_NEAR(s.lr_at(110), 0.1, 1e-12);
  EXPECT_NEAR(s.lr_at(500), 0.1, 1e-12);  // past the end it stays at the floor
}

TEST(Schedule, StepMultipliesByGammaEveryPeriod) {
  auto o = named("step");
  o.step_epochs = 2;
  o.gamma = 0.5;
  LearningRateSchedule s(o, 1.0, 100, 10);  // period = 20 updates
  EXPECT_DOUBLE_EQ(s.lr_at(19), 1.0);
  EXPECT_DOUBLE_EQ(s.lr_at(20), 0.5);
  EXPECT_DOUBLE_EQ(s.lr_at(45), 0.25);
}

TEST(Schedule, InverseSqrtPeaksAtTheEndOfWarmup) {
  auto o = named("inverse_sqrt");
  o.warmup_steps = 4;
  LearningRateSchedule s(o, 1.0, 100, 10);
  EXPECT_DOUBLE_EQ(s.lr_at(3), 1.0);
  EXPECT_DOUBLE_EQ(s.lr_at(15), std::sqrt(4.0 / 16.0));
}

TEST(Schedule, ConfigRejectsKeysOfAnotherSchedule) {
  auto config = Config::parse("schedule:\n  name: constant\n  min_lr: 0.1\n", "exp.yaml");
  try {
    read_schedule_options(ConfigSection(config, "schedule"));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "config error: exp.yaml:3: schedule.min_lr: is only used by schedule.name=cosine (this config uses "
                 "constant)");
  }
}

}  // namespace
}  // namespace attnzoo
