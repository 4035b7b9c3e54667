#pragma once
// The Transformer block's "MLP independently on each vector" (reference 1.14):
// Linear(D, hidden) -> GELU (ViT) or ReLU (Vaswani) -> dropout -> Linear(hidden, out) -> dropout.
#include <torch/nn/cloneable.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <string>

namespace attnzoo {

struct MlpOptions {
  MlpOptions(int64_t in_dim, int64_t hidden_dim) : in_dim_(in_dim), hidden_dim_(hidden_dim) {}
  TORCH_ARG(int64_t, in_dim);
  TORCH_ARG(int64_t, hidden_dim);
  TORCH_ARG(int64_t, out_dim) = 0;            // 0 = in_dim
  TORCH_ARG(std::string, activation) = "gelu";  // gelu | relu
  TORCH_ARG(double, dropout) = 0.0;
};

class MlpImpl : public torch::nn::Cloneable<MlpImpl> {
 public:
  explicit MlpImpl(const MlpOptions& options);
  void reset() override;
  // [.., in_dim] -> [.., out_dim]
  torch::Tensor forward(const torch::Tensor& x);

  MlpOptions options;
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  torch::nn::Dropout dropout{nullptr};

 private:
  bool gelu_ = true;
};

TORCH_MODULE(Mlp);

}  // namespace attnzoo
