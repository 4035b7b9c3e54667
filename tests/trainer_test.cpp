#include "trainers/trainer.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "test_fixtures.h"
#include "trainers/interrupt.h"

namespace attnzoo {
namespace {

using testing::TempDir;

// A tiny but complete experiment: dropout, augmentation, threaded loading, warmup + cosine, EMA and
// a validation split, so resume has every kind of state to get right.
class TrainerTest : public ::testing::Test {
 protected:
  TrainerTest() : dir_("trainer") {
    testing::write_tiny_mnist(dir_.path() / "data", 96, 32);
    std::ofstream(dir_.str("exp.yaml")) << R"(
name: tiny
seed: 3
model: {name: vit_micro, dropout: 0.1}
data:
  name: mnist
  root: data
  val_fraction: 0.25
  batch_size: 16
  num_workers: 2
  augment: {random_crop_padding: 2, horizontal_flip: true}
optim: {name: adamw, lr: 0.003}
schedule: {name: cosine, warmup_steps: 3}
trainer: {epochs: 2, precision: fp32, progress_bar: false, ema_decay: 0.9, log_every_steps: 2}
)";
    clear_stop_request();
  }

  Experiment load(const std::string& run, std::vector<std::string> overrides = {}) {
    overrides.push_back("out=" + dir_.str(run));
    return load_experiment(dir_.str("exp.yaml"), overrides);
  }

  static void expect_same_weights(torch::nn::Module& a, torch::nn::Module& b) {
    auto ta = module_tensors(a), tb = module_tensors(b);
    ASSERT_EQ(ta.size(), tb.size());
    for (size_t i = 0; i < ta.size(); ++i)
      EXPECT_TRUE(torch::equal(ta[i].second, tb[i].second)) << ta[i].first << " differs";
  }

  TempDir dir_;
};

TEST_F(TrainerTest, TwoEpochsEqualOneEpochResumeOneEpochBitForBit) {
  // A schedule that does not depend on the number of epochs, so "1 epoch, then resume with
  // epochs=2" asks for exactly the same updates as 2 epochs straight.
  std::vector<std::string> constant = {"schedule.name=constant"};
  auto straight = load("straight", constant);
  EXPECT_EQ(Trainer(straight).run().outcome, TrainOutcome::kFinished);

  auto first = load("resumed", {"schedule.name=constant", "trainer.epochs=1"});
  Trainer(first).run();
  auto second = load("resumed", constant);  // same run directory: resumes from checkpoints/last.pt
  auto result = Trainer(second).run();
  EXPECT_EQ(result.outcome, TrainOutcome::kFinished);
  expect_same_weights(*straight.model, *second.model);
}

TEST_F(TrainerTest, CtrlCMidEpochSavesAndResumesBitForBit) {
  auto straight = load("straight");
  Trainer(straight).run();

  auto interrupted = load("interrupted");
  request_stop();  // as if Ctrl-C came during the first step
  auto stopped = Trainer(interrupted).run();
  EXPECT_EQ(stopped.outcome, TrainOutcome::kInterrupted);
  EXPECT_EQ(stopped.global_step, 1);
  EXPECT_NE(stopped.message.find("checkpoint saved at step 1"), std::string::npos) << stopped.message;
  clear_stop_request();

  auto resumed = load("interrupted");
  EXPECT_EQ(Trainer(resumed).run().outcome, TrainOutcome::kFinished);
  expect_same_weights(*straight.model, *resumed.model);
}

// Wraps a model and makes its loss NaN from the `bad_step`-th call on.
class NanAfterImpl : public ZooModelImpl {
 public:
  NanAfterImpl(std::shared_ptr<ZooModelImpl> inner, int bad_step) : inner_(inner), bad_step_(bad_step) {
    register_module("inner", inner_);
  }
  StepOutput step(const Batch& batch, const StepOptions& options) override {
    auto out = inner_->step(batch, options);
    if (is_training() && ++calls_ >= bad_step_) out.loss = out.loss * std::numeric_limits<float>::quiet_NaN();
    return out;
  }
  std::string family() const override { return inner_->family(); }
  std::vector<std::string> metric_names() const override { return inner_->metric_names(); }

 private:
  std::shared_ptr<ZooModelImpl> inner_;
  int bad_step_, calls_ = 0;
};

TEST_F(TrainerTest, NonFiniteLossStopsNamingTheStepAndKeepsTheLastCheckpoint) {
  auto e = load("nan", {"trainer.checkpoint_every_steps=2"});
  e.model = std::make_shared<NanAfterImpl>(e.model, 4);
  auto result = Trainer(e).run();
  EXPECT_EQ(result.outcome, TrainOutcome::kNonFiniteLoss);
  EXPECT_NE(result.message.find("loss is NaN at step 4 (epoch 1, batch 4)"), std::string::npos) << result.message;
  EXPECT_NE(result.message.find("is untouched"), std::string::npos) << result.message;
  auto check = load("nan");
  NanAfterImpl wrapped(check.model, 1000);  // same tensor names as the model that was saved
  auto state = load_checkpoint(dir_.str("nan/checkpoints/last.pt"), wrapped, nullptr, nullptr, nullptr);
  EXPECT_EQ(state.global_step, 2);
  for (const auto& [name, t] : module_tensors(wrapped)) EXPECT_TRUE(torch::isfinite(t).all().item<bool>()) << name;
}

TEST_F(TrainerTest, WritesResolvedConfigMetricsAndPlotsThatReproduceTheRun) {
  auto e = load("outputs");
  auto result = Trainer(e).run();
  ASSERT_EQ(result.outcome, TrainOutcome::kFinished);
  EXPECT_TRUE(result.test_metrics.count("accuracy"));
  for (const char* file : {"config.yaml", "metrics.jsonl", "checkpoints/last.pt", "checkpoints/best.pt",
                           "plots/loss.png", "plots/accuracy.png"})
    EXPECT_TRUE(std::filesystem::exists(dir_.path() / "outputs" / file)) << file;

  // Training again from the written config (into a new folder) gives the same weights.
  auto again = load_experiment(dir_.str("outputs/config.yaml"), {"out=" + dir_.str("again")});
  Trainer(again).run();
  expect_same_weights(*e.model, *again.model);

  // The log has train records with falling loss, and val and test evaluations.
  std::ifstream log(dir_.str("outputs/metrics.jsonl"));
  std::string line;
  std::vector<double> train_losses;
  int val = 0, test = 0;
  while (std::getline(log, line)) {
    auto r = nlohmann::json::parse(line);
    if (r["type"] == "train") train_losses.push_back(r["loss"]);
    if (r["type"] == "eval" && r["split"] == "val") ++val;
    if (r["type"] == "eval" && r["split"] == "test") ++test;
  }
  ASSERT_GE(train_losses.size(), 3u);
  EXPECT_LT(train_losses.back(), train_losses.front());
  EXPECT_EQ(val, 2);
  EXPECT_EQ(test, 1);
}

TEST_F(TrainerTest, CheckpointOfADifferentModelIsRefusedAndLeftAlone) {
  auto e = load("mismatch", {"trainer.epochs=1"});
  Trainer(e).run();
  auto before = testing::read_file(dir_.str("mismatch/checkpoints/last.pt"));
  auto other = load("mismatch", {"model.d_model=48", "model.num_heads=4"});
  try {
    Trainer(other).run();
    FAIL() << "no error";
  } catch (const CheckpointError& error) {
    EXPECT_NE(std::string(error.what()).find("holds a different model"), std::string::npos) << error.what();
  }
  EXPECT_EQ(testing::read_file(dir_.str("mismatch/checkpoints/last.pt")), before);
}

TEST_F(TrainerTest, AccumulatingTwoHalfBatchesEqualsOneFullBatch) {
  // No dropout, augmentation or EMA: the two runs see the same examples in the same order.
  std::vector<std::string> common = {"model.dropout=0", "data.augment.random_crop_padding=0",
                                     "data.augment.horizontal_flip=false", "data.train_limit=64",
                                     "trainer.ema_decay=0", "trainer.epochs=1",
                                     // SGD, not Adam: Adam would hide a wrongly scaled gradient.
                                     "optim.name=sgd", "optim.lr=0.1"};
  auto full = common, halves = common;
  full.push_back("data.batch_size=32");
  halves.insert(halves.end(), {"data.batch_size=16", "trainer.grad_accumulation=2"});
  auto a = load("full", full);
  auto b = load("halves", halves);
  Trainer(a).run();
  Trainer(b).run();
  auto ta = module_tensors(*a.model), tb = module_tensors(*b.model);
  for (size_t i = 0; i < ta.size(); ++i)
    EXPECT_TRUE(torch::allclose(ta[i].second, tb[i].second, 1e-4, 1e-5)) << ta[i].first;
}

TEST_F(TrainerTest, EarlyStoppingEndsTheRunAfterPatienceEvaluationsWithoutProgress) {
  // lr 0: nothing improves after the first evaluation.
  auto e = load("patience", {"optim.lr=0", "trainer.eval_every_steps=1", "trainer.early_stopping_patience=2",
                             "trainer.epochs=5"});
  auto result = Trainer(e).run();
  EXPECT_EQ(result.outcome, TrainOutcome::kFinished);
  EXPECT_EQ(result.global_step, 3);  // best at step 1, no better at steps 2 and 3
}

TEST_F(TrainerTest, MonitorMustBeAMetricOfTheModel) {
  try {
    load("monitor", {"trainer.monitor=bleu"});
    FAIL() << "no error";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()),
              "config error: command line 'trainer.monitor=bleu': trainer.monitor: 'bleu' is not a metric of this "
              "model (accuracy, loss)");
  }
}

}  // namespace
}  // namespace attnzoo
