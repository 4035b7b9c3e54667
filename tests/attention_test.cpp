#include "models/layers/attention.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

namespace attnzoo {
namespace {

// Reference 2.5: exam query scores q.k_1..k_5 and their softmax.
TEST(ScaledDotProductAttention, ExamScoresSoftmaxMatchesReference) {
  // With D_Q = 1 the scale is 1 and E = q k^T is exactly the scores.
  auto q = torch::ones({1, 1});
  auto k = torch::tensor({-1.71f, 0.60f, -1.01f, -0.61f, 2.73f}).unsqueeze(1);  // [5, 1]
  auto v = torch::eye(5);
  auto out = scaled_dot_product_attention(q, k, v);
  auto weights = out.weights.squeeze(0);
  const float rounded[] = {0.01f, 0.10f, 0.02f, 0.03f, 0.84f};
  const float exact[] = {0.0099f, 0.0999f, 0.0200f, 0.0298f, 0.8405f};
  for (int i = 0; i < 5; ++i) {
    const float w = weights[i].item<float>();
    EXPECT_NEAR(std::round(w * 100.0f) / 100.0f, rounded[i], 1e-6) << "i=" << i;
    EXPECT_NEAR(w, exact[i], 1e-4) << "i=" << i;
  }
  // V = I, so Y = A.
  EXPECT_TRUE(torch::allclose(out.output.squeeze(0), weights));
}

TEST(ScaledDotProductAttention, MatchesSoftmaxOfScaledScoresTimesValues) {
  torch::manual_seed(0);
  auto q = torch::randn({2, 3, 4, 8}), k = torch::randn({2, 3, 6, 8}), v = torch::randn({2, 3, 6, 5});
  auto out = scaled_dot_product_attention(q, k, v);
  auto a = torch::softmax(torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(8.0), -1);  // E = QK^T / sqrt(D_Q)
  EXPECT_TRUE(torch::allclose(out.weights, a, 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(out.output, torch::matmul(a, v), 1e-5, 1e-5));
  EXPECT_EQ(out.output.sizes(), (std::vector<int64_t>{2, 3, 4, 5}));
}

TEST(ScaledDotProductAttention, RowsSumToOneAndLieInOpenUnitInterval) {
  torch::manual_seed(1);
  auto q = torch::randn({4, 7, 16}), k = torch::randn({4, 9, 16}), v = torch::randn({4, 9, 16});
  auto w = scaled_dot_product_attention(q, k, v).weights;  // [4, 7, 9]
  EXPECT_TRUE(torch::allclose(w.sum(-1), torch::ones({4, 7}), 1e-5, 1e-6));
  EXPECT_TRUE((w > 0).all().item<bool>());
  EXPECT_TRUE((w < 1).all().item<bool>());
}

TEST(ScaledDotProductAttention, CausalMaskMakesWeightsLowerTriangular) {
  torch::manual_seed(2);
  const int64_t n = 6;
  auto x = torch::randn({2, 2, n, 8});
  auto w = scaled_dot_product_attention(x, x, x, causal_mask(n)).weights;  // [2, 2, n, n]
  EXPECT_TRUE(torch::equal(w.triu(1), torch::zeros_like(w)));           // nothing above the diagonal
  EXPECT_TRUE((w.tril() .masked_select(causal_mask(n).expand_as(w)) > 0).all().item<bool>());
  EXPECT_TRUE(torch::allclose(w.sum(-1), torch::ones({2, 2, n}), 1e-5, 1e-6));
  EXPECT_FLOAT_EQ(w[0][0][0][0].item<float>(), 1.0f);  // the first query only sees itself
}

TEST(ScaledDotProductAttention, CausalMaskIsLowerTriangularTrue) {
  auto m = causal_mask(3);
  EXPECT_EQ(m.scalar_type(), torch::kBool);
  EXPECT_TRUE(torch::equal(m, torch::tensor({1, 0, 0, 1, 1, 0, 1, 1, 1}).to(torch::kBool).view({3, 3})));
}

TEST(ScaledDotProductAttention, PaddingPositionsGetZeroWeight) {
  torch::manual_seed(3);
  auto lengths = torch::tensor({3, 5}, torch::kLong);
  auto mask = padding_mask(lengths, 5);  // [2, 1, 1, 5]
  EXPECT_EQ(mask.sizes(), (std::vector<int64_t>{2, 1, 1, 5}));
  EXPECT_TRUE(torch::equal(mask.view({2, 5}),
                           torch::tensor({1, 1, 1, 0, 0, 1, 1, 1, 1, 1}).to(torch::kBool).view({2, 5})));
  auto q = torch::randn({2, 4, 5, 8}), k = torch::randn({2, 4, 5, 8}), v = torch::randn({2, 4, 5, 8});
  auto out = scaled_dot_product_attention(q, k, v, mask);
  EXPECT_TRUE(torch::equal(out.weights[0].narrow(-1, 3, 2), torch::zeros({4, 5, 2})));
  EXPECT_TRUE(torch::allclose(out.weights.sum(-1), torch::ones({2, 4, 5}), 1e-5, 1e-6));
  // The padded values cannot leak into the output: changing them changes nothing.
  auto v2 = v.clone();
  v2[0].narrow(1, 3, 2).fill_(1e6);
  EXPECT_TRUE(torch::allclose(scaled_dot_product_attention(q, k, v2, mask).output[0], out.output[0]));
}

TEST(ScaledDotProductAttention, FullyMaskedRowGivesZerosNotNaN) {
  torch::manual_seed(4);
  auto q = torch::randn({2, 1, 3, 4}, torch::requires_grad());
  auto k = torch::randn({2, 1, 3, 4}), v = torch::randn({2, 1, 3, 4});
  auto mask = padding_mask(torch::tensor({0, 2}, torch::kLong), 3);  // sequence 0 is empty
  auto out = scaled_dot_product_attention(q, k, v, mask);
  EXPECT_TRUE(torch::equal(out.weights[0], torch::zeros({1, 3, 3})));
  EXPECT_TRUE(torch::equal(out.output[0], torch::zeros({1, 3, 4})));
  EXPECT_FALSE(out.output.isnan().any().item<bool>());
  out.output.sum().backward();
  EXPECT_TRUE(torch::isfinite(q.grad()).all().item<bool>());
}

TEST(ScaledDotProductAttention, DropoutOnlyInTraining) {
  torch::manual_seed(5);
  auto q = torch::randn({2, 5, 8}), k = torch::randn({2, 5, 8}), v = torch::randn({2, 5, 8});
  auto eval = scaled_dot_product_attention(q, k, v, {}, 0.5, /*training=*/false);
  auto plain = scaled_dot_product_attention(q, k, v);
  EXPECT_TRUE(torch::equal(eval.output, plain.output));
  auto train = scaled_dot_product_attention(q, k, v, {}, 0.5, /*training=*/true);
  EXPECT_FALSE(torch::allclose(train.output, plain.output));
  EXPECT_TRUE(torch::equal(train.weights, plain.weights));  // reported weights are before dropout
}

TEST(ScaledDotProductAttention, BFloat16AutocastStaysCloseToFloat) {
  torch::manual_seed(6);
  auto q = torch::randn({2, 2, 10, 16}), k = torch::randn({2, 2, 10, 16}), v = torch::randn({2, 2, 10, 16});
  auto reference = scaled_dot_product_attention(q, k, v, causal_mask(10));
  auto low = scaled_dot_product_attention(q.to(torch::kBFloat16), k.to(torch::kBFloat16), v.to(torch::kBFloat16),
                                          causal_mask(10));
  EXPECT_FALSE(low.output.isnan().any().item<bool>());
  EXPECT_TRUE(torch::allclose(low.output.to(torch::kFloat), reference.output, 0.05, 0.05));
}

}  // namespace
}  // namespace attnzoo
