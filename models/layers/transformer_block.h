#pragma once
// Transformer encoder block (reference 1.14): self-attention, the only interaction between vectors,
// then an MLP on each vector, each with a residual connection and LayerNorm.
//   post-LN (the seeds' block, Vaswani):  x = LN1(x + Attn(x));   x = LN2(x + MLP(x))
//   pre-LN  (ViT):                        x = x + Attn(LN1(x));   x = x + MLP(LN2(x))
#include <torch/nn/cloneable.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <string>

#include "models/layers/mlp.h"
#include "models/layers/multi_head_attention.h"

namespace attnzoo {

// LayerNorm computed in the dtype of its gamma (fp32). Under bf16 autocast LibTorch 1.13's CPU kernel
// rejects a bf16 input with fp32 gamma/beta (Python's too), and normalising in fp32 is the usual
// mixed-precision choice anyway. Without autocast it is exactly norm(x).
torch::Tensor layer_norm(torch::nn::LayerNorm& norm, const torch::Tensor& x);

struct TransformerEncoderBlockOptions {
  TransformerEncoderBlockOptions(int64_t d_model, int64_t num_heads, int64_t mlp_dim)
      : d_model_(d_model), num_heads_(num_heads), mlp_dim_(mlp_dim) {}
  TORCH_ARG(int64_t, d_model);
  TORCH_ARG(int64_t, num_heads);
  TORCH_ARG(int64_t, mlp_dim);
  TORCH_ARG(double, dropout) = 0.0;            // after attention and in the MLP
  TORCH_ARG(double, attention_dropout) = 0.0;  // on the attention weights
  TORCH_ARG(bool, norm_first) = false;         // false: post-LN (seeds); true: pre-LN (ViT)
  TORCH_ARG(std::string, activation) = "gelu";
  TORCH_ARG(double, layer_norm_eps) = 1e-5;
};

class TransformerEncoderBlockImpl : public torch::nn::Cloneable<TransformerEncoderBlockImpl> {
 public:
  explicit TransformerEncoderBlockImpl(const TransformerEncoderBlockOptions& options);
  void reset() override;

  // x [B, N, D], mask broadcastable to [B, H, N, N] (true = may attend) -> [B, N, D]
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask = {});

  // Attention weights [B, H, N, N] of each later forward, for attention maps.
  void keep_attention_weights(bool on) { self_attention->keep_weights(on); }
  const torch::Tensor& last_attention_weights() const { return self_attention->last_weights(); }

  TransformerEncoderBlockOptions options;
  torch::nn::LayerNorm norm1{nullptr}, norm2{nullptr};
  MultiHeadAttention self_attention{nullptr};
  torch::nn::Dropout dropout{nullptr};
  Mlp mlp{nullptr};

 protected:
  FORWARD_HAS_DEFAULT_ARGS({1, torch::nn::AnyValue(torch::Tensor())})
};

TORCH_MODULE(TransformerEncoderBlock);

}  // namespace attnzoo
