#pragma once
// Mixed precision by config: `trainer.precision: fp32 | bf16` (bf16 autocast on CPU, fp16/bf16 on CUDA).
// bf16 needs no loss scaler, which LibTorch 1.13 lacks anyway.
#include <c10/core/Device.h>

#include <string>

#include "models/zoo_model.h"

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

// model.step(batch) with autocast around the forward only: the one place training, evaluation and
// benchmarks run a step, so none of them can forget the precision.
StepOutput step_in_precision(ZooModelImpl& model, const Batch& batch, const StepOptions& options,
                             const std::string& precision, const c10::Device& device);

// "auto" -> cuda when available, else cpu. Throws std::runtime_error for cuda without CUDA.
c10::Device resolve_device(const std::string& name);

}  // namespace attnzoo
