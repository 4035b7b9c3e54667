#include "models/vit.h"

#include <torch/torch.h>

#include <cmath>

namespace attnzoo {

ViTImpl::ViTImpl(const ViTOptions& options_) : options(options_) {
  const auto& o = options;
  TORCH_CHECK(o.image_size() > 0 && o.patch_size() > 0 && o.image_size() % o.patch_size() == 0, "ViT: patch_size=",
              o.patch_size(), " does not divide image_size=", o.image_size());
  TORCH_CHECK(o.num_classes() > 0 && o.in_channels() > 0 && o.depth() >= 0 && o.mlp_dim() > 0,
              "ViT: num_classes, in_channels and mlp_dim must be positive");
  TORCH_CHECK(o.pooling() == "cls" || o.pooling() == "mean", "ViT: pooling must be cls or mean, got '", o.pooling(),
              "'");
  const int64_t d = o.d_model();

  patch_embedding = register_module(
      "patch_embedding",
      torch::nn::Conv2d(torch::nn::Conv2dOptions(o.in_channels(), d, o.patch_size()).stride(o.patch_size())));
  if (o.pooling() == "cls") class_token = register_parameter("class_token", torch::zeros({1, 1, d}));
  position = register_module(
      "position", PositionalEncoding(PositionalEncodingOptions(d, num_tokens()).kind(o.position()).combine("add")));
  dropout = register_module("dropout", torch::nn::Dropout(o.dropout()));
  blocks = register_module("blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < o.depth(); ++i) {
    TransformerEncoderBlock block(TransformerEncoderBlockOptions(d, o.num_heads(), o.mlp_dim())
                                      .dropout(o.dropout())
                                      .attention_dropout(o.attention_dropout())
                                      .norm_first(o.norm_first())
                                      .activation("gelu")
                                      .layer_norm_eps(o.layer_norm_eps()));
    blocks->push_back(block);
    block_list_.push_back(block);
  }
  norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d}).eps(o.layer_norm_eps())));
  head = register_module("head", torch::nn::Linear(d, o.num_classes()));

  // Initialisation as torchvision's VisionTransformer. Its trunc_normal_ cuts at +-2 absolute, which
  // at std = 1/sqrt(fan_in) (<< 1) never triggers, so a plain normal is the same distribution.
  torch::NoGradGuard no_grad;
  const double fan_in = static_cast<double>(o.in_channels() * o.patch_size() * o.patch_size());
  patch_embedding->weight.normal_(0.0, std::sqrt(1.0 / fan_in));
  patch_embedding->bias.zero_();
  for (auto& block : block_list_) {  // MLPBlock: xavier-uniform weights, tiny normal biases
    for (auto* linear : {&block->mlp->fc1, &block->mlp->fc2}) {
      torch::nn::init::xavier_uniform_((*linear)->weight);
      (*linear)->bias.normal_(0.0, 1e-6);
    }
  }
  head->weight.zero_();  // zero head: every class starts at the same logit
  head->bias.zero_();
}

int64_t ViTImpl::num_patches() const {
  const int64_t side = options.image_size() / options.patch_size();
  return side * side;
}

int64_t ViTImpl::num_tokens() const { return num_patches() + (options.pooling() == "cls" ? 1 : 0); }

torch::Tensor ViTImpl::forward(torch::Tensor images) {
  TORCH_CHECK(images.dim() == 4 && images.size(1) == options.in_channels() &&
                  images.size(2) == options.image_size() && images.size(3) == options.image_size(),
              "ViT: expected images [B, ", options.in_channels(), ", ", options.image_size(), ", ",
              options.image_size(), "], got ", images.sizes());
  // Patchify and embed: each P x P x C patch -> D.
  auto x = patch_embedding(images).flatten(2).transpose(1, 2);  // [B, N, D]
  if (class_token.defined()) {
    // expand_as keeps the batch size out of the graph (a trace at batch 1 runs any batch).
    auto cls = class_token.expand_as(x.narrow(1, 0, 1)).to(x.scalar_type());  // [B, 1, D]
    x = torch::cat({cls, x}, 1);                                              // [B, N+1, D]
  }
  x = dropout(position(x));  // z_0 = [x_class; x_p E] + E_pos
  for (auto& block : block_list_) x = block(x);  // [B, N+1, D]
  x = layer_norm(norm, x);
  auto pooled = class_token.defined() ? x.select(1, 0) : x.mean(1);  // [B, D]
  return head(pooled);                                                // [B, num_classes]
}

void ViTImpl::keep_attention_weights(bool on) {
  for (auto& block : block_list_) block->keep_attention_weights(on);
}

std::vector<torch::Tensor> ViTImpl::last_attention_weights() const {
  std::vector<torch::Tensor> weights;
  for (const auto& block : block_list_) weights.push_back(block->last_attention_weights());
  return weights;
}

torch::Tensor ViTImpl::resize_position_table(const torch::Tensor& old_table) const {
  TORCH_CHECK(old_table.dim() == 2 && old_table.size(1) == options.d_model(),
              "ViT: position table must be [T, ", options.d_model(), "], got ", old_table.sizes());
  const int64_t extra = class_token.defined() ? 1 : 0;
  if (old_table.size(0) == num_tokens()) return old_table;
  const int64_t old_grid = old_table.size(0) - extra;
  const auto old_side = static_cast<int64_t>(std::lround(std::sqrt(static_cast<double>(old_grid))));
  TORCH_CHECK(old_side * old_side == old_grid, "ViT: position table of ", old_table.size(0),
              " rows is not a square grid", extra ? " plus a class token" : "");
  const int64_t side = options.image_size() / options.patch_size();
  torch::NoGradGuard no_grad;
  auto grid = old_table.narrow(0, extra, old_grid).reshape({1, old_side, old_side, -1}).permute({0, 3, 1, 2});
  grid = torch::nn::functional::interpolate(grid, torch::nn::functional::InterpolateFuncOptions()
                                                      .size(std::vector<int64_t>{side, side})
                                                      .mode(torch::kBicubic)
                                                      .align_corners(false));
  auto rows = grid.permute({0, 2, 3, 1}).reshape({side * side, -1});  // [N_new, D]
  return extra ? torch::cat({old_table.narrow(0, 0, 1), rows}, 0) : rows;
}

}  // namespace attnzoo
