// The portable kernel, also the tail of the vector ones: the same fp32 operations as the vector
// lanes, with std::fma where they fuse.
#include <cmath>

#include "validation/adam_step.hpp"
#include "validation/half_precision.hpp"

namespace luwu::validation {

namespace {

template <HalfFormat F>
void scalar_loop(const AdamStepScalars& s, const AdamSlice& x) {
  for (std::size_t i = 0; i < x.count; ++i) {
    float g = F == HalfFormat::fp16 ? fp16_bits_to_fp32(x.gradients[i]) : bf16_bits_to_fp32(x.gradients[i]);
    float p = x.master[i];
    g = std::fma(s.l2_weight_decay, p, g);  // Adam: g + wd * p (wd = 0 for AdamW)
    const float m = std::fma(s.beta1, x.m[i], s.one_minus_beta1 * g);
    const float v = std::fma(s.beta2, x.v[i], (s.one_minus_beta2 * g) * g);
    const float denominator = std::fma(std::sqrt(v), s.inv_sqrt_bias_correction2, s.epsilon);
    const float decay = -(s.decoupled_decay * p);  // AdamW: -lr * wd * p (0 for Adam)
    p = p + std::fma(-s.step_size, m / denominator, decay);
    x.m[i] = m;
    x.v[i] = v;
    x.master[i] = p;
    x.params_out[i] = F == HalfFormat::fp16 ? fp32_to_fp16_bits(p) : fp32_to_bf16_bits(p);
  }
}

}  // namespace

void adam_step_scalar(const AdamStepScalars& s, HalfFormat format, const AdamSlice& slice) {
  if (format == HalfFormat::fp16)
    scalar_loop<HalfFormat::fp16>(s, slice);
  else
    scalar_loop<HalfFormat::bf16>(s, slice);
}

}  // namespace luwu::validation
