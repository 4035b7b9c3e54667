#pragma once
// Positional encoding (reference 1.9): self-attention is permutation equivariant, so position must
// be put into the inputs. The encoding E(pos) is a learned lookup table ([002]: nn.Embedding(1024, d))
// or a fixed function (Vaswani's sinusoids), and is added to the input ([002], the default) or
// concatenated with it ([000][004]; the width then grows, see output_dim()).
#include <torch/nn/cloneable.h>
#include <torch/nn/pimpl.h>

#include <string>

namespace attnzoo {

struct PositionalEncodingOptions {
  PositionalEncodingOptions(int64_t d_model, int64_t max_len = 1024) : d_model_(d_model), max_len_(max_len) {}
  TORCH_ARG(int64_t, d_model);               // width of the inputs
  TORCH_ARG(int64_t, max_len);               // longest sequence (table rows)
  TORCH_ARG(std::string, kind) = "learned";  // learned | sinusoidal | none
  TORCH_ARG(std::string, combine) = "add";   // add | concat
  TORCH_ARG(int64_t, encoding_dim) = 0;      // width of E for concat; 0 = d_model (add requires d_model)
  // Vaswani multiplies the embeddings by sqrt(d_model) before adding the sinusoids.
  TORCH_ARG(bool, scale_input) = false;
  TORCH_ARG(double, init_std) = 0.02;        // learned table init: normal(0, std), as BERT/ViT
};

class PositionalEncodingImpl : public torch::nn::Cloneable<PositionalEncodingImpl> {
 public:
  explicit PositionalEncodingImpl(const PositionalEncodingOptions& options);
  void reset() override;

  // x [B, N, d_model] with N <= max_len -> [B, N, output_dim()].
  torch::Tensor forward(const torch::Tensor& x);
  // d_model, or d_model + encoding_dim for concat.
  int64_t output_dim() const;
  // The encodings E(0..N-1) for an input like x: [N, encoding_dim]. Trace-safe: N is taken from
  // x inside the graph unless N == max_len.
  torch::Tensor encodings_for(const torch::Tensor& x) const;

  // Vaswani: PE(pos, 2i) = sin(pos / 10000^{2i/d}), PE(pos, 2i+1) = cos(pos / 10000^{2i/d}). [max_len, d]
  static torch::Tensor sinusoidal_table(int64_t max_len, int64_t dim);

  PositionalEncodingOptions options;
  torch::Tensor table;  // [max_len, encoding_dim]: parameter "weight" (learned) or buffer "table" (sinusoidal)
};

TORCH_MODULE(PositionalEncoding);

}  // namespace attnzoo
