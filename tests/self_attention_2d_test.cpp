#include "models/layers/self_attention_2d.h"

#include <gtest/gtest.h>
#include <ATen/autocast_mode.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace attnzoo {
namespace {

TEST(SelfAttention2d, GammaZeroMakesTheBlockTheIdentityAtInit) {
  torch::manual_seed(0);
  SelfAttention2d block(16);
  EXPECT_EQ(block->gamma.dim(), 0);
  EXPECT_EQ(block->gamma.item<float>(), 0.0f);
  EXPECT_EQ(block->qk_channels(), 2);  // C/8
  auto x = torch::randn({2, 16, 5, 4});
  EXPECT_TRUE(torch::equal(block(x), x));
}

TEST(SelfAttention2d, QkChannelsDefaultToAnEighthButAtLeastOne) {
  EXPECT_EQ(SelfAttention2d(64)->qk_channels(), 8);
  EXPECT_EQ(SelfAttention2d(4)->qk_channels(), 1);
  EXPECT_EQ(SelfAttention2d(SelfAttention2dOptions(16).qk_channels(5))->qk_channels(), 5);
  EXPECT_EQ(SelfAttention2d(16)->query->weight.sizes(), (std::vector<int64_t>{2, 16, 1, 1}));
  EXPECT_EQ(SelfAttention2d(16)->value->weight.sizes(), (std::vector<int64_t>{16, 16, 1, 1}));
}

TEST(SelfAttention2d, AttentionRowsAreQueryPositionsAndSumToOne) {
  torch::manual_seed(1);
  SelfAttention2d block(8);
  block->keep_attention_weights(true);
  block(torch::randn({3, 8, 4, 5}));
  auto weights = block->last_attention_weights();
  ASSERT_EQ(weights.sizes(), (std::vector<int64_t>{3, 20, 20}));
  EXPECT_TRUE(torch::allclose(weights.sum(-1), torch::ones({3, 20}), 1e-5, 1e-6));
  EXPECT_GT(weights.min().item<float>(), 0.0f);
  EXPECT_LT(weights.max().item<float>(), 1.0f);
  block->keep_attention_weights(false);
  EXPECT_FALSE(block->last_attention_weights().defined());
}

// y = x + gamma * (W_o o + b_o), o_i = sum_j softmax_j(q_i . k_j [/ sqrt(C')]) v_j, written with loops.
torch::Tensor by_hand(SelfAttention2dImpl& block, const torch::Tensor& x, double scale) {
  const int64_t C = x.size(1), H = x.size(2), W = x.size(3), N = H * W, Cq = block.qk_channels();
  auto conv = [&](const torch::nn::Conv2d& c, int64_t out_channels) {  // 1x1 conv: [out, N]
    auto w = c->weight.view({out_channels, C});
    auto result = torch::zeros({out_channels, N}, torch::kDouble);
    auto xd = x[0].reshape({C, N}).to(torch::kDouble);
    for (int64_t o = 0; o < out_channels; ++o)
      for (int64_t n = 0; n < N; ++n) {
        double sum = c->bias[o].item<double>();
        for (int64_t i = 0; i < C; ++i) sum += w[o][i].item<double>() * xd[i][n].item<double>();
        result[o][n] = sum;
      }
    return result;
  };
  auto q = conv(block.query, Cq), k = conv(block.key, Cq), v = conv(block.value, C);
  auto o = torch::zeros({C, N}, torch::kDouble);
  for (int64_t i = 0; i < N; ++i) {
    std::vector<double> e(N);
    double max = -1e300, total = 0;
    for (int64_t j = 0; j < N; ++j) {
      double dot = 0;
      for (int64_t c = 0; c < Cq; ++c) dot += q[c][i].item<double>() * k[c][j].item<double>();
      e[j] = dot * scale;
      max = std::max(max, e[j]);
    }
    for (auto& value : e) total += (value = std::exp(value - max));
    for (int64_t c = 0; c < C; ++c) {
      double sum = 0;
      for (int64_t j = 0; j < N; ++j) sum += e[j] / total * v[c][j].item<double>();
      o[c][i] = sum;
    }
  }
  // Output 1x1 conv on o, then the residual.
  auto wo = block.output->weight.view({C, C}).to(torch::kDouble);
  auto out = torch::matmul(wo, o) + block.output->bias.to(torch::kDouble).unsqueeze(1);
  return (x[0].reshape({C, N}).to(torch::kDouble) + out).view({1, C, H, W}).to(torch::kFloat);
}

TEST(SelfAttention2d, GammaOneMatchesAHandComputation) {
  torch::NoGradGuard no_grad;
  for (bool scaled : {false, true}) {
    torch::manual_seed(2);
    SelfAttention2d block(SelfAttention2dOptions(4).qk_channels(2).scaled(scaled));
    block->gamma.fill_(1.0);
    auto x = torch::randn({1, 4, 2, 3}) * 2;
    auto expected = by_hand(*block, x, scaled ? 1.0 / std::sqrt(2.0) : 1.0);
    auto y = block(x);
    EXPECT_TRUE(torch::allclose(y, expected, 1e-5, 1e-5)) << "scaled " << scaled << "\n" << y - expected;
  }
}

TEST(SelfAttention2d, BatchOneAndThreeGiveTheSamePerExampleResults) {
  torch::manual_seed(3);
  SelfAttention2d block(8);
  torch::NoGradGuard no_grad;
  block->gamma.fill_(0.7);
  auto x = torch::randn({3, 8, 3, 3});
  auto together = block(x);
  for (int64_t b = 0; b < 3; ++b)
    EXPECT_TRUE(torch::allclose(block(x.narrow(0, b, 1)), together.narrow(0, b, 1), 1e-5, 1e-6)) << b;
}

TEST(SelfAttention2d, BatchSizeIsNotBakedIntoATrace) {
  torch::manual_seed(4);
  SelfAttention2d block(8);
  for (auto& p : block->parameters()) p.set_requires_grad(false);
  block->gamma.fill_(0.5);
  auto one = torch::randn({1, 8, 3, 4});
  auto traced = torch::jit::tracer::trace(
      {one}, [&](torch::jit::Stack inputs) -> torch::jit::Stack { return {block(inputs[0].toTensor())}; },
      [](const torch::autograd::Variable&) { return std::string(); }, /*strict=*/true, /*force_outplace=*/false);
  torch::jit::GraphFunction forward("forward", traced.first->graph, nullptr);
  auto three = torch::randn({3, 8, 3, 4});
  auto out = forward({three}).toTensor();
  ASSERT_EQ(out.sizes(), three.sizes());
  EXPECT_TRUE(torch::allclose(out, block(three), 1e-5, 1e-5));
}

TEST(SelfAttention2d, ResidualKeepsTheInputDtypeUnderBFloat16Autocast) {
  torch::manual_seed(5);
  SelfAttention2d block(16);
  {
    torch::NoGradGuard no_grad;
    block->gamma.fill_(1.0);
  }
  auto x = torch::randn({2, 16, 4, 4});
  auto reference = block(x);
  torch::Tensor y;
  at::autocast::set_autocast_cpu_dtype(torch::kBFloat16);
  at::autocast::set_cpu_enabled(true);
  try {
    y = block(x);
  } catch (...) {
    at::autocast::set_cpu_enabled(false);
    throw;
  }
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
  EXPECT_EQ(y.scalar_type(), torch::kFloat);
  EXPECT_TRUE(torch::allclose(y, reference, 0.1, 0.1));
}

TEST(SelfAttention2d, GammaAndAllConvsGetGradients) {
  torch::manual_seed(6);
  SelfAttention2d block(8);
  auto y = block(torch::randn({2, 8, 3, 3}));
  (y * torch::randn_like(y)).sum().backward();
  EXPECT_NE(block->gamma.grad().item<float>(), 0.0f);  // gamma = 0 still receives a gradient
  block->zero_grad();
  {
    torch::NoGradGuard no_grad;
    block->gamma.fill_(0.5);
  }
  y = block(torch::randn({2, 8, 3, 3}));
  (y * torch::randn_like(y)).sum().backward();
  for (const auto& p : block->named_parameters())
    EXPECT_GT(p.value().grad().abs().sum().item<float>(), 0.0f) << p.key();
}

}  // namespace
}  // namespace attnzoo
