#pragma once
// The same mixed-precision Adam/AdamW step on an NVIDIA GPU, built only with -DLUWUSIM_CUDA=ON
// where nvcc exists (LUWUSIM_HAVE_CUDA is then defined).  The kernel does the per-element
// operations of adam_kernel_scalar.cpp in the same order (fmaf, IEEE sqrt and division, RNE
// conversions), so a GPU gives the CPU kernels' bits.
#include "validation/adam_step.hpp"

namespace luwu::validation {

// True when this build has CUDA and a device is present.
bool cuda_device_available();

// One step on the GPU over a slice in host memory (copied to the device and back).  Throws
// std::runtime_error if there is no CUDA device or a CUDA call fails.
void adam_step_cuda(const AdamStepScalars& s, HalfFormat format, const AdamSlice& slice);

// The kernel alone, its state already in HBM: seconds per step over `count` elements (the median of
// `repeats` steps timed with CUDA events, after one warm-up step), for bench/adam_cuda_bench.  Each
// step reads 12 bytes of fp32 state and a 2-byte gradient and writes 12 bytes and a 2-byte
// parameter: 28 bytes per element, as torch's fused AdamW over fp32 parameters and gradients.
double adam_step_cuda_resident_seconds(HalfFormat format, size_t count, int repeats);

}  // namespace luwu::validation
