#pragma once
// The mixed-precision Adam / AdamW step of ZeRO-Offload's CPU optimizer: fp32 master parameters
// and moments (m, v) updated in place from 16-bit gradients, the new parameters written out in
// the same 16-bit format.  The arithmetic is PyTorch's (torch.optim.Adam: L2 weight decay added to
// the gradient; torch.optim.AdamW: decoupled decay p -= lr * wd * p), with bias correction.
//
// Every instruction-set path does the same fp32 operations in the same order (fused multiply-adds
// included), so all paths, any thread count and the out-of-core optimizer give identical bits.
// Per element:   g  = fma(l2_wd, p, g)                        (Adam's L2 term; 0 for AdamW)
//                m  = fma(beta1, m, (1 - beta1) g);  v = fma(beta2, v, ((1 - beta2) g) g)
//                dp = fma(-step_size, m / fma(sqrt(v), 1/sqrt(bc2), eps), -(lr wd) p)
//                p  = p + dp                                  (AdamW's decay folded into dp)
// Folding AdamW's decay into the same increment rounds p once per step instead of twice, and
// avoids rounding 1 - lr wd (= 0.99999 for PyTorch's defaults) to fp32, which alone would
// bias p by 1.4e-8 relative per step.
#include <cstddef>
#include <cstdint>
#include <string>

namespace luwu::validation {

enum class HalfFormat { fp16, bf16 };
enum class WeightDecayMode { l2_in_gradient /* torch.optim.Adam */, decoupled /* torch.optim.AdamW */ };

struct AdamHyperparameters {
  double learning_rate = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double weight_decay = 0.0;
  WeightDecayMode weight_decay_mode = WeightDecayMode::l2_in_gradient;
};

// The scalars of step `step` (1-based, as PyTorch counts), computed in double and rounded to fp32
// once, as PyTorch passes Python floats to its fp32 tensor operations.
struct AdamStepScalars {
  float beta1, one_minus_beta1, beta2, one_minus_beta2;
  float step_size;                  // lr / (1 - beta1^step)
  float inv_sqrt_bias_correction2;  // 1 / sqrt(1 - beta2^step)
  float epsilon;
  float l2_weight_decay;   // wd for Adam, 0 for AdamW
  float decoupled_decay;   // lr * wd for AdamW, 0 for Adam

  static AdamStepScalars for_step(const AdamHyperparameters& h, std::int64_t step);
};

// One contiguous slice of the optimizer state; the kernel updates master, m and v in place,
// reads `gradients` and writes `params_out` (both in the step's HalfFormat).
struct AdamSlice {
  float* master;
  float* m;
  float* v;
  const std::uint16_t* gradients;
  std::uint16_t* params_out;
  std::size_t count;

  AdamSlice sub(std::size_t begin, std::size_t end) const {
    return {master + begin, m + begin, v + begin, gradients + begin, params_out + begin, end - begin};
  }
};

enum class KernelIsa { scalar, avx2, avx512 };

bool isa_supported(KernelIsa isa);  // this CPU can run it (checked at run time)
KernelIsa best_isa();               // the widest supported one
std::string isa_name(KernelIsa isa);

// One thread, one slice.  Throws std::invalid_argument if `isa` is not supported here.
void adam_step_slice(KernelIsa isa, const AdamStepScalars& s, HalfFormat format, const AdamSlice& slice);

// The per-ISA kernels (adam_kernel_<isa>.cpp); callers use adam_step_slice.
void adam_step_scalar(const AdamStepScalars& s, HalfFormat format, const AdamSlice& slice);
void adam_step_avx2(const AdamStepScalars& s, HalfFormat format, const AdamSlice& slice);
void adam_step_avx512(const AdamStepScalars& s, HalfFormat format, const AdamSlice& slice);

}  // namespace luwu::validation
