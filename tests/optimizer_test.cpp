#include "trainers/optimizer.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "models/zoo.h"

namespace attnzoo {
namespace {

TEST(Optimizer, BiasesNormsTokensAndPositionsAreNotDecayed) {
  auto config = Config::parse("model: {name: vit_micro}\n", "exp.yaml");
  auto model = build_model(ConfigSection(config, "model"), DataShape{{1, 28, 28}, 10});
  int decayed = 0, exempt = 0;
  for (const auto& p : model->named_parameters()) {
    bool no_decay = exempt_from_weight_decay(p.key(), p.value());
    (no_decay ? exempt : decayed)++;
    if (p.value().dim() >= 2 && no_decay) {
      EXPECT_TRUE(p.key().find("class_token") != std::string::npos || p.key().find("position") != std::string::npos ||
                  p.key().find("embed") != std::string::npos)
          << p.key();
    }
    if (p.key().find("bias") != std::string::npos) {
      EXPECT_TRUE(no_decay) << p.key();
    }
  }
  EXPECT_GT(decayed, 0);
  EXPECT_GT(exempt, 0);
}

TEST(Optimizer, AdamWGroupsCarryTheirOwnWeightDecay) {
  torch::nn::Linear layer(4, 3);
  OptimizerOptions o;
  o.name = "adamw";
  o.weight_decay = 0.1;
  auto optimizer = build_optimizer(o, *layer);
  ASSERT_EQ(optimizer->param_groups().size(), 2u);
  auto& decay = static_cast<torch::optim::AdamWOptions&>(optimizer->param_groups()[0].options());
  auto& no_decay = static_cast<torch::optim::AdamWOptions&>(optimizer->param_groups()[1].options());
  EXPECT_DOUBLE_EQ(decay.weight_decay(), 0.1);
  EXPECT_DOUBLE_EQ(no_decay.weight_decay(), 0.0);
  EXPECT_EQ(optimizer->param_groups()[0].params().size(), 1u);  // weight
  EXPECT_EQ(optimizer->param_groups()[1].params().size(), 1u);  // bias
  set_learning_rate(*optimizer, 0.5);
  EXPECT_DOUBLE_EQ(no_decay.lr(), 0.5);
}

TEST(Optimizer, SgdKeysOnAnAdamConfigAreAnError) {
  auto config = Config::parse("optim:\n  name: adam\n  momentum: 0.9\n", "exp.yaml");
  try {
    read_optimizer_options(ConfigSection(config, "optim"));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "config error: exp.yaml:3: optim.momentum: is only used by optim.name=sgd (this config uses adam)");
  }
}

}  // namespace
}  // namespace attnzoo
