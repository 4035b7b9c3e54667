#pragma once
// Self-attention over the positions of a feature map (reference 1.12; SAGAN, Zhang et al. 2018):
//
//   Q = W_q x   [B, C', N]   K = W_k x   [B, C', N]   V = W_v x   [B, C, N]    (1x1 convs, N = H*W, C' = C/8)
//   E = Q^T K                [B, N, N]   E[b, i, j] = q_i . k_j   (times 1/sqrt(C') only if `scaled`)
//   A = softmax(E, dim=-1)   [B, N, N]   row i = query position i; its weights over the key positions j
//                                        lie in (0, 1) and sum to 1 (the convention of attention.h)
//   O = V A^T                [B, C, N]   o_i = sum_j A[i, j] v_j, reshaped to [B, C, H, W]
//   y = x + gamma * W_o O                (W_o a 1x1 conv C -> C; gamma a learnable scalar, 0 at init)
//
// SAGAN implementations disagree about the softmax axis and the transpose (reference peers item 17);
// this one follows the paper's equations: its beta_{j,i} (how much output position j attends to
// position i, normalised over i) is A[j, i] here, so rows are queries and each row sums to 1.
// With gamma = 0 the block is exactly the identity at init.
#include <torch/nn/cloneable.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/pimpl.h>

namespace attnzoo {

struct SelfAttention2dOptions {
  /* implicit */ SelfAttention2dOptions(int64_t channels) : channels_(channels) {}
  TORCH_ARG(int64_t, channels);         // C
  TORCH_ARG(int64_t, qk_channels) = 0;  // C' of queries and keys; 0 = max(1, C/8) as in SAGAN
  TORCH_ARG(bool, scaled) = false;      // divide E by sqrt(C') (SAGAN does not)
};

class SelfAttention2dImpl : public torch::nn::Cloneable<SelfAttention2dImpl> {
 public:
  explicit SelfAttention2dImpl(const SelfAttention2dOptions& options);

  void reset() override;

  // x [B, C, H, W] -> y [B, C, H, W], same dtype as x (also under autocast).
  torch::Tensor forward(const torch::Tensor& x);

  int64_t qk_channels() const;  // C' actually used

  // When on, every forward keeps its weights A [B, H*W, H*W] (detached) for attention maps.
  void keep_attention_weights(bool on) {
    keep_attention_weights_ = on;
    if (!on) last_attention_weights_ = torch::Tensor();
  }
  const torch::Tensor& last_attention_weights() const { return last_attention_weights_; }

  SelfAttention2dOptions options;
  torch::nn::Conv2d query{nullptr};   // C -> C'
  torch::nn::Conv2d key{nullptr};     // C -> C'
  torch::nn::Conv2d value{nullptr};   // C -> C
  torch::nn::Conv2d output{nullptr};  // C -> C
  torch::Tensor gamma;                // [] scalar, 0 at init

 private:
  bool keep_attention_weights_ = false;
  torch::Tensor last_attention_weights_;
};

TORCH_MODULE(SelfAttention2d);

}  // namespace attnzoo
