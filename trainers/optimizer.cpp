#include "trainers/optimizer.h"

#include <torch/torch.h>

namespace attnzoo {

OptimizerOptions read_optimizer_options(ConfigSection section) {
  OptimizerOptions o;
  o.name = section.get_choice("name", o.name, {"sgd", "adam", "adamw"});
  o.lr = section.get_double("lr", o.lr, 0.0);
  o.weight_decay = section.get_double("weight_decay", o.name == "adamw" ? 0.05 : 0.0, 0.0);
  // Keys of another optimizer are an error, not silently ignored.
  auto only_for = [&](const std::string& key, const std::string& which) {
    if (section.has(key) && o.name != which && !(which == "adam" && o.name == "adamw"))
      section.fail(key, "is only used by optim.name=" + which + " (this config uses " + o.name + ")");
  };
  only_for("momentum", "sgd");
  only_for("nesterov", "sgd");
  only_for("betas", "adam");
  only_for("eps", "adam");
  if (o.name == "sgd") {
    o.momentum = section.get_double("momentum", o.momentum, 0.0, 1.0);
    o.nesterov = section.get_bool("nesterov", o.nesterov);
    if (o.nesterov && o.momentum == 0.0) section.fail("nesterov", "needs optim.momentum > 0");
  } else {
    auto betas = section.get_double_list("betas", {o.beta1, o.beta2});
    if (betas.size() != 2 || betas[0] < 0 || betas[0] >= 1 || betas[1] < 0 || betas[1] >= 1)
      section.fail("betas", "must be two numbers in [0, 1), e.g. [0.9, 0.999]");
    o.beta1 = betas[0];
    o.beta2 = betas[1];
    o.eps = section.get_double("eps", o.eps, 0.0);
  }
  section.finish();
  return o;
}

bool exempt_from_weight_decay(const std::string& name, const torch::Tensor& parameter) {
  if (parameter.dim() <= 1) return true;  // biases, LayerNorm/BatchNorm weights, gamma scalars
  for (const char* word : {"embedding", "embed_", "pos_embed", "position", "class_token", "cls_token"})
    if (name.find(word) != std::string::npos) return true;
  return false;
}

std::unique_ptr<torch::optim::Optimizer> build_optimizer(const OptimizerOptions& o, torch::nn::Module& model) {
  std::vector<torch::Tensor> decay, no_decay;
  for (const auto& item : model.named_parameters()) {
    if (!item.value().requires_grad()) continue;
    (exempt_from_weight_decay(item.key(), item.value()) ? no_decay : decay).push_back(item.value());
  }
  auto groups = [&](auto options) {
    using Options = decltype(options);
    std::vector<torch::optim::OptimizerParamGroup> result;
    result.emplace_back(decay, std::make_unique<Options>(options));
    auto without = options;
    without.weight_decay(0.0);
    result.emplace_back(no_decay, std::make_unique<Options>(without));
    return result;
  };
  if (o.name == "sgd") {
    auto options = torch::optim::SGDOptions(o.lr).momentum(o.momentum).nesterov(o.nesterov).weight_decay(o.weight_decay);
    return std::make_unique<torch::optim::SGD>(groups(options), options);
  }
  if (o.name == "adam") {
    auto options =
        torch::optim::AdamOptions(o.lr).betas({o.beta1, o.beta2}).eps(o.eps).weight_decay(o.weight_decay);
    return std::make_unique<torch::optim::Adam>(groups(options), options);
  }
  auto options = torch::optim::AdamWOptions(o.lr).betas({o.beta1, o.beta2}).eps(o.eps).weight_decay(o.weight_decay);
  return std::make_unique<torch::optim::AdamW>(groups(options), options);
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace attnzoo
