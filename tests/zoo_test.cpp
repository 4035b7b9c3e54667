#include "models/zoo.h"
#include "test_fixtures.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "models/vit.h"

namespace attnzoo {
namespace {

const DataShape kMnist = testing::kMnistShape;
using testing::build_model_from_yaml;
using testing::model_config_error;

TEST(Zoo, PresetNamesAreUniqueAndFindable) {
  std::set<std::string> names;
  for (const auto& preset : model_presets()) {
    EXPECT_TRUE(names.insert(preset.name).second) << preset.name;
    EXPECT_FALSE(preset.description.empty());
    EXPECT_TRUE(preset.build);
  }
  for (const char* name : {"vit_tiny", "vit_small", "vit_base", "vit_mnist", "vit_micro"})
    EXPECT_EQ(names.count(name), 1u) << name;
}

TEST(Zoo, UnknownModelNameListsTheZoo) {
  auto message = model_config_error("model:\n  name: vit_huge\n");
  EXPECT_NE(message.find("config error: test.yaml:2"), std::string::npos) << message;
  EXPECT_NE(message.find("model.name"), std::string::npos) << message;
  EXPECT_NE(message.find("vit_huge"), std::string::npos) << message;
  for (const auto& preset : model_presets()) EXPECT_NE(message.find(preset.name), std::string::npos) << message;
}

TEST(Zoo, NumHeadsMustDivideDModel) {
  auto message = model_config_error("model:\n  name: vit_micro\n  d_model: 30\n  num_heads: 4\n");
  EXPECT_EQ(message, "config error: test.yaml:4: model.num_heads: 4 does not divide model.d_model=30");
}

TEST(Zoo, PatchSizeMustDivideImageSize) {
  auto message = model_config_error("model:\n  name: vit_mnist\n  patch_size: 5\n");
  EXPECT_NE(message.find("model.patch_size"), std::string::npos) << message;
  EXPECT_NE(message.find("image_size=28"), std::string::npos) << message;
}

TEST(Zoo, UnknownKeyIsAnError) {
  auto message = model_config_error("model:\n  name: vit_micro\n  num_head: 2\n");
  EXPECT_NE(message.find("model.num_head"), std::string::npos) << message;
}

TEST(Zoo, BadValuesAreConfigErrors) {
  EXPECT_NE(model_config_error("model:\n  name: vit_micro\n  pooling: max\n").find("model.pooling"), std::string::npos);
  EXPECT_NE(model_config_error("model:\n  name: vit_micro\n  depth: 0\n").find("model.depth"), std::string::npos);
  EXPECT_NE(model_config_error("model:\n  name: vit_micro\n  dropout: 1.5\n").find("model.dropout"), std::string::npos);
}

TEST(Zoo, PresetValuesComeFromDataAndConfigOverridesThem) {
  auto model = build_model_from_yaml("model:\n  name: vit_micro\n", DataShape{{3, 32, 32}, 7});
  auto vit = std::dynamic_pointer_cast<ViTImpl>(model);
  ASSERT_TRUE(vit);
  EXPECT_EQ(vit->family(), "vit");
  EXPECT_EQ(vit->options.in_channels(), 3);
  EXPECT_EQ(vit->options.image_size(), 32);
  EXPECT_EQ(vit->options.num_classes(), 7);

  vit = std::dynamic_pointer_cast<ViTImpl>(build_model_from_yaml(
      "model:\n  name: vit_micro\n  d_model: 48\n  num_heads: 3\n  depth: 3\n  patch_size: 4\n  num_classes: 4\n"
      "  pooling: mean\n  position: sinusoidal\n  norm_first: false\n"));
  ASSERT_TRUE(vit);
  EXPECT_EQ(vit->options.d_model(), 48);
  EXPECT_EQ(vit->options.num_heads(), 3);
  EXPECT_EQ(vit->options.depth(), 3);
  EXPECT_EQ(vit->options.num_classes(), 4);
  EXPECT_EQ(vit->options.pooling(), "mean");
  EXPECT_FALSE(vit->options.norm_first());
  EXPECT_EQ(vit->num_patches(), 49);
  vit->eval();
  EXPECT_EQ(vit->forward(torch::randn({2, 1, 28, 28})).sizes(), (std::vector<int64_t>{2, 4}));
}

TEST(Zoo, NonSquareImagesNeedAnImageSize) {
  auto message = model_config_error("model:\n  name: vit_micro\n", DataShape{{1, 28, 32}, 10});
  EXPECT_NE(message.find("model.image_size"), std::string::npos) << message;
}

TEST(Zoo, SmallPresetsBuildAndRun) {
  for (const char* name : {"vit_mnist", "vit_micro"}) {
    const auto& preset = [&]() -> const ModelPreset& {
      auto config = Config::parse(std::string("model:\n  name: ") + name + "\n", "test.yaml");
      ConfigSection section(config, "model");
      return find_model_preset(section);
    }();
    auto config = Config::parse(std::string("model:\n  name: ") + name + "\n", "test.yaml");
    ConfigSection section(config, "model");
    section.get_string("name", "");
    ModelSummary summary;
    auto model = preset.build(section, preset.zoo_shape, &summary);
    EXPECT_GT(summary.layers, 0);
    EXPECT_GT(summary.width, 0);
    EXPECT_GT(summary.heads, 0);
    auto classifier = std::dynamic_pointer_cast<ClassifierImpl>(model);
    ASSERT_TRUE(classifier);
    classifier->eval();
    EXPECT_EQ(classifier->forward(torch::randn({3, 1, 28, 28})).sizes(), (std::vector<int64_t>{3, 10})) << name;
  }
}

// torchvision's vit_b_16 has 86,567,656 parameters (its model card); ViT-Base/16 here must too.
TEST(Zoo, VitBaseHasTorchvisionsParameterCount) {
  auto model = build_model_from_yaml("model:\n  name: vit_base\n", DataShape{{3, 224, 224}, 1000});
  EXPECT_EQ(count_parameters(*model), 86567656);
}

}  // namespace
}  // namespace attnzoo
