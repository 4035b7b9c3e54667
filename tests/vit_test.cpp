#include "models/vit.h"

#include <gtest/gtest.h>
#include <ATen/autocast_mode.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/torch.h>

#include <cstdio>
#include <sstream>
#include <string>

#include "models/zoo.h"

namespace attnzoo {
namespace {

ViTOptions small_options() {
  return ViTOptions(16, 4, 5).in_channels(1).d_model(32).depth(2).num_heads(4).mlp_dim(64);
}

std::string run(const std::string& command) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return output;
  char buffer[256];
  while (fgets(buffer, sizeof buffer, pipe)) output += buffer;
  return pclose(pipe) == 0 ? output : std::string();
}

TEST(ViT, OutputShapeForBatchOneAndSeven) {
  ViT vit(small_options());
  vit->eval();
  EXPECT_EQ(vit->num_patches(), 16);
  EXPECT_EQ(vit->num_tokens(), 17);
  for (int64_t batch : {1, 7}) {
    auto logits = vit(torch::randn({batch, 1, 16, 16}));
    EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{batch, 5}));
  }
  EXPECT_THROW(vit(torch::randn({2, 3, 16, 16})), c10::Error);  // wrong channels: a clear error, not a crash
}

TEST(ViT, BatchSizeIsNotBakedIntoATrace) {
  torch::manual_seed(0);
  ViT vit(small_options());
  vit->eval();
  for (auto& p : vit->parameters()) p.set_requires_grad(false);  // traced as constants here
  auto one = torch::randn({1, 1, 16, 16});
  auto traced = torch::jit::tracer::trace(
      {one}, [&](torch::jit::Stack inputs) -> torch::jit::Stack { return {vit(inputs[0].toTensor())}; },
      [](const torch::autograd::Variable&) { return std::string(); }, /*strict=*/true, /*force_outplace=*/false);
  torch::jit::GraphFunction forward("forward", traced.first->graph, nullptr);
  auto seven = torch::randn({7, 1, 16, 16});
  auto out = forward({seven}).toTensor();
  ASSERT_EQ(out.sizes(), (std::vector<int64_t>{7, 5}));
  EXPECT_TRUE(torch::allclose(out, vit(seven), 1e-5, 1e-5));
}

TEST(ViT, LossFallsOnATinyBatch) {
  torch::manual_seed(1);
  ViT vit(small_options());
  vit->train();
  Batch batch;
  batch.input = torch::randn({8, 1, 16, 16});
  batch.target = torch::tensor({0, 1, 2, 3, 4, 0, 1, 2}, torch::kLong);
  torch::optim::Adam adam(vit->parameters(), torch::optim::AdamOptions(3e-3));
  double first = 0, last = 0;
  for (int step = 0; step < 20; ++step) {
    auto out = vit->step(batch, {});
    if (step == 0) first = out.loss.item<double>();
    last = out.loss.item<double>();
    adam.zero_grad();
    out.loss.backward();
    adam.step();
  }
  EXPECT_NEAR(first, std::log(5.0), 1e-4);  // zero head: uniform logits at the start
  RecordProperty("first_loss", std::to_string(first));
  RecordProperty("last_loss", std::to_string(last));
  EXPECT_LT(last, 0.5 * first) << "first " << first << " last " << last;
}

TEST(ViT, ParameterCountFollowsTheArchitecture) {
  // conv + class + positions + depth x (2 LN + MHA + MLP) + LN + head, written out by hand.
  const int64_t c = 1, p = 4, d = 32, n = 16, m = 64, k = 5, depth = 2;
  const int64_t block = 2 * d + (3 * d * d + 3 * d + d * d + d) + 2 * d + (d * m + m + m * d + d);
  const int64_t expected = (c * p * p * d + d) + d + (n + 1) * d + depth * block + 2 * d + (d * k + k);
  EXPECT_EQ(count_parameters(*ViT(small_options())), expected);
  // Mean pooling has no class token (one row fewer of positions too); no positions, no table.
  EXPECT_EQ(count_parameters(*ViT(small_options().pooling("mean"))), expected - 2 * d);
  EXPECT_EQ(count_parameters(*ViT(small_options().position("none"))), expected - (n + 1) * d);
  EXPECT_EQ(count_parameters(*ViT(small_options().position("sinusoidal"))), expected - (n + 1) * d);
}

// torchvision's VisionTransformer with the same hyperparameters (it always has 3 input channels).
TEST(ViT, ParameterCountEqualsTorchvision) {
  if (std::system("/usr/bin/python3 -c 'import torchvision' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3 torchvision not installed";
  struct Case {
    int64_t image, patch, depth, heads, d, mlp, classes;
  };
  const Case cases[] = {{32, 4, 2, 4, 64, 128, 10}, {224, 16, 12, 3, 192, 768, 1000}, {224, 16, 12, 6, 384, 1536, 1000}};
  std::ostringstream script;
  script << "from torchvision.models.vision_transformer import VisionTransformer as V\n"
         << "for a in [";
  for (const auto& c : cases)
    script << "(" << c.image << "," << c.patch << "," << c.depth << "," << c.heads << "," << c.d << "," << c.mlp << ","
           << c.classes << "),";
  script << "]:\n"
         << "  m = V(image_size=a[0], patch_size=a[1], num_layers=a[2], num_heads=a[3], hidden_dim=a[4],"
         << " mlp_dim=a[5], num_classes=a[6])\n"
         << "  print(sum(p.numel() for p in m.parameters()))\n";
  auto output = run("/usr/bin/python3 -c \"" + script.str() + "\"");
  ASSERT_FALSE(output.empty()) << "python failed";
  std::istringstream counts(output);
  for (const auto& c : cases) {
    int64_t theirs = -1;
    counts >> theirs;
    ViT ours(ViTOptions(c.image, c.patch, c.classes).in_channels(3).d_model(c.d).depth(c.depth).num_heads(c.heads).mlp_dim(c.mlp));
    EXPECT_EQ(count_parameters(*ours), theirs) << "image " << c.image << " d " << c.d;
  }
}

TEST(ViT, ReportsAttentionWeightsOfEveryBlock) {
  ViT vit(small_options());
  vit->eval();
  vit->keep_attention_weights(true);
  vit(torch::randn({3, 1, 16, 16}));
  auto weights = vit->last_attention_weights();
  ASSERT_EQ(weights.size(), 2u);
  for (const auto& w : weights) EXPECT_EQ(w.sizes(), (std::vector<int64_t>{3, 4, 17, 17}));
}

TEST(ViT, PositionTableResizesForAnotherImageSize) {
  torch::manual_seed(2);
  ViT small(small_options());                      // 16x16 images: 4x4 grid + class
  ViT large(small_options().image_size(32));       // 32x32 images: 8x8 grid + class
  auto old_table = small->position->table.detach();
  auto resized = large->resize_position_table(old_table);
  ASSERT_EQ(resized.sizes(), large->position->table.sizes());
  EXPECT_TRUE(torch::equal(resized[0], old_table[0]));  // class token row kept
  EXPECT_TRUE(torch::equal(small->resize_position_table(old_table), old_table));
  // A constant grid stays constant under interpolation.
  auto constant = torch::ones({17, 32});
  EXPECT_TRUE(torch::allclose(large->resize_position_table(constant), torch::ones({65, 32}), 1e-5, 1e-5));
  {
    torch::NoGradGuard no_grad;
    large->position->table.copy_(resized);
  }
  EXPECT_EQ(large(torch::randn({2, 1, 32, 32})).sizes(), (std::vector<int64_t>{2, 5}));
}

// bf16 autocast on the CPU, as the trainer runs it; the guard restores the state even on a throw.
struct CpuAutocast {
  CpuAutocast() {
    at::autocast::set_autocast_cpu_dtype(torch::kBFloat16);
    at::autocast::set_cpu_enabled(true);
  }
  ~CpuAutocast() {
    at::autocast::set_cpu_enabled(false);
    at::autocast::clear_cache();
  }
};

TEST(ViT, RunsUnderBFloat16Autocast) {
  torch::manual_seed(3);
  ViT vit(small_options());
  vit->eval();
  {
    torch::NoGradGuard no_grad;
    vit->head->weight.normal_(0, 0.1);  // a zero head would hide everything before it
  }
  auto images = torch::randn({2, 1, 16, 16});
  auto reference = vit(images);
  torch::Tensor logits;
  {
    CpuAutocast autocast;
    logits = vit(images);
  }
  EXPECT_TRUE(torch::allclose(logits.to(torch::kFloat), reference, 0.1, 0.1));
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{2, 5}));
  EXPECT_FALSE(logits.isnan().any().item<bool>());
}

}  // namespace
}  // namespace attnzoo
