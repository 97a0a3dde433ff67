#pragma once
// The double-precision reference of the step, written straight from PyTorch's definitions
// (torch/optim/adam.py and adamw.py, single-tensor path), to check the fp32 kernels against.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "validation/adam_step.hpp"

namespace luwu::validation {

inline void adam_step_reference(const AdamHyperparameters& h, std::int64_t step, const float* gradients,
                                double* master, double* m, double* v, std::size_t count) {
  const double bias_correction1 = 1.0 - std::pow(h.beta1, static_cast<double>(step));
  const double bias_correction2 = 1.0 - std::pow(h.beta2, static_cast<double>(step));
  const double step_size = h.learning_rate / bias_correction1;
  const double bias_correction2_sqrt = std::sqrt(bias_correction2);
  for (std::size_t i = 0; i < count; ++i) {
    double grad = gradients[i];
    if (h.weight_decay != 0) {
      if (h.weight_decay_mode == WeightDecayMode::decoupled)
        master[i] *= 1.0 - h.learning_rate * h.weight_decay;  // AdamW: param.mul_(1 - lr * wd)
      else
        grad += h.weight_decay * master[i];  // Adam: grad = grad.add(param, alpha=wd)
    }
    m[i] = h.beta1 * m[i] + (1.0 - h.beta1) * grad;
    v[i] = h.beta2 * v[i] + (1.0 - h.beta2) * grad * grad;
    const double denominator = std::sqrt(v[i]) / bias_correction2_sqrt + h.epsilon;
    master[i] -= step_size * m[i] / denominator;
  }
}

}  // namespace luwu::validation
