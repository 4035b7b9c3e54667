#pragma once
// Mixed precision by config: `trainer.precision: fp32 | bf16` (bf16 autocast on CPU, fp16/bf16 on CUDA).
// bf16 needs no loss scaler, which LibTorch 1.13 lacks anyway.
#include <c10/core/Device.h>

#include <string>

namespace attnzoo {

// Enables autocast for its lifetime (forward passes); a no-op for fp32.
class AutocastGuard {
 public:
  AutocastGuard(const std::string& precision, const c10::Device& device);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool cpu_ = false, cuda_ = false;
  bool previous_cpu_ = false, previous_cuda_ = false;
};

// "auto" -> cuda when available, else cpu. Throws std::runtime_error for cuda without CUDA.
c10::Device resolve_device(const std::string& name);

}  // namespace attnzoo
