#include "models/layers/positional_encoding.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

namespace attnzoo {
namespace {

TEST(PositionalEncoding, SinusoidalTableFollowsVaswani) {
  auto table = PositionalEncodingImpl::sinusoidal_table(50, 6);  // [50, 6]
  ASSERT_EQ(table.sizes(), (std::vector<int64_t>{50, 6}));
  for (int64_t pos : {0, 1, 7, 49}) {
    for (int64_t i = 0; i < 3; ++i) {
      const double angle = pos / std::pow(10000.0, 2.0 * i / 6.0);
      EXPECT_NEAR(table[pos][2 * i].item<double>(), std::sin(angle), 1e-5) << pos << "," << i;
      EXPECT_NEAR(table[pos][2 * i + 1].item<double>(), std::cos(angle), 1e-5) << pos << "," << i;
    }
  }
  EXPECT_EQ(PositionalEncodingImpl::sinusoidal_table(4, 5).size(1), 5);  // odd widths drop the last cos
}

TEST(PositionalEncoding, AddUsesTheFirstNRows) {
  torch::manual_seed(0);
  PositionalEncoding pe(PositionalEncodingOptions(8, 16).kind("sinusoidal"));
  auto x = torch::randn({3, 5, 8});
  auto y = pe(x);
  EXPECT_EQ(y.sizes(), x.sizes());
  EXPECT_EQ(pe->output_dim(), 8);
  EXPECT_TRUE(torch::allclose(y, x + PositionalEncodingImpl::sinusoidal_table(16, 8).narrow(0, 0, 5)));
  EXPECT_TRUE(pe->parameters().empty());  // a fixed function, not learned
  EXPECT_EQ(pe->buffers().size(), 1u);
}

TEST(PositionalEncoding, LearnedTableIsAParameter) {
  torch::manual_seed(1);
  PositionalEncoding pe(PositionalEncodingOptions(8, 1024));  // [002]: nn.Embedding(1024, d_x)
  ASSERT_EQ(pe->parameters().size(), 1u);
  EXPECT_EQ(pe->table.sizes(), (std::vector<int64_t>{1024, 8}));
  auto x = torch::randn({2, 10, 8});
  auto y = pe(x);
  EXPECT_TRUE(torch::allclose(y, x + pe->table.narrow(0, 0, 10)));
  y.sum().backward();
  // Only the rows that were used get a gradient (twice each: the batch has 2 sequences).
  EXPECT_TRUE(torch::allclose(pe->table.grad().narrow(0, 0, 10), torch::full({10, 8}, 2.0)));
  EXPECT_TRUE(torch::equal(pe->table.grad().narrow(0, 10, 1014), torch::zeros({1014, 8})));
}

TEST(PositionalEncoding, ConcatWidensTheInput) {
  torch::manual_seed(2);
  PositionalEncoding pe(PositionalEncodingOptions(8, 32).kind("sinusoidal").combine("concat").encoding_dim(4));
  EXPECT_EQ(pe->output_dim(), 12);
  auto x = torch::randn({3, 6, 8});
  auto y = pe(x);  // [3, 6, 12]
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{3, 6, 12}));
  EXPECT_TRUE(torch::equal(y.narrow(-1, 0, 8), x));
  auto expected = PositionalEncodingImpl::sinusoidal_table(32, 4).narrow(0, 0, 6);
  for (int64_t b = 0; b < 3; ++b) EXPECT_TRUE(torch::allclose(y[b].narrow(-1, 8, 4), expected));
}

TEST(PositionalEncoding, NoneIsIdentity) {
  PositionalEncoding pe(PositionalEncodingOptions(8, 32).kind("none"));
  auto x = torch::randn({2, 3, 8});
  EXPECT_TRUE(torch::equal(pe(x), x));
  EXPECT_EQ(pe->output_dim(), 8);
  EXPECT_TRUE(pe->parameters().empty());
}

TEST(PositionalEncoding, ScaleInputMultipliesBySqrtDModel) {
  PositionalEncoding pe(PositionalEncodingOptions(16, 8).kind("sinusoidal").scale_input(true));
  auto x = torch::randn({1, 8, 16});
  EXPECT_TRUE(torch::allclose(pe(x), x * 4.0 + PositionalEncodingImpl::sinusoidal_table(8, 16)));
}

TEST(PositionalEncoding, RejectsTooLongSequencesAndBadOptions) {
  PositionalEncoding pe(PositionalEncodingOptions(8, 4));
  EXPECT_THROW(pe(torch::randn({1, 5, 8})), c10::Error);
  EXPECT_THROW(PositionalEncoding(PositionalEncodingOptions(8, 4).kind("rotary")), c10::Error);
  EXPECT_THROW(PositionalEncoding(PositionalEncodingOptions(8, 4).encoding_dim(4)), c10::Error);  // add needs d_model
}

}  // namespace
}  // namespace attnzoo
