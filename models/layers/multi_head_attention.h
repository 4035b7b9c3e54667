#pragma once
// Multi-head attention (reference 1.11): H heads of width D/H in parallel, concatenated, then W_O.
// Parameter names and layout match torch.nn.MultiheadAttention (in_proj_weight [3D, D] = [W_Q; W_K; W_V],
// in_proj_bias, out_proj), so weights carry over both ways; but tensors are batch-first [B, N, D] and
// masks follow attnzoo's convention (true = may attend, see attention.h).
#include <torch/nn/cloneable.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <utility>

namespace attnzoo {

struct MultiHeadAttentionOptions {
  MultiHeadAttentionOptions(int64_t d_model, int64_t num_heads) : d_model_(d_model), num_heads_(num_heads) {}
  TORCH_ARG(int64_t, d_model);
  TORCH_ARG(int64_t, num_heads);
  TORCH_ARG(double, dropout) = 0.0;  // on the attention weights
  TORCH_ARG(bool, bias) = true;
};

class MultiHeadAttentionImpl : public torch::nn::Cloneable<MultiHeadAttentionImpl> {
 public:
  MultiHeadAttentionImpl(int64_t d_model, int64_t num_heads)
      : MultiHeadAttentionImpl(MultiHeadAttentionOptions(d_model, num_heads)) {}
  explicit MultiHeadAttentionImpl(const MultiHeadAttentionOptions& options);

  void reset() override;
  // As torch.nn.MultiheadAttention: xavier-uniform in-projection, zero biases.
  void reset_parameters();

  // query [B, N_Q, D], key/value [B, N_K, D], mask broadcastable to [B, H, N_Q, N_K] (true = may attend).
  // Returns output [B, N_Q, D] and, if need_weights, the per-head weights [B, H, N_Q, N_K]
  // (undefined otherwise). Passing the same tensor as query, key and value takes the fused
  // self-attention path: one [3D, D] matmul.
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& query, const torch::Tensor& key,
                                                  const torch::Tensor& value, const torch::Tensor& mask = {},
                                                  bool need_weights = false);
  // Self-attention: forward(x, x, x, mask).first.
  torch::Tensor self_attention(const torch::Tensor& x, const torch::Tensor& mask = {});

  // When on, every forward keeps its weights [B, H, N_Q, N_K] (detached) for attention maps.
  void keep_weights(bool on) { keep_weights_ = on; if (!on) last_weights_ = torch::Tensor(); }
  const torch::Tensor& last_weights() const { return last_weights_; }

  MultiHeadAttentionOptions options;
  torch::Tensor in_proj_weight;  // [3D, D]
  torch::Tensor in_proj_bias;    // [3D] (undefined without bias)
  torch::nn::Linear out_proj{nullptr};

 protected:
  FORWARD_HAS_DEFAULT_ARGS({3, torch::nn::AnyValue(torch::Tensor())}, {4, torch::nn::AnyValue(false)})

 private:
  bool keep_weights_ = false;
  torch::Tensor last_weights_;
};

TORCH_MODULE(MultiHeadAttention);

}  // namespace attnzoo
