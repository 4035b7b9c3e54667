// attnzoo: train, inspect and (later) export attention models from YAML experiments.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>
#include <malloc.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "datasets/data_error.h"
#include "models/zoo.h"
#include "trainers/checkpoint.h"
#include "trainers/config.h"
#include "trainers/experiment.h"
#include "trainers/interrupt.h"
#include "trainers/step_benchmark.h"
#include "trainers/trainer.h"

namespace fs = std::filesystem;
using namespace attnzoo;

namespace {

// Exit codes a script can tell apart.
constexpr int kExitBadInput = 2;     // config, data or checkpoint problem
constexpr int kExitNonFinite = 3;    // NaN/Inf loss
constexpr int kExitInterrupted = 130;

// OpenBLAS and OpenMP read their thread settings when the libraries load, before main() can call
// anything, so the first run sets them and re-executes itself. PASSIVE waiting stops idle OpenMP
// threads from spinning against the 2 cores this code is tuned for.
void ensure_thread_environment(char** argv) {
  if (std::getenv("ATTNZOO_ENV_SET") != nullptr) return;
  auto threads = std::to_string(std::max(1u, std::thread::hardware_concurrency()));
  setenv("ATTNZOO_ENV_SET", "1", 1);
  setenv("OMP_NUM_THREADS", threads.c_str(), 0);
  setenv("OPENBLAS_NUM_THREADS", threads.c_str(), 0);
  setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  execv("/proc/self/exe", argv);
  // If re-exec is impossible, carry on with whatever the environment gives.
}

int train(const std::string& target, const std::vector<std::string>& overrides) {
  std::string config_path = target;
  std::vector<std::string> all_overrides;
  if (fs::is_directory(target)) {
    // A run directory: continue it with the config it recorded.
    config_path = (fs::path(target) / "config.yaml").string();
    if (!fs::exists(config_path)) {
      std::cerr << fmt::format("error: {} is a folder without config.yaml; pass a config file or a run directory\n",
                               target);
      return kExitBadInput;
    }
    all_overrides.push_back("out=" + fs::absolute(target).lexically_normal().string());
  }
  all_overrides.insert(all_overrides.end(), overrides.begin(), overrides.end());
  auto experiment = load_experiment(config_path, all_overrides);
  install_interrupt_handler();
  Trainer trainer(experiment);
  auto result = trainer.run();
  switch (result.outcome) {
    case TrainOutcome::kFinished:
      std::cout << result.message << std::endl;
      return 0;
    case TrainOutcome::kInterrupted:
      std::cerr << result.message << std::endl;
      return kExitInterrupted;
    case TrainOutcome::kNonFiniteLoss:
      std::cerr << result.message << std::endl;
      return kExitNonFinite;
  }
  return 1;
}

std::string human_count(int64_t n) {
  if (n >= 1000000) return fmt::format("{:.2f}M", n / 1e6);
  if (n >= 1000) return fmt::format("{:.1f}K", n / 1e3);
  return std::to_string(n);
}

int zoo() {
  std::cout << fmt::format("{:<14} {:<8} {:>6} {:>6} {:>6} {:>10}  {}\n", "name", "family", "layers", "width", "heads",
                           "params", "description");
  for (const auto& preset : model_presets()) {
    auto config = Config::parse("model: {name: " + preset.name + "}\n", "zoo");
    ConfigSection section(config, "model");
    ModelSummary summary;
    section.get_string("name", preset.name);
    auto model = preset.build(section, preset.zoo_shape, &summary);
    std::string shape;
    for (auto d : preset.zoo_shape.input_shape) shape += (shape.empty() ? "" : "x") + std::to_string(d);
    std::cout << fmt::format("{:<14} {:<8} {:>6} {:>6} {:>6} {:>10}  {} ({}, {} classes)\n", preset.name,
                             preset.family, summary.layers, summary.width, summary.heads,
                             human_count(count_parameters(*model)), preset.description, shape,
                             preset.zoo_shape.num_classes);
  }
  return 0;
}

// Prints one JSON line so scripts/bench/ can put it in a table beside the Python twin.
int bench(const std::string& config_path, const std::vector<std::string>& overrides, int64_t steps, int64_t warmup,
          int64_t repeats) {
  auto experiment = load_experiment(config_path, overrides);
  auto timing = time_training_steps(experiment, steps, warmup, repeats);
  nlohmann::json line = {{"impl", "attnzoo"},
                         {"model", experiment.model_name},
                         {"precision", experiment.trainer.precision},
                         {"threads", torch::get_num_threads()},
                         {"batch_size", experiment.data.train_loader.batch_size},
                         {"parameters", count_parameters(*experiment.model)},
                         {"median_examples_per_second", std::round(timing.median() * 10) / 10},
                         {"min_examples_per_second", std::round(timing.min() * 10) / 10}};
  std::cout << line.dump() << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ensure_thread_environment(argv);
  // glibc returns large freed blocks to the OS, so every training step page-faults its activation
  // buffers in again; keeping them mapped made backward ~10% faster than Python instead of slower.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 128 << 20);
  CLI::App app{"attnzoo: attention models in C++ (LibTorch) — train, evaluate, export"};
  app.require_subcommand(1);

  std::string target;
  std::vector<std::string> overrides;
  auto* train_cmd = app.add_subcommand("train", "train from a YAML config (resumes if its run has a checkpoint)");
  train_cmd->add_option("config", target, "experiment YAML file, or a run directory to resume")->required();
  train_cmd->add_option("overrides", overrides, "key.path=value overrides, e.g. trainer.epochs=3");

  app.add_subcommand("zoo", "list the models and presets: layers, width, heads, parameters");

  int64_t steps = 30, warmup = 5, repeats = 3;
  auto* bench_cmd = app.add_subcommand("bench", "time training steps of a config's model on a synthetic batch");
  bench_cmd->add_option("config", target, "experiment YAML file")->required();
  bench_cmd->add_option("overrides", overrides, "key.path=value overrides");
  bench_cmd->add_option("--steps", steps, "timed steps per repeat")->capture_default_str();
  bench_cmd->add_option("--warmup", warmup, "untimed steps first")->capture_default_str();
  bench_cmd->add_option("--repeats", repeats, "repeats (min and median are reported)")->capture_default_str();

  CLI11_PARSE(app, argc, argv);
  try {
    if (train_cmd->parsed()) return train(target, overrides);
    if (bench_cmd->parsed()) return bench(target, overrides, steps, warmup, repeats);
    return zoo();
  } catch (const ConfigError& e) {
    std::cerr << e.what() << std::endl;
  } catch (const DataError& e) {
    std::cerr << e.what() << std::endl;
  } catch (const CheckpointError& e) {
    std::cerr << e.what() << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << std::endl;
    return 1;
  }
  return kExitBadInput;
}
