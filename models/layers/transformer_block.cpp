#include "models/layers/transformer_block.h"

#include <torch/torch.h>

namespace attnzoo {

torch::Tensor layer_norm(torch::nn::LayerNorm& norm, const torch::Tensor& x) {
  const auto& gamma = norm->weight;
  if (gamma.defined() && x.scalar_type() != gamma.scalar_type()) return norm(x.to(gamma.scalar_type()));
  return norm(x);
}

TransformerEncoderBlockImpl::TransformerEncoderBlockImpl(const TransformerEncoderBlockOptions& options_)
    : options(options_) {
  reset();
}

void TransformerEncoderBlockImpl::reset() {
  const auto d = options.d_model();
  auto norm_options = torch::nn::LayerNormOptions({d}).eps(options.layer_norm_eps());
  norm1 = register_module("norm1", torch::nn::LayerNorm(norm_options));
  self_attention = register_module(
      "self_attention",
      MultiHeadAttention(MultiHeadAttentionOptions(d, options.num_heads()).dropout(options.attention_dropout())));
  dropout = register_module("dropout", torch::nn::Dropout(options.dropout()));
  norm2 = register_module("norm2", torch::nn::LayerNorm(norm_options));
  mlp = register_module(
      "mlp", Mlp(MlpOptions(d, options.mlp_dim()).activation(options.activation()).dropout(options.dropout())));
}

torch::Tensor TransformerEncoderBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& mask) {
  if (options.norm_first()) {
    auto normed = layer_norm(norm1, x);
    auto y = x + dropout(self_attention->forward(normed, normed, normed, mask).first);  // z' = MSA(LN(z)) + z
    return y + mlp(layer_norm(norm2, y));                                             // z = MLP(LN(z')) + z'
  }
  auto y = layer_norm(norm1, x + dropout(self_attention->forward(x, x, x, mask).first));  // LN(x + Attn(x))
  return layer_norm(norm2, y + mlp(y));                                                   // LN(y + MLP(y))
}

}  // namespace attnzoo
