#include "models/cnn_self_attention.h"

#include <torch/torch.h>

#include <algorithm>

namespace attnzoo {
namespace {

torch::nn::Conv2d conv3x3(int64_t in, int64_t out, int64_t stride = 1) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
}

// As torchvision's ResNet: He-normal (fan_out) conv weights; BatchNorm keeps its 1 / 0 default.
void init_conv(torch::nn::Conv2d& conv) {
  torch::NoGradGuard no_grad;
  torch::nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
}

}  // namespace

ResidualBlockImpl::ResidualBlockImpl(const ResidualBlockOptions& options_) : options(options_) { reset(); }

void ResidualBlockImpl::reset() {
  const auto& o = options;
  TORCH_CHECK(o.in_channels() > 0 && o.out_channels() > 0 && o.stride() > 0,
              "ResidualBlock: channels and stride must be positive");
  conv1 = register_module("conv1", conv3x3(o.in_channels(), o.out_channels(), o.stride()));
  bn1 = register_module("bn1", torch::nn::BatchNorm2d(o.out_channels()));
  conv2 = register_module("conv2", conv3x3(o.out_channels(), o.out_channels()));
  bn2 = register_module("bn2", torch::nn::BatchNorm2d(o.out_channels()));
  shortcut = register_module("shortcut", torch::nn::Sequential());
  if (o.stride() != 1 || o.in_channels() != o.out_channels()) {
    torch::nn::Conv2d projection(
        torch::nn::Conv2dOptions(o.in_channels(), o.out_channels(), 1).stride(o.stride()).bias(false));
    init_conv(projection);
    shortcut->push_back(projection);
    shortcut->push_back(torch::nn::BatchNorm2d(o.out_channels()));
  }
  init_conv(conv1);
  init_conv(conv2);
}

torch::Tensor ResidualBlockImpl::forward(const torch::Tensor& x) {
  auto y = torch::relu(bn1(conv1(x)));
  y = bn2(conv2(y));
  auto identity = shortcut->is_empty() ? x : shortcut->forward(x);
  return torch::relu(y + identity);
}

CnnSelfAttentionImpl::CnnSelfAttentionImpl(const CnnSelfAttentionOptions& options_) : options(options_) {
  const auto& o = options;
  const auto& widths = o.widths();
  const auto& depths = o.depths();
  const auto num_stages = static_cast<int64_t>(widths.size());
  TORCH_CHECK(o.in_channels() > 0 && o.num_classes() > 0, "CnnSelfAttention: in_channels and num_classes must be "
              "positive");
  TORCH_CHECK(num_stages > 0 && depths.size() == widths.size(), "CnnSelfAttention: widths (", widths.size(),
              " stages) and depths (", depths.size(), " stages) must have the same, positive length");
  for (int64_t s = 0; s < num_stages; ++s)
    TORCH_CHECK(widths[s] > 0 && depths[s] > 0, "CnnSelfAttention: stage ", s, " needs positive width and depth");
  for (auto s : o.attention_after())
    TORCH_CHECK(s >= 0 && s < num_stages, "CnnSelfAttention: attention_after stage ", s, " is not in [0, ",
                num_stages, ")");

  stem = register_module("stem", torch::nn::Sequential());
  auto stem_conv = conv3x3(o.in_channels(), widths[0]);
  init_conv(stem_conv);
  stem->push_back(stem_conv);
  stem->push_back(torch::nn::BatchNorm2d(widths[0]));
  stem->push_back(torch::nn::Functional(torch::relu));

  stages = register_module("stages", torch::nn::ModuleList());
  int64_t channels = widths[0];
  for (int64_t s = 0; s < num_stages; ++s) {
    torch::nn::Sequential stage;
    for (int64_t b = 0; b < depths[s]; ++b) {
      const int64_t stride = (s > 0 && b == 0) ? 2 : 1;
      stage->push_back(ResidualBlock(ResidualBlockOptions(channels, widths[s]).stride(stride)));
      channels = widths[s];
    }
    const auto& after = o.attention_after();
    if (std::find(after.begin(), after.end(), s) != after.end()) {
      SelfAttention2d attention(
          SelfAttention2dOptions(channels).qk_channels(o.qk_channels()).scaled(o.scaled_attention()));
      stage->push_back(attention);
      attention_blocks_.push_back(attention);
    }
    stages->push_back(stage);
    stage_list_.push_back(stage);
  }
  dropout = register_module("dropout", torch::nn::Dropout(o.dropout()));
  head = register_module("head", torch::nn::Linear(channels, o.num_classes()));
}

torch::Tensor CnnSelfAttentionImpl::forward(torch::Tensor images) {
  TORCH_CHECK(images.dim() == 4 && images.size(1) == options.in_channels(), "CnnSelfAttention: expected images [B, ",
              options.in_channels(), ", H, W], got ", images.sizes());
  auto x = stem->forward(images);                           // [B, widths[0], H, W]
  for (auto& stage : stage_list_) x = stage->forward(x);   // [B, widths[-1], H/2^(S-1), W/2^(S-1)]
  auto pooled = x.mean({2, 3});                             // [B, widths[-1]] global average pool
  return head(dropout(pooled));                             // [B, num_classes]
}

void CnnSelfAttentionImpl::keep_attention_weights(bool on) {
  for (auto& block : attention_blocks_) block->keep_attention_weights(on);
}

std::vector<torch::Tensor> CnnSelfAttentionImpl::last_attention_weights() const {
  std::vector<torch::Tensor> weights;
  for (const auto& block : attention_blocks_) weights.push_back(block->last_attention_weights());
  return weights;
}

}  // namespace attnzoo
