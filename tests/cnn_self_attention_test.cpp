#include "models/cnn_self_attention.h"

#include <gtest/gtest.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/torch.h>

#include <algorithm>
#include <string>
#include <vector>

#include "models/zoo.h"
#include "test_fixtures.h"

namespace attnzoo {
namespace {

const DataShape kMnist = testing::kMnistShape;
using testing::build_model_from_yaml;
using testing::model_config_error;

int64_t count_self_attention(const torch::nn::Module& model) {
  int64_t count = 0;
  for (const auto& module : model.modules(/*include_self=*/false))
    if (module->as<SelfAttention2dImpl>()) ++count;
  return count;
}

CnnSelfAttentionOptions small_options() {
  return CnnSelfAttentionOptions(1, 10).widths({8, 16, 32}).depths({1, 1, 1}).attention_after({1, 2});
}

TEST(CnnSelfAttention, OutputShapeAndAttentionMapsPerStage) {
  torch::manual_seed(0);
  CnnSelfAttention model(small_options());
  model->eval();
  EXPECT_EQ(model->family(), "cnn_sa");
  ASSERT_EQ(model->attention_blocks().size(), 2u);
  model->keep_attention_weights(true);
  for (int64_t batch : {1, 3}) {
    auto logits = model(torch::randn({batch, 1, 28, 28}));
    EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{batch, 10}));
    auto weights = model->last_attention_weights();
    ASSERT_EQ(weights.size(), 2u);
    EXPECT_EQ(weights[0].sizes(), (std::vector<int64_t>{batch, 14 * 14, 14 * 14}));  // after stage 1: 14x14
    EXPECT_EQ(weights[1].sizes(), (std::vector<int64_t>{batch, 7 * 7, 7 * 7}));      // after stage 2: 7x7
  }
  EXPECT_THROW(model(torch::randn({2, 3, 28, 28})), c10::Error);  // wrong channels: a clear error
}

TEST(CnnSelfAttention, BatchOneAndThreeGiveTheSamePerExampleResultsInEval) {
  torch::manual_seed(1);
  CnnSelfAttention model(small_options());
  model->eval();
  torch::NoGradGuard no_grad;
  for (auto& block : model->attention_blocks()) block->gamma.fill_(1.0);  // make attention matter
  auto images = torch::randn({3, 1, 28, 28});
  auto together = model(images);
  for (int64_t b = 0; b < 3; ++b)
    EXPECT_TRUE(torch::allclose(model(images.narrow(0, b, 1)), together.narrow(0, b, 1), 1e-4, 1e-5)) << b;
}

TEST(CnnSelfAttention, BatchSizeIsNotBakedIntoATrace) {
  torch::manual_seed(2);
  CnnSelfAttention model(small_options());
  model->eval();
  for (auto& p : model->parameters()) p.set_requires_grad(false);
  for (auto& block : model->attention_blocks()) block->gamma.fill_(1.0);
  auto one = torch::randn({1, 1, 28, 28});
  auto traced = torch::jit::tracer::trace(
      {one}, [&](torch::jit::Stack inputs) -> torch::jit::Stack { return {model(inputs[0].toTensor())}; },
      [](const torch::autograd::Variable&) { return std::string(); }, /*strict=*/true, /*force_outplace=*/false);
  torch::jit::GraphFunction forward("forward", traced.first->graph, nullptr);
  auto three = torch::randn({3, 1, 28, 28});
  auto out = forward({three}).toTensor();
  ASSERT_EQ(out.sizes(), (std::vector<int64_t>{3, 10}));
  EXPECT_TRUE(torch::allclose(out, model(three), 1e-4, 1e-5));
}

TEST(CnnSelfAttention, LossFallsOnATinyBatch) {
  torch::manual_seed(3);
  auto model = std::dynamic_pointer_cast<CnnSelfAttentionImpl>(build_model_from_yaml("model:\n  name: cnn_sa_mnist\n"));
  ASSERT_TRUE(model);
  model->train();
  Batch batch;
  batch.input = torch::randn({16, 1, 28, 28});
  batch.target = torch::arange(16, torch::kLong).remainder(10);
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  double first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    auto out = model->step(batch, {});
    if (step == 0) first = out.loss.item<double>();
    last = out.loss.item<double>();
    adam.zero_grad();
    out.loss.backward();
    adam.step();
  }
  RecordProperty("first_loss", std::to_string(first));
  RecordProperty("last_loss", std::to_string(last));
  EXPECT_LT(last, 0.5 * first) << "first " << first << " last " << last;
  for (auto& block : model->attention_blocks())  // the attention branch was switched on by training
    EXPECT_NE(block->gamma.item<float>(), 0.0f);
}

TEST(CnnSelfAttention, AblationPresetHasNoSelfAttentionAndFewerParameters) {
  auto with = build_model_from_yaml("model:\n  name: cnn_sa_mnist\n");
  auto without = build_model_from_yaml("model:\n  name: cnn_mnist\n");
  EXPECT_EQ(count_self_attention(*with), 2);
  EXPECT_EQ(count_self_attention(*without), 0);
  // SAGAN block on C channels: 2 (C*C/8 + C/8) + 2 (C*C + C) + 1 (gamma), at C = 64 and C = 128.
  auto sagan = [](int64_t c) { return 2 * (c * (c / 8) + c / 8) + 2 * (c * c + c) + 1; };
  EXPECT_EQ(count_parameters(*with) - count_parameters(*without), sagan(64) + sagan(128));
  RecordProperty("cnn_sa_mnist_parameters", std::to_string(count_parameters(*with)));
  RecordProperty("cnn_mnist_parameters", std::to_string(count_parameters(*without)));
}

TEST(CnnSelfAttention, EmptyAttentionAfterIsTheAblation) {
  auto model = build_model_from_yaml("model:\n  name: cnn_sa_mnist\n  attention_after: []\n");
  EXPECT_EQ(count_self_attention(*model), 0);
  EXPECT_EQ(count_parameters(*model), count_parameters(*build_model_from_yaml("model:\n  name: cnn_mnist\n")));
}

TEST(CnnSelfAttention, PresetsAreInTheZoo) {
  std::vector<std::string> names;
  for (const auto& preset : model_presets()) {
    names.push_back(preset.name);
    if (preset.name.rfind("cnn", 0) == 0) {
      EXPECT_EQ(preset.family, "cnn_sa") << preset.name;
    }
  }
  for (const char* name : {"cnn_sa_mnist", "cnn_mnist", "cnn_sa_small", "vit_tiny", "vit_micro"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
}

TEST(CnnSelfAttention, SmallPresetRunsOn64x64Colour) {
  torch::manual_seed(4);
  auto model = std::dynamic_pointer_cast<CnnSelfAttentionImpl>(build_model_from_yaml("model:\n  name: cnn_sa_small\n",
                                                                     DataShape{{3, 64, 64}, 200}));
  ASSERT_TRUE(model);
  model->eval();
  model->keep_attention_weights(true);
  torch::NoGradGuard no_grad;
  EXPECT_EQ(model->forward(torch::randn({2, 3, 64, 64})).sizes(), (std::vector<int64_t>{2, 200}));
  ASSERT_EQ(model->last_attention_weights().size(), 1u);
  EXPECT_EQ(model->last_attention_weights()[0].sizes(), (std::vector<int64_t>{2, 256, 256}));  // 16x16
  RecordProperty("cnn_sa_small_parameters", std::to_string(count_parameters(*model)));
}

TEST(CnnSelfAttention, ConfigOverridesReachTheModel) {
  auto model = std::dynamic_pointer_cast<CnnSelfAttentionImpl>(
      build_model_from_yaml("model:\n  name: cnn_sa_mnist\n  widths: [16, 32]\n  depths: [2, 1]\n  attention_after: [0]\n"
            "  qk_channels: 4\n  dropout: 0.2\n  num_classes: 3\n"));
  ASSERT_TRUE(model);
  EXPECT_EQ(model->options.widths(), (std::vector<int64_t>{16, 32}));
  EXPECT_EQ(model->options.depths(), (std::vector<int64_t>{2, 1}));
  ASSERT_EQ(model->attention_blocks().size(), 1u);
  EXPECT_EQ(model->attention_blocks()[0]->qk_channels(), 4);
  EXPECT_EQ(model->attention_blocks()[0]->options.channels(), 16);
  EXPECT_EQ(model->head->weight.sizes(), (std::vector<int64_t>{3, 32}));
}

TEST(CnnSelfAttention, ZooRejectsMismatchedWidthsAndDepths) {
  EXPECT_EQ(model_config_error("model:\n  name: cnn_sa_mnist\n  widths: [32, 64]\n  depths: [1, 1, 1]\n  "
                     "attention_after: [1]\n"),
            "config error: test.yaml:4: model.depths: model.widths has 2 stages but model.depths has 3; give one "
            "depth per width");
  auto message = model_config_error("model:\n  name: cnn_sa_mnist\n  widths: [32, 64]\n  attention_after: []\n");
  EXPECT_EQ(message.rfind("config error: test.yaml:3: model.widths: ", 0), 0u) << message;
}

TEST(CnnSelfAttention, ZooRejectsAttentionAfterOutOfRange) {
  EXPECT_EQ(model_config_error("model:\n  name: cnn_sa_mnist\n  attention_after: [1, 3]\n"),
            "config error: test.yaml:3: model.attention_after: stage 3 is out of range: model.widths has 3 "
            "stages, numbered 0..2");
  auto negative = model_config_error("model:\n  name: cnn_sa_mnist\n  attention_after: [-1]\n");
  EXPECT_EQ(negative.rfind("config error: test.yaml:3: model.attention_after: stage -1", 0), 0u) << negative;
  auto twice = model_config_error("model:\n  name: cnn_sa_mnist\n  attention_after: [2, 2]\n");
  EXPECT_NE(twice.find("listed twice"), std::string::npos) << twice;
  auto unknown = model_config_error("model:\n  name: cnn_sa_mnist\n  width: [8]\n");
  EXPECT_EQ(unknown.rfind("config error: test.yaml:3: model.width", 0), 0u) << unknown;
}

}  // namespace
}  // namespace attnzoo
