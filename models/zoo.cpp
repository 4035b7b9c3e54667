#include "models/zoo.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include "models/cnn_self_attention.h"
#include "models/vit.h"

namespace attnzoo {
namespace {

// A preset's values; every one may be overridden by a key of the `model:` section.
struct ViTPreset {
  int64_t patch_size, d_model, depth, num_heads, mlp_dim;
  double dropout = 0.0;
};

// Reads the ViT keys (preset values as defaults), checks them together, builds.
std::shared_ptr<ZooModelImpl> build_vit(const ViTPreset& preset, ConfigSection& section, const DataShape& data,
                                        ModelSummary* summary) {
  // Data shape first, so a config only names what the data cannot tell.
  int64_t data_channels = 3, data_size = 224, data_classes = 1000;
  if (data.input_shape.size() == 3) {
    data_channels = data.input_shape[0];
    data_size = data.input_shape[1];
    if (data.input_shape[1] != data.input_shape[2] && !section.has("image_size"))
      section.fail("image_size", fmt::format("the data's images are {}x{}, but ViT needs square images; resize "
                                             "them or set model.image_size",
                                             data.input_shape[1], data.input_shape[2]));
  }
  if (data.num_classes > 0) data_classes = data.num_classes;

  const int64_t image_size = section.get_int("image_size", data_size, 1);
  const int64_t in_channels = section.get_int("in_channels", data_channels, 1);
  const int64_t num_classes = section.get_int("num_classes", data_classes, 1);
  const int64_t patch_size = section.get_int("patch_size", preset.patch_size, 1);
  const int64_t d_model = section.get_int("d_model", preset.d_model, 1);
  const int64_t depth = section.get_int("depth", preset.depth, 1);
  const int64_t num_heads = section.get_int("num_heads", preset.num_heads, 1);
  const int64_t mlp_dim = section.get_int("mlp_dim", preset.mlp_dim, 1);
  const double dropout = section.get_double("dropout", preset.dropout, 0.0, 0.99);
  const double attention_dropout = section.get_double("attention_dropout", 0.0, 0.0, 0.99);
  const auto pooling = section.get_choice("pooling", "cls", {"cls", "mean"});
  const bool norm_first = section.get_bool("norm_first", true);
  const auto position = section.get_choice("position", "learned", {"learned", "sinusoidal", "none"});

  if (d_model % num_heads != 0)
    section.fail("num_heads", fmt::format("{} does not divide model.d_model={}", num_heads, d_model));
  if (image_size % patch_size != 0)
    section.fail("patch_size",
                 fmt::format("{} does not divide model.image_size={}", patch_size, image_size));
  section.finish();

  if (summary) *summary = ModelSummary{depth, d_model, num_heads};
  return std::make_shared<ViTImpl>(ViTOptions(image_size, patch_size, num_classes)
                                       .in_channels(in_channels)
                                       .d_model(d_model)
                                       .depth(depth)
                                       .num_heads(num_heads)
                                       .mlp_dim(mlp_dim)
                                       .dropout(dropout)
                                       .attention_dropout(attention_dropout)
                                       .pooling(pooling)
                                       .norm_first(norm_first)
                                       .position(position));
}

ModelPreset vit_preset(std::string name, std::string description, DataShape zoo_shape, ViTPreset preset) {
  return ModelPreset{std::move(name), "vit", std::move(description), std::move(zoo_shape),
                     [preset](ConfigSection& section, const DataShape& data, ModelSummary* summary) {
                       return build_vit(preset, section, data, summary);
                     }};
}

// A CNN-with-self-attention preset; every value may be overridden by a key of the `model:` section.
struct CnnPreset {
  std::vector<int64_t> widths, depths, attention_after;
  double dropout = 0.0;
};

// Reads the cnn_sa keys (preset values as defaults), checks them together, builds.
std::shared_ptr<ZooModelImpl> build_cnn_self_attention(const CnnPreset& preset, ConfigSection& section,
                                                       const DataShape& data, ModelSummary* summary) {
  int64_t data_channels = 3, data_classes = 1000;
  if (data.input_shape.size() == 3) data_channels = data.input_shape[0];
  if (data.num_classes > 0) data_classes = data.num_classes;

  const int64_t in_channels = section.get_int("in_channels", data_channels, 1);
  const int64_t num_classes = section.get_int("num_classes", data_classes, 1);
  const auto widths = section.get_int_list("widths", preset.widths);
  const auto depths = section.get_int_list("depths", preset.depths);
  const auto attention_after = section.get_int_list("attention_after", preset.attention_after);
  const int64_t qk_channels = section.get_int("qk_channels", 0, 0);  // 0 = C/8 at each attention block
  const bool scaled_attention = section.get_bool("scaled_attention", false);
  const double dropout = section.get_double("dropout", preset.dropout, 0.0, 0.99);

  const auto num_stages = static_cast<int64_t>(widths.size());
  if (widths.empty()) section.fail("widths", "needs at least one stage, e.g. [32, 64, 128]");
  if (depths.size() != widths.size())  // blame the key the config wrote (depths if both)
    section.fail(section.has("depths") ? "depths" : "widths",
                 fmt::format("model.widths has {} stages but model.depths has {}; give one depth per width",
                             widths.size(), depths.size()));
  for (auto width : widths)
    if (width < 1) section.fail("widths", fmt::format("{} is not a positive number of channels", width));
  for (auto depth : depths)
    if (depth < 1) section.fail("depths", fmt::format("{} is not a positive number of blocks", depth));
  for (size_t i = 0; i < attention_after.size(); ++i) {
    const auto stage = attention_after[i];
    if (stage < 0 || stage >= num_stages)
      section.fail("attention_after",
                   fmt::format("stage {} is out of range: model.widths has {} stages, numbered 0..{}{}", stage,
                               num_stages, num_stages - 1,
                               section.has("attention_after") ? "" : " (the preset's value; set model.attention_after)"));
    for (size_t j = 0; j < i; ++j)
      if (attention_after[j] == stage)
        section.fail("attention_after", fmt::format("stage {} is listed twice", stage));
  }
  section.finish();

  if (summary) {
    int64_t blocks = 0;
    for (auto depth : depths) blocks += depth;
    *summary = ModelSummary{blocks, widths.back(), attention_after.empty() ? 0 : 1};
  }
  return std::make_shared<CnnSelfAttentionImpl>(CnnSelfAttentionOptions(in_channels, num_classes)
                                                    .widths(widths)
                                                    .depths(depths)
                                                    .attention_after(attention_after)
                                                    .qk_channels(qk_channels)
                                                    .scaled_attention(scaled_attention)
                                                    .dropout(dropout));
}

ModelPreset cnn_preset(std::string name, std::string description, DataShape zoo_shape, CnnPreset preset) {
  return ModelPreset{std::move(name), "cnn_sa", std::move(description), std::move(zoo_shape),
                     [preset](ConfigSection& section, const DataShape& data, ModelSummary* summary) {
                       return build_cnn_self_attention(preset, section, data, summary);
                     }};
}

const DataShape kImageNet{{3, 224, 224}, 1000};
const DataShape kMnist{{1, 28, 28}, 10};
const DataShape kTinyImageNet{{3, 64, 64}, 200};

}  // namespace

const std::vector<ModelPreset>& model_presets() {
  //                          patch  d_model  depth  heads  mlp_dim
  static const std::vector<ModelPreset> presets = {
      vit_preset("vit_tiny", "ViT-Ti/16 (DeiT-Tiny sizes), 224x224 images", kImageNet, {16, 192, 12, 3, 768}),
      vit_preset("vit_small", "ViT-S/16 (DeiT-Small sizes), 224x224 images", kImageNet, {16, 384, 12, 6, 1536}),
      vit_preset("vit_base", "ViT-B/16 (Dosovitskiy et al.), 224x224 images", kImageNet, {16, 768, 12, 12, 3072}),
      vit_preset("vit_mnist", "small ViT for 28x28 grayscale (MNIST, Fashion-MNIST) on a CPU", kMnist,
                 {7, 128, 6, 4, 256}),
      vit_preset("vit_micro", "tiny ViT for tests and smoke runs", kMnist, {4, 32, 2, 2, 64}),
      //                          widths           depths     attention_after  dropout
      cnn_preset("cnn_sa_mnist", "ResNet-style CNN + SAGAN self-attention after stages 1, 2; 28x28 grayscale",
                 kMnist, {{32, 64, 128}, {1, 1, 1}, {1, 2}, 0.0}),
      cnn_preset("cnn_mnist", "cnn_sa_mnist without self-attention (the ablation)", kMnist,
                 {{32, 64, 128}, {1, 1, 1}, {}, 0.0}),
      cnn_preset("cnn_sa_small", "ResNet-style CNN + self-attention after stage 2; ~64x64 colour images",
                 kTinyImageNet, {{64, 128, 256}, {2, 2, 2}, {2}, 0.1}),
  };
  return presets;
}

const ModelPreset& find_model_preset(ConfigSection& model_section) {
  const auto name = model_section.require_string("name");
  std::string names;
  for (const auto& preset : model_presets()) {
    if (preset.name == name) return preset;
    names += (names.empty() ? "" : ", ") + preset.name;
  }
  model_section.fail("name", fmt::format("unknown model '{}'; the zoo has: {}", name, names));
}

std::shared_ptr<ZooModelImpl> build_model(ConfigSection model_section, const DataShape& data) {
  const auto& preset = find_model_preset(model_section);
  return preset.build(model_section, data, nullptr);
}

int64_t count_parameters(const torch::nn::Module& module) {
  int64_t count = 0;
  for (const auto& parameter : module.parameters()) count += parameter.numel();
  return count;
}

}  // namespace attnzoo
