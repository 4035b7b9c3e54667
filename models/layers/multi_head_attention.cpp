#include "models/layers/multi_head_attention.h"

#include <torch/torch.h>

#include "models/layers/attention.h"

namespace attnzoo {

MultiHeadAttentionImpl::MultiHeadAttentionImpl(const MultiHeadAttentionOptions& options_) : options(options_) {
  reset();
}

void MultiHeadAttentionImpl::reset() {
  const auto d = options.d_model();
  const auto h = options.num_heads();
  TORCH_CHECK(d > 0 && h > 0, "MultiHeadAttention: d_model and num_heads must be positive, got d_model=", d,
              " num_heads=", h);
  TORCH_CHECK(d % h == 0, "MultiHeadAttention: num_heads=", h, " does not divide d_model=", d,
              " (each head gets d_model/num_heads dimensions)");
  in_proj_weight = register_parameter("in_proj_weight", torch::empty({3 * d, d}));
  if (options.bias()) in_proj_bias = register_parameter("in_proj_bias", torch::empty({3 * d}));
  out_proj = register_module("out_proj", torch::nn::Linear(torch::nn::LinearOptions(d, d).bias(options.bias())));
  reset_parameters();
}

void MultiHeadAttentionImpl::reset_parameters() {
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(in_proj_weight);
  if (in_proj_bias.defined()) in_proj_bias.zero_();
  if (out_proj->bias.defined()) out_proj->bias.zero_();
}

std::pair<torch::Tensor, torch::Tensor> MultiHeadAttentionImpl::forward(const torch::Tensor& query,
                                                                        const torch::Tensor& key,
                                                                        const torch::Tensor& value,
                                                                        const torch::Tensor& mask,
                                                                        bool need_weights) {
  const auto d = options.d_model();
  const auto h = options.num_heads();
  TORCH_CHECK(query.dim() == 3 && key.dim() == 3 && value.dim() == 3 && query.size(-1) == d &&
                  key.size(-1) == d && value.size(-1) == d,
              "MultiHeadAttention: expected [B, N, ", d, "] query/key/value, got ", query.sizes(), ", ",
              key.sizes(), ", ", value.sizes());
  // Split the last dimension into heads without naming B or N, so traces keep a dynamic batch and
  // length: [B, N, k*D] -> [k, B, H, N, D/H].
  auto split = [h, d](const torch::Tensor& x, int64_t k) {
    return x.unflatten(-1, {k, h, d / h}).permute({2, 0, 3, 1, 4});
  };
  torch::Tensor q, k, v;  // each [B, H, N, D/H]
  if (query.is_same(key) && key.is_same(value)) {
    // Self-attention: Q, K, V from one matmul with the stacked [W_Q; W_K; W_V].
    auto qkv = split(torch::nn::functional::linear(query, in_proj_weight, in_proj_bias), 3);
    q = qkv[0], k = qkv[1], v = qkv[2];
  } else {
    auto w = in_proj_weight.chunk(3, 0);
    std::vector<torch::Tensor> b = in_proj_bias.defined() ? in_proj_bias.chunk(3, 0)
                                                          : std::vector<torch::Tensor>(3);
    q = split(torch::nn::functional::linear(query, w[0], b[0]), 1)[0];
    if (key.is_same(value)) {
      // Cross-attention over one memory (decoder, captioner): K and V in one matmul.
      auto kv = split(torch::nn::functional::linear(key, in_proj_weight.narrow(0, d, 2 * d),
                                                    in_proj_bias.defined() ? in_proj_bias.narrow(0, d, 2 * d)
                                                                           : torch::Tensor()),
                      2);
      k = kv[0], v = kv[1];
    } else {
      k = split(torch::nn::functional::linear(key, w[1], b[1]), 1)[0];
      v = split(torch::nn::functional::linear(value, w[2], b[2]), 1)[0];
    }
  }
  auto attention = scaled_dot_product_attention(q, k, v, mask, options.dropout(), is_training());
  // Concatenate heads: [B, H, N_Q, D/H] -> [B, N_Q, H, D/H] -> [B, N_Q, D].
  auto output = out_proj(attention.output.transpose(1, 2).flatten(2));
  if (keep_weights_) last_weights_ = attention.weights.detach();
  return {output, need_weights ? attention.weights : torch::Tensor()};
}

torch::Tensor MultiHeadAttentionImpl::self_attention(const torch::Tensor& x, const torch::Tensor& mask) {
  return forward(x, x, x, mask).first;
}

}  // namespace attnzoo
