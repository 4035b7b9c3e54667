#include "models/layers/multi_head_attention.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "models/layers/attention.h"

namespace attnzoo {
namespace {

// torch::nn::MultiheadAttention with our weights copied in. It is sequence-first [N, B, D].
torch::nn::MultiheadAttention torch_copy_of(const MultiHeadAttention& ours) {
  torch::nn::MultiheadAttention theirs(ours->options.d_model(), ours->options.num_heads());
  torch::NoGradGuard no_grad;
  theirs->in_proj_weight.copy_(ours->in_proj_weight);
  theirs->in_proj_bias.copy_(ours->in_proj_bias);
  theirs->out_proj->weight.copy_(ours->out_proj->weight);
  theirs->out_proj->bias.copy_(ours->out_proj->bias);
  theirs->eval();
  return theirs;
}

MultiHeadAttention randomised(int64_t d, int64_t h) {
  MultiHeadAttention mha(d, h);
  torch::NoGradGuard no_grad;
  mha->in_proj_bias.normal_(0, 0.1);  // non-zero biases, so the parity test covers them
  mha->out_proj->bias.normal_(0, 0.1);
  mha->eval();
  return mha;
}

TEST(MultiHeadAttention, ParameterNamesAndShapesMatchTorch) {
  MultiHeadAttention mha(16, 4);
  auto params = mha->named_parameters();
  ASSERT_EQ(params.size(), 4u);
  EXPECT_EQ(params["in_proj_weight"].sizes(), (std::vector<int64_t>{48, 16}));
  EXPECT_EQ(params["in_proj_bias"].sizes(), (std::vector<int64_t>{48}));
  EXPECT_EQ(params["out_proj.weight"].sizes(), (std::vector<int64_t>{16, 16}));
  EXPECT_EQ(params["out_proj.bias"].sizes(), (std::vector<int64_t>{16}));
  MultiHeadAttention no_bias(MultiHeadAttentionOptions(16, 4).bias(false));
  EXPECT_EQ(no_bias->parameters().size(), 2u);
}

TEST(MultiHeadAttention, SelfAttentionEqualsTorchMultiheadAttention) {
  torch::manual_seed(0);
  auto ours = randomised(32, 4);
  auto theirs = torch_copy_of(ours);
  auto x = torch::randn({3, 7, 32});  // [B, N, D]
  auto [y, w] = ours->forward(x, x, x, {}, /*need_weights=*/true);
  auto xs = x.transpose(0, 1);
  auto [y_ref, w_ref] = theirs->forward(xs, xs, xs);  // averaged weights [B, N, N]
  EXPECT_TRUE(torch::allclose(y, y_ref.transpose(0, 1), 1e-5, 1e-5));
  EXPECT_EQ(w.sizes(), (std::vector<int64_t>{3, 4, 7, 7}));
  EXPECT_TRUE(torch::allclose(w.mean(1), w_ref, 1e-5, 1e-5));
}

TEST(MultiHeadAttention, CrossAttentionEqualsTorchMultiheadAttention) {
  torch::manual_seed(1);
  auto ours = randomised(24, 3);
  auto theirs = torch_copy_of(ours);
  auto query = torch::randn({2, 5, 24}), memory = torch::randn({2, 9, 24}), value = torch::randn({2, 9, 24});
  // key == value (one memory), and key != value: both in-projection paths.
  for (const auto& v : {memory, value}) {
    auto [y, w] = ours->forward(query, memory, v, {}, true);
    auto [y_ref, w_ref] = theirs->forward(query.transpose(0, 1), memory.transpose(0, 1), v.transpose(0, 1));
    EXPECT_TRUE(torch::allclose(y, y_ref.transpose(0, 1), 1e-5, 1e-5));
    EXPECT_TRUE(torch::allclose(w.mean(1), w_ref, 1e-5, 1e-5));
  }
}

TEST(MultiHeadAttention, MasksEqualTorchMultiheadAttention) {
  torch::manual_seed(2);
  auto ours = randomised(16, 2);
  auto theirs = torch_copy_of(ours);
  const int64_t n = 6;
  auto x = torch::randn({2, n, 16});
  auto xs = x.transpose(0, 1);
  // LibTorch's C++ MultiheadAttention takes an additive float attn_mask (-inf = may not attend).
  auto additive = torch::zeros({n, n}).masked_fill(causal_mask(n).logical_not(), -INFINITY);
  auto [y, w] = ours->forward(x, x, x, causal_mask(n), true);
  auto [y_ref, w_ref] = theirs->forward(xs, xs, xs, {}, true, additive);
  EXPECT_TRUE(torch::allclose(y, y_ref.transpose(0, 1), 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(w.mean(1), w_ref, 1e-5, 1e-5));

  // Its bool key_padding_mask means the opposite of ours: true = padding, may not attend.
  auto lengths = torch::tensor({4, 6}, torch::kLong);
  auto [yp, wp] = ours->forward(x, x, x, padding_mask(lengths, n), true);
  auto [yp_ref, wp_ref] = theirs->forward(xs, xs, xs, padding_mask(lengths, n).view({2, n}).logical_not());
  EXPECT_TRUE(torch::allclose(yp, yp_ref.transpose(0, 1), 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(wp.mean(1), wp_ref, 1e-5, 1e-5));
}

TEST(MultiHeadAttention, CausalMaskMakesWeightsLowerTriangular) {
  torch::manual_seed(3);
  MultiHeadAttention mha(16, 4);
  auto x = torch::randn({2, 5, 16});
  auto w = mha->forward(x, x, x, causal_mask(5), true).second;
  EXPECT_TRUE(torch::equal(w.triu(1), torch::zeros_like(w)));
  EXPECT_TRUE(torch::allclose(w.sum(-1), torch::ones({2, 4, 5}), 1e-5, 1e-6));
}

// Reference 1.8: f(s(x)) = s(f(x)) for any permutation s of the input vectors.
TEST(MultiHeadAttention, SelfAttentionIsPermutationEquivariant) {
  torch::manual_seed(4);
  MultiHeadAttention mha(16, 4);
  auto x = torch::randn({2, 6, 16});
  auto perm = torch::randperm(6, torch::kLong);
  auto y = mha->self_attention(x);
  auto y_of_permuted = mha->self_attention(x.index_select(1, perm));
  EXPECT_TRUE(torch::allclose(y_of_permuted, y.index_select(1, perm), 1e-5, 1e-5));
}

TEST(MultiHeadAttention, NumHeadsMustDivideDModel) {
  try {
    MultiHeadAttention mha(30, 4);
    FAIL() << "expected an error";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("num_heads=4 does not divide d_model=30"), std::string::npos) << e.what();
  }
}

TEST(MultiHeadAttention, KeepsLastWeightsWhenAsked) {
  torch::manual_seed(5);
  MultiHeadAttention mha(8, 2);
  auto x = torch::randn({3, 4, 8});
  mha->self_attention(x);
  EXPECT_FALSE(mha->last_weights().defined());  // off by default: no memory held
  mha->keep_weights(true);
  auto w = mha->forward(x, x, x, {}, true).second;
  ASSERT_TRUE(mha->last_weights().defined());
  EXPECT_TRUE(torch::equal(mha->last_weights(), w));
  EXPECT_FALSE(mha->last_weights().requires_grad());
  mha->keep_weights(false);
  EXPECT_FALSE(mha->last_weights().defined());
}

TEST(MultiHeadAttention, CloneIsIndependent) {
  MultiHeadAttention mha(8, 2);
  auto copy = std::dynamic_pointer_cast<MultiHeadAttentionImpl>(mha->clone());
  ASSERT_TRUE(copy);
  EXPECT_TRUE(torch::equal(copy->in_proj_weight, mha->in_proj_weight));
  EXPECT_NE(copy->in_proj_weight.data_ptr(), mha->in_proj_weight.data_ptr());
}

}  // namespace
}  // namespace attnzoo
