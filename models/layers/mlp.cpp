#include "models/layers/mlp.h"

#include <torch/torch.h>

namespace attnzoo {

MlpImpl::MlpImpl(const MlpOptions& options_) : options(options_) { reset(); }

void MlpImpl::reset() {
  TORCH_CHECK(options.activation() == "gelu" || options.activation() == "relu",
              "Mlp: activation must be gelu or relu, got '", options.activation(), "'");
  gelu_ = options.activation() == "gelu";
  const int64_t out_dim = options.out_dim() > 0 ? options.out_dim() : options.in_dim();
  fc1 = register_module("fc1", torch::nn::Linear(options.in_dim(), options.hidden_dim()));
  fc2 = register_module("fc2", torch::nn::Linear(options.hidden_dim(), out_dim));
  dropout = register_module("dropout", torch::nn::Dropout(options.dropout()));
}

torch::Tensor MlpImpl::forward(const torch::Tensor& x) {
  auto hidden = fc1(x);                                       // [.., hidden]
  hidden = gelu_ ? torch::gelu(hidden) : torch::relu(hidden);
  return dropout(fc2(dropout(hidden)));                       // [.., out]
}

}  // namespace attnzoo
