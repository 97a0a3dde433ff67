#pragma once
// The double-precision reference of the step, written straight from PyTorch's definitions
// (torch/optim/adam.py and adamw.py, single-tensor path), to check the fp32 kernels against.
// Arithmetic is in double; the state is stored as `State`: double keeps every step exact (the
// ideal optimizer), float stores it as the mixed-precision algorithm defines it (fp32 master
// params, m and v), so the kernels' own arithmetic error is what remains.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "validation/adam_step.hpp"

namespace luwu::validation {

template <typename State>
void adam_step_reference(const AdamHyperparameters& h, std::int64_t step, const float* gradients, State* master,
                         State* m, State* v, std::size_t count) {
  const double bias_correction1 = 1.0 - std::pow(h.beta1, static_cast<double>(step));
  const double bias_correction2 = 1.0 - std::pow(h.beta2, static_cast<double>(step));
  const double step_size = h.learning_rate / bias_correction1;
  const double bias_correction2_sqrt = std::sqrt(bias_correction2);
  for (std::size_t i = 0; i < count; ++i) {
    double grad = gradients[i];
    double p = master[i];
    if (h.weight_decay != 0) {
      if (h.weight_decay_mode == WeightDecayMode::decoupled)
        p *= 1.0 - h.learning_rate * h.weight_decay;  // AdamW: param.mul_(1 - lr * wd)
      else
        grad += h.weight_decay * p;  // Adam: grad = grad.add(param, alpha=wd)
    }
    const double m_new = h.beta1 * static_cast<double>(m[i]) + (1.0 - h.beta1) * grad;
    const double v_new = h.beta2 * static_cast<double>(v[i]) + (1.0 - h.beta2) * grad * grad;
    const double denominator = std::sqrt(v_new) / bias_correction2_sqrt + h.epsilon;
    p -= step_size * m_new / denominator;
    m[i] = static_cast<State>(m_new);
    v[i] = static_cast<State>(v_new);
    master[i] = static_cast<State>(p);
  }
}

}  // namespace luwu::validation
