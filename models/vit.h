#pragma once
// Vision Transformer (Dosovitskiy et al. 2021; reference 1.18): split the image into P x P patches,
// embed each linearly, prepend a learnable [class] token, add position embeddings, run L encoder
// blocks, LayerNorm, and classify the [class] output (or the mean of the patch outputs).
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <string>
#include <vector>

#include "models/layers/positional_encoding.h"
#include "models/layers/transformer_block.h"
#include "models/zoo_model.h"

namespace attnzoo {

struct ViTOptions {
  ViTOptions(int64_t image_size, int64_t patch_size, int64_t num_classes)
      : image_size_(image_size), patch_size_(patch_size), num_classes_(num_classes) {}
  TORCH_ARG(int64_t, image_size);  // square images, divisible by patch_size
  TORCH_ARG(int64_t, in_channels) = 3;
  TORCH_ARG(int64_t, patch_size);
  TORCH_ARG(int64_t, num_classes);
  TORCH_ARG(int64_t, d_model) = 192;
  TORCH_ARG(int64_t, depth) = 12;
  TORCH_ARG(int64_t, num_heads) = 3;
  TORCH_ARG(int64_t, mlp_dim) = 768;
  TORCH_ARG(double, dropout) = 0.0;
  TORCH_ARG(double, attention_dropout) = 0.0;
  TORCH_ARG(std::string, pooling) = "cls";      // cls | mean (mean: no class token, average of patch outputs)
  TORCH_ARG(bool, norm_first) = true;           // pre-LN as in ViT
  TORCH_ARG(std::string, position) = "learned";  // learned | sinusoidal | none
  TORCH_ARG(double, layer_norm_eps) = 1e-6;      // ViT's (and torchvision's) value
};

class ViTImpl : public ClassifierImpl {
 public:
  explicit ViTImpl(const ViTOptions& options);

  // images [B, C, H, W] -> logits [B, num_classes]
  torch::Tensor forward(torch::Tensor images) override;
  std::string family() const override { return "vit"; }

  int64_t num_patches() const;  // N = (image_size / patch_size)^2
  int64_t num_tokens() const;   // N + 1 with a class token, else N

  // Attention weights [B, H, T, T] of each block's later forwards (T = num_tokens()).
  void keep_attention_weights(bool on);
  std::vector<torch::Tensor> last_attention_weights() const;

  // A learned position table [T_old, D] for a model trained at another image size, resized for this
  // one: the class-token row is kept, the grid rows are interpolated bicubically in 2-D (as ViT does
  // for fine-tuning at a higher resolution). Use it on a checkpoint's table before loading it.
  torch::Tensor resize_position_table(const torch::Tensor& old_table) const;

  ViTOptions options;
  torch::nn::Conv2d patch_embedding{nullptr};  // Conv2d(C, D, kernel=P, stride=P) == linear map of each flattened patch
  torch::Tensor class_token;                   // [1, 1, D]
  PositionalEncoding position{nullptr};
  torch::nn::Dropout dropout{nullptr};
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::LayerNorm norm{nullptr};
  torch::nn::Linear head{nullptr};

 private:
  std::vector<TransformerEncoderBlock> block_list_;  // typed handles to `blocks`
};

TORCH_MODULE(ViT);

}  // namespace attnzoo
