#pragma once
// Scaled dot-product attention and its masks (reference 1.7, 1.8, 1.10): the one softmax-with-mask
// every model uses.
//
//   E = Q K^T / sqrt(D_Q)        [.., N_Q, N_K]
//   A = softmax(E, dim=-1)       each query's weights over the keys sum to 1
//   Y = A V                      [.., N_Q, D_V]
//
// Mask convention (everywhere in attnzoo): a bool tensor broadcastable to [B, H, N_Q, N_K],
// true = this query may attend to this key. Masked keys get exactly zero weight; a query whose keys
// are all masked gets an all-zero row (and output 0), never NaN.
#include <torch/types.h>

namespace attnzoo {

struct AttentionOutput {
  torch::Tensor output;   // [.., N_Q, D_V]
  torch::Tensor weights;  // [.., N_Q, N_K], before dropout (what attention maps show)
};

// q [.., N_Q, D_Q], k [.., N_K, D_Q], v [.., N_K, D_V]. `mask` may be undefined (no mask).
// Dropout, when training and dropout_p > 0, is applied to the weights that multiply V.
AttentionOutput scaled_dot_product_attention(const torch::Tensor& q, const torch::Tensor& k,
                                             const torch::Tensor& v, const torch::Tensor& mask = {},
                                             double dropout_p = 0.0, bool training = false);

// [n, n] bool, lower-triangular true: query i sees keys j <= i ("don't look ahead", reference 1.10).
torch::Tensor causal_mask(int64_t n, const torch::Device& device = torch::kCPU);

// lengths [B] int64 -> [B, 1, 1, max_len] bool, true where key position < length (not padding).
torch::Tensor padding_mask(const torch::Tensor& lengths, int64_t max_len);

}  // namespace attnzoo
