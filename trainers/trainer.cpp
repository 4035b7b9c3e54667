#include "trainers/trainer.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <filesystem>

#include "datasets/loader.h"
#include "trainers/interrupt.h"
#include "trainers/metrics_log.h"
#include "trainers/plots.h"
#include "trainers/precision.h"
#include "trainers/progress.h"

namespace attnzoo {
namespace fs = std::filesystem;

namespace {
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string percent_or_value(const std::string& name, double value) {
  if (name == "accuracy" || name.find("acc") != std::string::npos) return fmt::format("{:.2f}%", 100.0 * value);
  return fmt::format("{:.4f}", value);
}
}  // namespace

struct Trainer::Impl {
  Experiment& e;
  TrainerOptions& o;
  torch::Device device{torch::kCPU};
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::vector<torch::Tensor> parameters;  // trainable, in registration order
  std::vector<torch::Tensor> ema;         // EMA copies of all model tensors (params + buffers)
  TrainingState state;
  CheckpointMeta meta;
  std::string checkpoint_dir, last_path, best_path;
  std::unique_ptr<MetricsLog> log;
  double train_seconds = 0.0;  // wall time spent in training steps, summed across resumes in this process

  explicit Impl(Experiment& experiment) : e(experiment), o(experiment.trainer) {}

  void setup() {
    device = resolve_device(o.device);
    if (o.threads > 0) torch::set_num_threads(static_cast<int>(o.threads));
    e.model->to(device);
    optimizer = build_optimizer(e.optim, *e.model);
    for (const auto& p : e.model->parameters())
      if (p.requires_grad()) parameters.push_back(p);
    if (o.ema_decay > 0)
      for (const auto& [name, t] : module_tensors(*e.model)) ema.push_back(t.detach().clone());
    checkpoint_dir = (fs::path(e.run_dir) / "checkpoints").string();
    last_path = checkpoint_dir + "/last.pt";
    best_path = checkpoint_dir + "/best.pt";
    meta = {e.model->family(), e.model_name, e.config->resolved_yaml()};
    fs::create_directories(checkpoint_dir);
  }

  void save(const std::string& path) {
    save_checkpoint(path, *e.model, optimizer.get(), ema, state, meta);
  }

  // --- EMA: evaluation and best.pt use the averaged weights when it is on.
  void update_ema() {
    if (ema.empty()) return;
    torch::NoGradGuard no_grad;
    auto tensors = module_tensors(*e.model);
    for (size_t i = 0; i < ema.size(); ++i) {
      if (tensors[i].second.is_floating_point())
        ema[i].mul_(o.ema_decay).add_(tensors[i].second.detach(), 1.0 - o.ema_decay);
      else
        ema[i].copy_(tensors[i].second);
    }
  }
  void swap_ema() {
    if (ema.empty()) return;
    torch::NoGradGuard no_grad;
    auto tensors = module_tensors(*e.model);
    for (size_t i = 0; i < ema.size(); ++i) {
      auto saved = tensors[i].second.detach().clone();
      tensors[i].second.copy_(ema[i]);
      ema[i].copy_(saved);
    }
  }

  std::map<std::string, double> evaluate(const std::shared_ptr<Dataset>& dataset, const std::string& label) {
    std::map<std::string, double> sums;
    int64_t count = 0;
    swap_ema();
    e.model->eval();
    {
      torch::NoGradGuard no_grad;
      DataLoader loader(dataset, e.data.eval_loader);
      loader.start_epoch(0);
      Progress progress(label, loader.batches_per_epoch(), o.progress_bar && Progress::stderr_is_terminal());
      int64_t done = 0;
      StepOptions step_options;  // no label smoothing: report the true loss
      while (auto batch = loader.next()) {
        auto b = batch->to(device);
        auto out = step_in_precision(*e.model, b, step_options, o.precision, device);
        sums["loss"] += out.loss.item<double>() * out.count;
        for (const auto& [name, value] : out.metrics) sums[name] += value.item<double>() * out.count;
        count += out.count;
        progress.update(++done, "", -1);
      }
      progress.finish();
    }
    e.model->train();
    swap_ema();
    for (auto& [name, sum] : sums) sum /= std::max<int64_t>(count, 1);
    return sums;
  }

  bool improves(double value) const {
    if (std::isnan(state.best_metric)) return true;
    return o.monitor_mode == "max" ? value > state.best_metric : value < state.best_metric;
  }

  // Evaluates on the validation split, logs, keeps best.pt, counts patience. Returns true to stop early.
  bool validate(int64_t epoch) {
    if (!e.data.val) return false;
    auto metrics = evaluate(e.data.val, "  eval");
    nlohmann::json record = {{"type", "eval"}, {"split", "val"}, {"step", state.global_step}, {"epoch", epoch}};
    for (const auto& [name, value] : metrics) record[name] = value;
    double value = metrics.at(o.monitor);
    bool better = improves(value);
    std::string shown;
    for (const auto& [name, v] : metrics) shown += fmt::format(" {} {}", name, percent_or_value(name, v));
    if (better) {
      state.best_metric = value;
      state.best_step = state.global_step;
      state.evals_without_improvement = 0;
      // best.pt holds the weights being judged (EMA when it is on).
      swap_ema();
      save(best_path);
      swap_ema();
    } else {
      ++state.evals_without_improvement;
    }
    record["best"] = better;
    log->write(record);
    std::fprintf(stderr, "step %lld epoch %lld | val%s%s\n", (long long)state.global_step, (long long)epoch + 1,
                 shown.c_str(), better ? " (best)" : "");
    write_training_plots(log->records(), (fs::path(e.run_dir) / "plots").string());
    return o.early_stopping_patience > 0 && state.evals_without_improvement >= o.early_stopping_patience;
  }

  TrainResult stop_on_nonfinite(double loss, int64_t epoch, int64_t batch_index) {
    TrainResult r;
    r.outcome = TrainOutcome::kNonFiniteLoss;
    r.global_step = state.global_step;
    bool have_checkpoint = fs::exists(last_path);
    r.message = fmt::format(
        "training stopped: loss is {} at step {} (epoch {}, batch {}); {}. Try a lower optim.lr, "
        "trainer.grad_clip_norm, or trainer.precision=fp32",
        std::isnan(loss) ? "NaN" : "infinite", state.global_step + 1, epoch + 1, batch_index + 1,
        have_checkpoint ? fmt::format("the last good checkpoint {} is untouched", last_path)
                        : std::string("no checkpoint had been written yet"));
    log->write({{"type", "stopped"}, {"reason", "non-finite loss"}, {"step", state.global_step}, {"epoch", epoch}});
    return r;
  }

  TrainResult run() {
    setup();
    bool resumed = fs::exists(last_path);
    if (resumed) {
      CheckpointMeta saved_meta;
      state = load_checkpoint(last_path, *e.model, optimizer.get(), o.ema_decay > 0 ? &ema : nullptr, &saved_meta);
      if (saved_meta.family != meta.family)
        throw CheckpointError(fmt::format("checkpoint error: {} is a {} model but the config builds {}; use a new "
                                          "run directory (out=...)",
                                          last_path, saved_meta.family, meta.family));
      if (o.ema_decay > 0 && ema.empty())
        for (const auto& [name, t] : module_tensors(*e.model)) ema.push_back(t.detach().clone());
      // A finished run continues when the config now asks for more (trainer.epochs=10 after 5).
      bool more_to_do = state.epoch < o.epochs && (o.max_steps == 0 || state.global_step < o.max_steps);
      state.finished = state.finished && !more_to_do;
      std::fprintf(stderr, "resuming %s from step %lld (epoch %lld, batch %lld)\n", e.run_dir.c_str(),
                   (long long)state.global_step, (long long)state.epoch + 1, (long long)state.batch_in_epoch);
    }
    write_file_atomically((fs::path(e.run_dir) / "config.yaml").string(), e.config->resolved_yaml());
    log = std::make_unique<MetricsLog>((fs::path(e.run_dir) / "metrics.jsonl").string(),
                                       resumed ? state.global_step : -1);

    DataLoader loader(e.data.train, e.data.train_loader);
    const int64_t batches = loader.batches_per_epoch();
    if (batches == 0)
      throw std::runtime_error(fmt::format("data error: the training split has fewer examples than one batch ({}); "
                                           "lower data.batch_size or set data.drop_last=false",
                                           e.data.train_loader.batch_size));
    const int64_t updates_per_epoch = (batches + o.grad_accumulation - 1) / o.grad_accumulation;
    int64_t total_updates = updates_per_epoch * o.epochs;
    if (o.max_steps > 0) total_updates = std::min(total_updates, o.max_steps);
    LearningRateSchedule schedule(e.schedule, e.optim.lr, total_updates, updates_per_epoch);
    StepOptions step_options;
    step_options.label_smoothing = o.label_smoothing;
    const bool interactive = o.progress_bar && Progress::stderr_is_terminal();

    std::fprintf(stderr, "training %s: %s (%lld parameters) on %s, %s | %s | %lld steps of batch %lld\n",
                 e.name.c_str(), e.model_name.c_str(), (long long)count_parameters(*e.model),
                 device.str().c_str(), o.precision.c_str(), e.data.train->describe().c_str(),
                 (long long)total_updates, (long long)e.data.train_loader.batch_size);

    e.model->train();
    auto run_start = Clock::now();
    int64_t steps_this_run = 0;
    bool stop_early = state.finished;
    for (int64_t epoch = state.epoch; epoch < o.epochs && !stop_early; ++epoch) {
      loader.start_epoch(epoch, state.batch_in_epoch);
      int64_t batch_index = state.batch_in_epoch;
      Progress progress(fmt::format("epoch {}/{}", epoch + 1, o.epochs), batches, interactive);
      double window_loss = 0, window_count = 0, window_examples = 0;
      std::map<std::string, double> window_metrics;
      auto window_start = Clock::now();
      double window_wait_start = loader.wait_seconds();
      int64_t micro = 0;
      while (auto batch = loader.next()) {
        auto step_start = Clock::now();
        auto b = batch->to(device);
        auto out = step_in_precision(*e.model, b, step_options, o.precision, device);
        double loss_value = out.loss.item<double>();
        if (!std::isfinite(loss_value)) return stop_on_nonfinite(loss_value, epoch, batch_index);
        (o.grad_accumulation > 1 ? out.loss / static_cast<double>(o.grad_accumulation) : out.loss).backward();
        ++micro;
        ++batch_index;
        window_loss += loss_value * out.count;
        window_count += out.count;
        window_examples += b.size();
        for (const auto& [name, value] : out.metrics) window_metrics[name] += value.item<double>() * out.count;

        if (micro < o.grad_accumulation && batch_index < batches) {
          train_seconds += seconds_since(step_start);
          continue;
        }
        micro = 0;
        if (o.grad_clip_norm > 0) torch::nn::utils::clip_grad_norm_(parameters, o.grad_clip_norm);
        double lr = schedule.lr_at(state.global_step);
        set_learning_rate(*optimizer, lr);
        optimizer->step();
        optimizer->zero_grad();
        update_ema();
        ++state.global_step;
        ++steps_this_run;
        state.epoch = epoch;
        state.batch_in_epoch = batch_index;
        train_seconds += seconds_since(step_start);

        double elapsed = seconds_since(run_start);
        double eta = elapsed / steps_this_run * (total_updates - state.global_step);
        bool log_now = state.global_step % o.log_every_steps == 0 || batch_index == batches;
        if (log_now || interactive) {
          double window_seconds = std::max(1e-9, seconds_since(window_start));
          std::string stats = fmt::format("loss {:.4f}", window_loss / std::max(1.0, window_count));
          for (const auto& [name, sum] : window_metrics)
            stats += fmt::format(" {} {}", name, percent_or_value(name, sum / std::max(1.0, window_count)));
          stats += fmt::format(" | {:.0f} it/s", window_examples / window_seconds);
          progress.update(batch_index, stats, eta);
          if (log_now) {
            nlohmann::json record = {{"type", "train"},
                                     {"step", state.global_step},
                                     {"epoch", epoch + static_cast<double>(batch_index) / batches},
                                     {"loss", window_loss / std::max(1.0, window_count)},
                                     {"lr", lr},
                                     {"examples_per_second", window_examples / window_seconds},
                                     {"data_wait_share", (loader.wait_seconds() - window_wait_start) / window_seconds}};
            for (const auto& [name, sum] : window_metrics) record[name] = sum / std::max(1.0, window_count);
            log->write(record);
            window_loss = window_count = window_examples = 0;
            window_metrics.clear();
            window_start = Clock::now();
            window_wait_start = loader.wait_seconds();
          }
        }
        bool last_step = o.max_steps > 0 && state.global_step >= o.max_steps;
        if (o.eval_every_steps > 0 && state.global_step % o.eval_every_steps == 0 && !last_step) {
          progress.finish();
          stop_early = validate(epoch);
        }
        if (o.checkpoint_every_steps > 0 && state.global_step % o.checkpoint_every_steps == 0) save(last_path);
        if (stop_requested()) {
          progress.finish();
          save(last_path);
          log->write({{"type", "stopped"}, {"reason", "interrupted"}, {"step", state.global_step}});
          TrainResult r;
          r.outcome = TrainOutcome::kInterrupted;
          r.global_step = state.global_step;
          r.message = fmt::format("interrupted: checkpoint saved at step {} in {}; run `attnzoo train {}` to resume",
                                  state.global_step, last_path, e.run_dir);
          return r;
        }
        if (last_step || stop_early) break;
      }
      progress.finish(/*keep=*/true);  // one summary line per epoch stays on screen
      bool epoch_done = batch_index == batches;
      bool reached_max = o.max_steps > 0 && state.global_step >= o.max_steps;
      if (epoch_done) {
        state.epoch = epoch + 1;
        state.batch_in_epoch = 0;
      }
      bool eval_now = o.eval_every_steps > 0 ? reached_max || epoch + 1 == o.epochs
                                             : (epoch + 1) % o.eval_every_epochs == 0 || epoch + 1 == o.epochs ||
                                                   reached_max;
      if (eval_now && !stop_early) stop_early = validate(epoch);
      if (reached_max) stop_early = true;
      if (stop_early || state.epoch >= o.epochs) state.finished = true;
      save(last_path);
      if (stop_early && o.early_stopping_patience > 0 && state.evals_without_improvement >= o.early_stopping_patience)
        std::fprintf(stderr, "early stopping: no better val %s for %lld evaluations\n", o.monitor.c_str(),
                     (long long)state.evals_without_improvement);
    }
    if (!e.data.val) {
      // Without a validation split the last weights are the ones to keep (averaged, when EMA is on).
      swap_ema();
      save(best_path);
      swap_ema();
    }
    return finish();
  }

  TrainResult finish() {
    TrainResult r;
    r.global_step = state.global_step;
    std::string weights = "last";
    if (fs::exists(best_path) && e.data.val) {
      // Test with the weights validation picked.
      load_checkpoint(best_path, *e.model, nullptr, nullptr, nullptr);
      weights = fmt::format("best checkpoint, step {}", state.best_step);
    } else if (!ema.empty()) {
      swap_ema();
      weights = "EMA weights";
    }
    std::string summary;
    if (e.data.test) {
      auto saved_ema = std::move(ema);  // the model already holds the weights to test
      ema.clear();
      r.test_metrics = evaluate(e.data.test, "  test");
      ema = std::move(saved_ema);
      nlohmann::json record = {{"type", "eval"}, {"split", "test"}, {"step", state.global_step}};
      for (const auto& [name, value] : r.test_metrics) {
        record[name] = value;
        summary += fmt::format("{}test {} {}", summary.empty() ? "" : ", ", name, percent_or_value(name, value));
      }
      log->write(record);
    }
    auto plots = write_training_plots(log->records(), (fs::path(e.run_dir) / "plots").string());
    std::string written = fmt::format("{}/config.yaml, {}, {}", e.run_dir, log->path(), last_path);
    if (fs::exists(best_path)) written += ", " + best_path;
    for (const auto& p : plots) written += ", " + p;
    r.message = fmt::format("done: {} ({}) after {} steps, {} training | wrote {}",
                            summary.empty() ? std::string("no test split") : summary, weights, state.global_step,
                            format_duration(train_seconds), written);
    return r;
  }
};

Trainer::Trainer(Experiment& experiment) : impl_(std::make_unique<Impl>(experiment)) {}
Trainer::~Trainer() = default;
TrainResult Trainer::run() { return impl_->run(); }
std::map<std::string, double> Trainer::evaluate(const std::shared_ptr<Dataset>& dataset) {
  return impl_->evaluate(dataset, "eval");
}

}  // namespace attnzoo
