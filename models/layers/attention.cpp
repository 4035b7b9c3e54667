#include "models/layers/attention.h"

#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/torch.h>

#include <cmath>

namespace attnzoo {

AttentionOutput scaled_dot_product_attention(const torch::Tensor& q, const torch::Tensor& k,
                                             const torch::Tensor& v, const torch::Tensor& mask,
                                             double dropout_p, bool training) {
  TORCH_CHECK(q.dim() >= 2 && k.dim() == q.dim() && v.dim() == q.dim(),
              "scaled_dot_product_attention: q, k, v need the same rank >= 2, got ", q.sizes(), ", ", k.sizes(),
              ", ", v.sizes());
  TORCH_CHECK(q.size(-1) == k.size(-1), "scaled_dot_product_attention: query width ", q.size(-1),
              " != key width ", k.size(-1));
  TORCH_CHECK(k.size(-2) == v.size(-2), "scaled_dot_product_attention: ", k.size(-2), " keys but ", v.size(-2),
              " values");
  // Scale Q rather than E: N_Q x D_Q multiplies instead of N_Q x N_K.
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  auto scores = torch::matmul(q * scale, k.transpose(-2, -1));  // [.., N_Q, N_K]

  torch::Tensor row_has_key;  // [.., N_Q, 1] of the mask's own (small) shape; undefined = all rows fine
  if (mask.defined()) {
    TORCH_CHECK(mask.scalar_type() == torch::kBool, "attention mask must be bool (true = may attend), got ",
                mask.scalar_type());
    // A large finite value, not -inf: a fully masked row then softmaxes to a uniform row (zeroed
    // below) instead of NaN, and its gradient stays finite. exp(lowest - max) is exactly 0.
    const double lowest = scores.scalar_type() == torch::kHalf ? -65504.0 : -1e30;
    scores.masked_fill_(mask.logical_not(), lowest);  // in place: matmul's backward does not need E
    auto any_key = mask.any(-1, /*keepdim=*/true);
    // Skip the extra pass over A when no row is empty (the usual case). A trace must not bake in
    // that decision, so traces always keep the fix-up.
    if (torch::jit::tracer::isTracing() || !any_key.all().item<bool>()) row_has_key = any_key;
  }
  auto weights = torch::softmax(scores, -1);
  if (row_has_key.defined()) weights = weights.masked_fill(row_has_key.logical_not(), 0.0);

  auto mixing = (training && dropout_p > 0.0) ? torch::dropout(weights, dropout_p, /*train=*/true) : weights;
  auto output = torch::matmul(mixing, v);  // [.., N_Q, D_V]
  return {output, weights};
}

torch::Tensor causal_mask(int64_t n, const torch::Device& device) {
  return torch::ones({n, n}, torch::TensorOptions().dtype(torch::kBool).device(device)).tril();
}

torch::Tensor padding_mask(const torch::Tensor& lengths, int64_t max_len) {
  TORCH_CHECK(lengths.dim() == 1, "padding_mask: lengths must be [B], got ", lengths.sizes());
  auto positions = torch::arange(max_len, lengths.options().dtype(torch::kLong));  // [N_K]
  auto mask = positions.unsqueeze(0) < lengths.to(torch::kLong).unsqueeze(1);     // [B, N_K]
  return mask.view({-1, 1, 1, max_len});                                          // [B, 1, 1, N_K]
}

}  // namespace attnzoo
