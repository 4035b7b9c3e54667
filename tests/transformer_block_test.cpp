#include "models/layers/transformer_block.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "models/layers/attention.h"
#include "models/layers/positional_encoding.h"

namespace attnzoo {
namespace {

// Reference 1.14, [000]: mu_i = sum_j h_ij / D; sigma_i = (sum_j (h_ij - mu_i)^2 / D)^{1/2};
// z_i = (h_i - mu_i) / sigma_i; y_i = gamma * z_i + beta. (No epsilon in the seeds; torch adds 1e-5.)
TEST(LayerNorm, MatchesReferenceFormula) {
  torch::manual_seed(0);
  const int64_t d = 12;
  torch::nn::LayerNorm norm(torch::nn::LayerNormOptions({d}));
  {
    torch::NoGradGuard no_grad;
    norm->weight.normal_();
    norm->bias.normal_();
  }
  auto h = torch::randn({4, 5, d}) * 3 + 1;
  auto mu = h.sum(-1, true) / d;
  auto sigma = ((h - mu).pow(2).sum(-1, true) / d).sqrt();
  auto z = (h - mu) / sigma;
  EXPECT_TRUE(torch::allclose(norm(h), norm->weight * z + norm->bias, 1e-4, 1e-4));
  // Each vector comes out with mean 0 and (1/D) standard deviation 1.
  EXPECT_TRUE(torch::allclose(z.mean(-1), torch::zeros({4, 5}), 0, 1e-5));
  EXPECT_TRUE(torch::allclose(z.std(-1, /*unbiased=*/false), torch::ones({4, 5}), 1e-5, 1e-5));
}

TransformerEncoderBlock make_block(bool norm_first) {
  TransformerEncoderBlock block(TransformerEncoderBlockOptions(16, 4, 32).norm_first(norm_first));
  torch::NoGradGuard no_grad;
  for (auto& p : block->parameters()) p.normal_(0, 0.3);  // LayerNorm gammas/betas too, so they matter
  block->eval();
  return block;
}

TEST(TransformerEncoderBlock, PostNormComputesLayerNormOfResiduals) {
  torch::manual_seed(1);
  auto block = make_block(false);
  auto x = torch::randn({2, 5, 16});
  auto y = block->norm1(x + block->self_attention->self_attention(x));  // x = norm1(attn(x) + x)
  auto expected = block->norm2(block->mlp(y) + y);                       // x = norm2(mlp(x) + x)
  EXPECT_TRUE(torch::allclose(block(x), expected, 1e-5, 1e-5));
}

TEST(TransformerEncoderBlock, PreNormComputesResidualsOfLayerNorm) {
  torch::manual_seed(2);
  auto block = make_block(true);
  auto x = torch::randn({2, 5, 16});
  auto z1 = block->self_attention->self_attention(block->norm1(x)) + x;  // z' = MSA(LN(z)) + z
  auto expected = block->mlp(block->norm2(z1)) + z1;                     // z = MLP(LN(z')) + z'
  EXPECT_TRUE(torch::allclose(block(x), expected, 1e-5, 1e-5));
  // The two orders are different functions of the same weights.
  auto post = make_block(false);
  torch::NoGradGuard no_grad;
  for (auto& item : post->named_parameters()) item.value().copy_(block->named_parameters()[item.key()]);
  EXPECT_FALSE(torch::allclose(post(x), block(x), 1e-3, 1e-3));
}

TEST(TransformerEncoderBlock, MlpActsOnEachVectorAlone) {
  torch::manual_seed(3);
  auto block = make_block(false);
  auto x = torch::randn({1, 4, 16});
  auto whole = block->mlp(x);
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_TRUE(torch::allclose(block->mlp(x.narrow(1, i, 1)), whole.narrow(1, i, 1), 1e-5, 1e-6));
}

TEST(TransformerEncoderBlock, IsPermutationEquivariantWithoutPositionEncoding) {
  torch::manual_seed(4);
  for (bool norm_first : {false, true}) {
    auto block = make_block(norm_first);
    auto x = torch::randn({2, 7, 16});
    auto perm = torch::randperm(7, torch::kLong);
    EXPECT_TRUE(torch::allclose(block(x.index_select(1, perm)), block(x).index_select(1, perm), 1e-5, 1e-5))
        << "norm_first=" << norm_first;
  }
}

TEST(TransformerEncoderBlock, IsNotPermutationEquivariantWithPositionEncoding) {
  torch::manual_seed(5);
  auto block = make_block(true);
  for (const std::string kind : {"learned", "sinusoidal"}) {
    PositionalEncoding pe(PositionalEncodingOptions(16, 32).kind(kind));
    auto x = torch::randn({2, 7, 16});
    auto perm = torch::tensor({1, 0, 2, 3, 4, 5, 6}, torch::kLong);  // the reference's swap of the first two
    auto permuted_first = block(pe(x.index_select(1, perm)));
    auto permuted_after = block(pe(x)).index_select(1, perm);
    EXPECT_FALSE(torch::allclose(permuted_first, permuted_after, 1e-3, 1e-3)) << kind;
  }
}

TEST(TransformerEncoderBlock, CausalMaskHidesLaterVectors) {
  torch::manual_seed(6);
  auto block = make_block(false);
  auto x = torch::randn({1, 6, 16});
  auto y = block(x, causal_mask(6));
  auto x2 = x.clone();
  x2.narrow(1, 4, 2).normal_();  // change the last two vectors
  auto y2 = block(x2, causal_mask(6));
  EXPECT_TRUE(torch::allclose(y.narrow(1, 0, 4), y2.narrow(1, 0, 4), 1e-5, 1e-5));
  EXPECT_FALSE(torch::allclose(y.narrow(1, 4, 2), y2.narrow(1, 4, 2)));
}

TEST(TransformerEncoderBlock, ReportsAttentionWeightsOfLastForward) {
  torch::manual_seed(7);
  auto block = make_block(true);
  block->keep_attention_weights(true);
  block(torch::randn({3, 5, 16}));
  auto w = block->last_attention_weights();
  ASSERT_TRUE(w.defined());
  EXPECT_EQ(w.sizes(), (std::vector<int64_t>{3, 4, 5, 5}));
  EXPECT_TRUE(torch::allclose(w.sum(-1), torch::ones({3, 4, 5}), 1e-5, 1e-6));
}

}  // namespace
}  // namespace attnzoo
