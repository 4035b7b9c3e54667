#include "trainers/precision.h"

#include <ATen/autocast_mode.h>
#include <torch/cuda.h>

#include <stdexcept>

namespace attnzoo {

AutocastGuard::AutocastGuard(const std::string& precision, const c10::Device& device) {
  if (precision == "fp32") return;
  previous_cpu_ = at::autocast::is_cpu_enabled();
  previous_cuda_ = at::autocast::is_enabled();
  if (device.is_cuda()) {
    cuda_ = true;
    at::autocast::set_autocast_gpu_dtype(precision == "fp16" ? at::kHalf : at::kBFloat16);
    at::autocast::set_enabled(true);
  } else {
    cpu_ = true;
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
    at::autocast::set_cpu_enabled(true);
  }
}

AutocastGuard::~AutocastGuard() {
  if (cpu_) at::autocast::set_cpu_enabled(previous_cpu_);
  if (cuda_) at::autocast::set_enabled(previous_cuda_);
  // Autocast caches casted weights; they must not outlive the step (the weights change).
  if (cpu_ || cuda_) at::autocast::clear_cache();
}

StepOutput step_in_precision(ZooModelImpl& model, const Batch& batch, const StepOptions& options,
                             const std::string& precision, const c10::Device& device) {
  AutocastGuard autocast(precision, device);
  return model.step(batch, options);
}

c10::Device resolve_device(const std::string& name) {
  if (name == "cpu") return c10::Device(c10::kCPU);
  bool has_cuda = torch::cuda::is_available();
  if (name == "cuda" && !has_cuda)
    throw std::runtime_error("trainer.device=cuda but this LibTorch has no CUDA device; use device: auto or cpu");
  return has_cuda ? c10::Device(c10::kCUDA) : c10::Device(c10::kCPU);
}

}  // namespace attnzoo
