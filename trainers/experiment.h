#pragma once
// One experiment = one YAML file (+ overrides): read and checked whole, then built from the
// registries (model zoo, datasets, optimizer, schedule). Nothing else in the code reads YAML.
#include <memory>
#include <string>
#include <vector>

#include "datasets/data_config.h"
#include "models/zoo.h"
#include "trainers/config.h"
#include "trainers/optimizer.h"
#include "trainers/schedule.h"
#include "trainers/trainer_options.h"

namespace attnzoo {

struct Experiment {
  std::shared_ptr<Config> config;
  std::string name;     // `name:`; also the default run folder runs/NAME
  std::string run_dir;  // `out:`
  uint64_t seed = 0;
  std::string model_name;
  ModelSummary model_summary;
  std::shared_ptr<ZooModelImpl> model;
  DataSplits data;
  OptimizerOptions optim;
  ScheduleOptions schedule;
  TrainerOptions trainer;
};

// Reads, validates and builds. Throws ConfigError (bad config) or DataError (bad data).
Experiment load_experiment(const std::string& config_path, const std::vector<std::string>& overrides);

}  // namespace attnzoo
