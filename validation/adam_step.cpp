#include "validation/adam_step.hpp"

#include <cmath>
#include <stdexcept>

namespace luwu::validation {

AdamStepScalars AdamStepScalars::for_step(const AdamHyperparameters& h, std::int64_t step) {
  if (step < 1) throw std::invalid_argument("Adam step numbers start at 1");
  const double bias_correction1 = 1.0 - std::pow(h.beta1, static_cast<double>(step));
  const double bias_correction2 = 1.0 - std::pow(h.beta2, static_cast<double>(step));
  const bool decoupled = h.weight_decay_mode == WeightDecayMode::decoupled;
  AdamStepScalars s{};
  s.beta1 = static_cast<float>(h.beta1);
  s.one_minus_beta1 = static_cast<float>(1.0 - h.beta1);
  s.beta2 = static_cast<float>(h.beta2);
  s.one_minus_beta2 = static_cast<float>(1.0 - h.beta2);
  s.step_size = static_cast<float>(h.learning_rate / bias_correction1);
  s.inv_sqrt_bias_correction2 = static_cast<float>(1.0 / std::sqrt(bias_correction2));
  s.epsilon = static_cast<float>(h.epsilon);
  s.l2_weight_decay = decoupled ? 0.0f : static_cast<float>(h.weight_decay);
  s.decoupled_decay = decoupled ? static_cast<float>(h.learning_rate * h.weight_decay) : 0.0f;
  return s;
}

bool isa_supported(KernelIsa isa) {
  __builtin_cpu_init();
  switch (isa) {
    case KernelIsa::scalar:
      return true;
    case KernelIsa::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
    case KernelIsa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl");
  }
  return false;
}

KernelIsa best_isa() {
  if (isa_supported(KernelIsa::avx512)) return KernelIsa::avx512;
  if (isa_supported(KernelIsa::avx2)) return KernelIsa::avx2;
  return KernelIsa::scalar;
}

std::string isa_name(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::scalar: return "scalar";
    case KernelIsa::avx2: return "avx2";
    case KernelIsa::avx512: return "avx512";
  }
  return "unknown";
}

void adam_step_slice(KernelIsa isa, const AdamStepScalars& s, HalfFormat format, const AdamSlice& slice) {
  if (!isa_supported(isa)) throw std::invalid_argument("this CPU cannot run the " + isa_name(isa) + " kernel");
  switch (isa) {
    case KernelIsa::scalar: return adam_step_scalar(s, format, slice);
    case KernelIsa::avx2: return adam_step_avx2(s, format, slice);
    case KernelIsa::avx512: return adam_step_avx512(s, format, slice);
  }
}

}  // namespace luwu::validation
