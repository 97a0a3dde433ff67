#pragma once
// A GPU as a few numbers: peak FLOP/s per precision, HBM capacity and bandwidth, the efficiency a
// GEMM achieves as a function of its shape, and how much compute throughput is lost while other
// work uses the GPU (a GPU-executed collective kernel, or a SmartNIC writing into HBM by DMA).
//
// GEMM efficiency model (C[m x n] = A[m x k] B[k x n]):
//   efficiency(m, n, k) = gemm_efficiency_max * d / (d + gemm_half_efficiency_dim),
//   d = 3 / (1/m + 1/n + 1/k)   (harmonic mean of the three dimensions)
// Why the harmonic mean: a GEMM's arithmetic intensity is m n k / (m k + k n + m n) elements per
// element moved = d / 3, so the smallest dimension dominates, as it does in practice (a skinny
// GEMM under-fills the SMs and is memory-bound).  The saturating factor d / (d + d_half) reaches
// one half at d = d_half and tends to 1 for large shapes, where the efficiency tends to
// gemm_efficiency_max, which the shipped profiles anchor to published large-run efficiencies
// (Megatron-LM: 52% of A100 peak, 48% of V100 peak).  The shipped d_half = 3 * peak / hbm_bandwidth
// follows from a non-overlapped roofline t = F/P + B/W with minimal traffic: for fp16 GEMMs
// F = 2mnk, B = 2(mk + kn + mn), so F/B = d/3 and efficiency = 1 / (1 + (P/W) / (d/3)) = d / (d + 3P/W).
#include "models/precision.hpp"
#include "models/profile.hpp"

namespace luwu::models {

struct GpuSpec {
  std::string name;
  double peak_fp16_flops = 0;            // FLOP/s, dense tensor core
  double peak_bf16_flops = 0;            // FLOP/s; 0 = not supported (V100)
  double peak_fp32_flops = 0;            // FLOP/s
  double hbm_bytes = 0;
  double hbm_Bps = 0;
  double gemm_efficiency_max = 0;        // fraction of peak reached by very large GEMMs
  double gemm_half_efficiency_dim = 0;   // elements: harmonic-mean dim at which efficiency is half the max
  double collective_interference = 0;    // fraction of compute throughput lost while a collective kernel runs
  double dma_interference = 0;           // fraction lost while a NIC DMA-writes into HBM
  // Kernel-level scheduling (sim/engine/gpu_device.hpp).  0 SMs: unknown, every kernel fills the GPU.
  int sm_count = 0;
  double kernel_tile_elements = 128;     // edge of a kernel's output tile: one thread block per tile
  double collective_sm_share = 0;        // SMs a collective kernel needs to launch, as a share
  double collective_bandwidth_drop = 0;  // share of a collective's bandwidth lost beside a GEMM

  // Peak FLOP/s at that precision; std::invalid_argument if the GPU does not support it.
  double peak_flops(Precision p) const;
  // Fraction of peak achieved by a GEMM of shape (m, n, k); all dims must be positive.
  double gemm_efficiency(double m, double n, double k) const;
  // The same model for any kernel, by its arithmetic intensity: d = 3 x FLOPs / (2 x elements
  // moved), which for a GEMM with minimal traffic is the harmonic-mean dimension.
  double intensity_efficiency(double d) const;
  // flops / (peak(p) * gemm_efficiency(m, n, k)).
  double compute_time_s(double flops, double m, double n, double k, Precision p) const;
  // Share of the SMs a kernel writing `output_elements` occupies: one thread block per
  // kernel_tile_elements^2 outputs, capped at 1 (every SM busy); 1 when sm_count is unknown.
  double kernel_sm_share(double output_elements) const;
  // Roofline: max(flops / peak(p), bytes / hbm_Bps), for kernels that are not GEMMs.
  double roofline_time_s(double flops, double bytes, Precision p) const;
  // A duration stretched by interference: time / (1 - share) while `share` of throughput is lost.
  static double slowed_time_s(double time_s, double lost_share) { return time_s / (1.0 - lost_share); }
};

// InputError (naming the profile file and $.kind) unless the profile's kind is "gpu".
GpuSpec gpu_from_profile(const Profile& profile);

}  // namespace luwu::models
