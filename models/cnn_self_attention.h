#pragma once
// A CNN with self-attention (reference 1.12): a small ResNet ("Input Image -> CNN -> Features C x H x W")
// whose feature maps pass through SAGAN self-attention blocks after chosen stages, so every position
// can see the whole image; then global average pooling and a linear classifier.
//
//   stem:    conv3x3(in -> widths[0]) - BN - ReLU
//   stage s: depths[s] basic residual blocks of width widths[s]; the first block of every stage but
//            the first has stride 2 (halves H and W)
//            then SelfAttention2d(widths[s]) if s is in attention_after
//   head:    global average pool - dropout - linear
//
// attention_after = {} is the ablation: the same CNN without attention.
#include <torch/nn/cloneable.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <string>
#include <vector>

#include "models/layers/self_attention_2d.h"
#include "models/zoo_model.h"

namespace attnzoo {

// The basic block of ResNet (He et al. 2016): y = ReLU(BN(conv3x3(ReLU(BN(conv3x3(x))))) + shortcut(x)),
// the shortcut a 1x1 conv + BN when the stride or width changes, else the identity.
struct ResidualBlockOptions {
  ResidualBlockOptions(int64_t in_channels, int64_t out_channels)
      : in_channels_(in_channels), out_channels_(out_channels) {}
  TORCH_ARG(int64_t, in_channels);
  TORCH_ARG(int64_t, out_channels);
  TORCH_ARG(int64_t, stride) = 1;
};

class ResidualBlockImpl : public torch::nn::Cloneable<ResidualBlockImpl> {
 public:
  explicit ResidualBlockImpl(const ResidualBlockOptions& options);
  void reset() override;
  torch::Tensor forward(const torch::Tensor& x);  // [B, C_in, H, W] -> [B, C_out, H/stride, W/stride]

  ResidualBlockOptions options;
  torch::nn::Conv2d conv1{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr};
  torch::nn::Conv2d conv2{nullptr};
  torch::nn::BatchNorm2d bn2{nullptr};
  torch::nn::Sequential shortcut{nullptr};  // empty = identity
};

TORCH_MODULE(ResidualBlock);

struct CnnSelfAttentionOptions {
  CnnSelfAttentionOptions(int64_t in_channels, int64_t num_classes)
      : in_channels_(in_channels), num_classes_(num_classes) {}
  TORCH_ARG(int64_t, in_channels);
  TORCH_ARG(int64_t, num_classes);
  TORCH_ARG(std::vector<int64_t>, widths) = std::vector<int64_t>{32, 64, 128};  // one per stage
  TORCH_ARG(std::vector<int64_t>, depths) = std::vector<int64_t>{1, 1, 1};      // residual blocks per stage
  TORCH_ARG(std::vector<int64_t>, attention_after) = std::vector<int64_t>{1, 2};  // stage indices; {} = none
  TORCH_ARG(int64_t, qk_channels) = 0;                                          // 0 = C/8 at each block
  TORCH_ARG(bool, scaled_attention) = false;                                    // SAGAN: unscaled
  TORCH_ARG(double, dropout) = 0.0;                                             // before the head
};

class CnnSelfAttentionImpl : public ClassifierImpl {
 public:
  explicit CnnSelfAttentionImpl(const CnnSelfAttentionOptions& options);

  // images [B, C, H, W] -> logits [B, num_classes]
  torch::Tensor forward(torch::Tensor images) override;
  std::string family() const override { return "cnn_sa"; }

  // Attention weights [B, H_s*W_s, H_s*W_s] of each attention block's later forwards, in stage order.
  void keep_attention_weights(bool on);
  std::vector<torch::Tensor> last_attention_weights() const;
  const std::vector<SelfAttention2d>& attention_blocks() const { return attention_blocks_; }

  CnnSelfAttentionOptions options;
  torch::nn::Sequential stem{nullptr};
  torch::nn::ModuleList stages{nullptr};  // each a Sequential: residual blocks, then the attention block if any
  torch::nn::Dropout dropout{nullptr};
  torch::nn::Linear head{nullptr};

 private:
  std::vector<torch::nn::Sequential> stage_list_;   // typed handles to `stages`
  std::vector<SelfAttention2d> attention_blocks_;  // typed handles to the attention blocks
};

TORCH_MODULE(CnnSelfAttention);

}  // namespace attnzoo
