#include "models/layers/self_attention_2d.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>

namespace attnzoo {

SelfAttention2dImpl::SelfAttention2dImpl(const SelfAttention2dOptions& options_) : options(options_) { reset(); }

int64_t SelfAttention2dImpl::qk_channels() const {
  return options.qk_channels() > 0 ? options.qk_channels() : std::max<int64_t>(1, options.channels() / 8);
}

void SelfAttention2dImpl::reset() {
  TORCH_CHECK(options.channels() > 0, "SelfAttention2d: channels must be positive, got ", options.channels());
  TORCH_CHECK(options.qk_channels() >= 0, "SelfAttention2d: qk_channels must be >= 0 (0 = C/8), got ",
              options.qk_channels());
  const int64_t c = options.channels(), c_qk = qk_channels();
  query = register_module("query", torch::nn::Conv2d(torch::nn::Conv2dOptions(c, c_qk, 1)));
  key = register_module("key", torch::nn::Conv2d(torch::nn::Conv2dOptions(c, c_qk, 1)));
  value = register_module("value", torch::nn::Conv2d(torch::nn::Conv2dOptions(c, c, 1)));
  output = register_module("output", torch::nn::Conv2d(torch::nn::Conv2dOptions(c, c, 1)));
  gamma = register_parameter("gamma", torch::zeros(std::vector<int64_t>{}));  // a scalar, shape []
}

torch::Tensor SelfAttention2dImpl::forward(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 4 && x.size(1) == options.channels(), "SelfAttention2d: expected [B, ",
              options.channels(), ", H, W], got ", x.sizes());
  // flatten(2) keeps B and C symbolic: a trace at batch 1 runs any batch.
  auto q = query(x).flatten(2);  // [B, C', N]
  auto k = key(x).flatten(2);    // [B, C', N]
  auto v = value(x).flatten(2);  // [B, C, N]
  if (options.scaled()) q = q * (1.0 / std::sqrt(static_cast<double>(qk_channels())));

  // No mask here, so the plain softmax; attention.h's scaled_dot_product_attention always scales.
  auto scores = torch::matmul(q.transpose(1, 2), k);  // [B, N, N]  E[i, j] = q_i . k_j
  auto weights = torch::softmax(scores, -1);          // [B, N, N]  rows (queries) sum to 1
  if (keep_attention_weights_) last_attention_weights_ = weights.detach();

  auto mixed = torch::matmul(v, weights.transpose(1, 2));  // [B, C, N]  o_i = sum_j A[i, j] v_j
  auto out = output(mixed.view_as(x));                      // [B, C, H, W]; view_as reads sizes only
  // Autocast may make `out` bf16: add it in x's dtype so the residual stream keeps its precision.
  return x + (gamma * out).to(x.scalar_type());
}

}  // namespace attnzoo
