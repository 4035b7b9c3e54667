#include "models/layers/positional_encoding.h"

#include <torch/torch.h>

#include <cmath>

namespace attnzoo {

PositionalEncodingImpl::PositionalEncodingImpl(const PositionalEncodingOptions& options_) : options(options_) {
  reset();
}

void PositionalEncodingImpl::reset() {
  const auto& kind = options.kind();
  const auto& combine = options.combine();
  TORCH_CHECK(kind == "learned" || kind == "sinusoidal" || kind == "none",
              "PositionalEncoding: kind must be learned, sinusoidal or none, got '", kind, "'");
  TORCH_CHECK(combine == "add" || combine == "concat",
              "PositionalEncoding: combine must be add or concat, got '", combine, "'");
  TORCH_CHECK(options.d_model() > 0 && options.max_len() > 0, "PositionalEncoding: d_model and max_len must be positive");
  const int64_t dim = options.encoding_dim() > 0 ? options.encoding_dim() : options.d_model();
  TORCH_CHECK(combine == "concat" || dim == options.d_model(), "PositionalEncoding: added encodings need encoding_dim ",
              "== d_model (", options.d_model(), "), got ", dim);
  table = torch::Tensor();
  if (kind == "learned") {
    table = register_parameter("weight", torch::empty({options.max_len(), dim}));
    torch::NoGradGuard no_grad;
    table.normal_(0.0, options.init_std());
  } else if (kind == "sinusoidal") {
    table = register_buffer("table", sinusoidal_table(options.max_len(), dim));
  }
}

int64_t PositionalEncodingImpl::output_dim() const {
  if (options.kind() == "none" || options.combine() == "add") return options.d_model();
  return options.d_model() + (options.encoding_dim() > 0 ? options.encoding_dim() : options.d_model());
}

torch::Tensor PositionalEncodingImpl::sinusoidal_table(int64_t max_len, int64_t dim) {
  auto position = torch::arange(max_len, torch::kFloat).unsqueeze(1);  // [max_len, 1]
  // 1 / 10000^{2i/d} for i = 0 .. ceil(d/2)-1
  auto inverse_frequency = torch::exp(torch::arange(0, dim, 2, torch::kFloat) * (-std::log(10000.0) / dim));
  auto angle = position * inverse_frequency;  // [max_len, ceil(d/2)]
  // Interleave: column 2i = sin, 2i+1 = cos; an odd width drops the last cos.
  auto table = torch::stack({angle.sin(), angle.cos()}, -1).flatten(1);
  return table.narrow(1, 0, dim).contiguous();
}

torch::Tensor PositionalEncodingImpl::encodings_for(const torch::Tensor& x) const {
  TORCH_CHECK(table.defined(), "PositionalEncoding: kind 'none' has no encodings");
  const int64_t n = x.size(1);
  TORCH_CHECK(n <= options.max_len(), "PositionalEncoding: sequence of length ", n, " exceeds max_len ",
              options.max_len());
  if (n == table.size(0)) return table;  // e.g. ViT: the table has exactly N+1 rows
  // Positions 0..N-1 computed from x inside the graph (a cumulative sum of ones over x's sequence
  // dimension) rather than arange(N): the C++ tracer would freeze N, and decoders are traced once
  // and run at every length.
  auto positions = torch::ones_like(x.select(-1, 0).select(0, 0), torch::kLong).cumsum(0) - 1;  // [N]
  return table.index_select(0, positions);
}

torch::Tensor PositionalEncodingImpl::forward(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 3 && x.size(-1) == options.d_model(), "PositionalEncoding: expected [B, N, ",
              options.d_model(), "], got ", x.sizes());
  if (options.kind() == "none") return x;
  auto input = options.scale_input() ? x * std::sqrt(static_cast<double>(options.d_model())) : x;
  auto encodings = encodings_for(x);  // [N, E]
  // add: a bf16 input (autocast) meets the fp32 table and the sum is fp32, keeping the residual
  // stream in full precision.
  if (options.combine() == "add") return input + encodings;  // [B, N, D]
  // concat: broadcast E over the batch without naming B (trace-safe), then [x; E(pos)].
  auto batch_encodings = torch::zeros_like(x.narrow(-1, 0, 1)) + encodings.to(x.scalar_type());  // [B, N, E]
  return torch::cat({input, batch_encodings}, -1);                            // [B, N, D+E]
}

}  // namespace attnzoo
