#pragma once
// A GPU as a few numbers: peak FLOP/s per precision, HBM capacity and bandwidth, the matrix rate
// it achieves, and how much compute throughput is lost while other work uses the GPU (a
// GPU-executed collective kernel, or a SmartNIC writing into HBM by DMA).
//
// A GEMM (C[m x n] = A[m x k] B[k x n], `batch` of them in one kernel) follows NVIDIA's
// "Matrix Multiplication Background" guide (DU-09799-001, chapters 2 and 3):
//   time = max(F / (peak x gemm_efficiency_max), B / (hbm_bandwidth x hbm_efficiency)) / waves
//   F = 2 batch m n k,  B = batch (m k + k n + m n) x element bytes (each operand moved once),
//   waves = tiles / (ceil(tiles / sm_count) x sm_count),  tiles = batch ceil(m / T) ceil(n / T)
//   (waves = 1 where gemm_wave_quantization is false: Hopper's measured sweep shows no such loss)
// Math- or memory-limited by its arithmetic intensity against the GPU's ops:byte ratio (the
// overlapped roofline: a tiled GEMM streams its operands while the tensor cores work), and the
// last wave of thread blocks leaves SMs idle (wave quantization; T = kernel_tile, the output tile
// of one thread block).  gemm_efficiency_max is the measured rate of large GEMMs run back to back
// on random data (a shape sweep's median, or one large shape), over peak and that shape's wave
// factor: what a training step's GEMMs reach with the card at its power limit, not the best shape
// of a scan on a cold card (MAMF's maximum, 10-16% above it on the H100 measured here).
// Kernels that are not GEMMs stream HBM at hbm_efficiency of its bandwidth (a measured share: no
// kernel reaches the datasheet rate); the bytes a row reduction moves (layer norm, the softmax
// over attention scores) go at row_reduction_hbm_efficiency, about half on the H100 measured; the
// bytes of an elementwise kernel with a broadcast operand (an attention mask over every head, a
// 0-dim tensor), which PyTorch's TensorIterator runs in its non-vectorized kernel, at
// broadcast_hbm_efficiency (0.41 of the datasheet on the H100 measured, 0.31 on the H200).
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
  double gemm_efficiency_max = 0;        // measured rate of large GEMMs / peak, at full waves
  bool gemm_wave_quantization = true;    // the last wave's idle SMs cost time (false: a measured sweep shows no loss)
  double hbm_efficiency = 1;             // share of hbm_Bps a streaming kernel achieves
  double row_reduction_hbm_efficiency = 1;  // share a row reduction achieves (norms, softmax)
  double broadcast_hbm_efficiency = 1;      // share a non-vectorized kernel (a broadcast operand) achieves
  double collective_interference = 0;    // fraction of compute throughput lost while a collective kernel runs
  double dma_interference = 0;           // fraction lost while a NIC DMA-writes into HBM
  // Kernel-level scheduling (sim/engine/gpu_device.hpp).  0 SMs: unknown, every kernel fills the GPU.
  int sm_count = 0;
  double kernel_tile_elements = 128;     // edge of a kernel's output tile: one thread block per tile (and GEMM waves)
  double collective_sm_share = 0;        // SMs a collective kernel needs to launch, as a share
  double collective_bandwidth_drop = 0;  // share of a collective's bandwidth lost beside a GEMM

  // Peak FLOP/s at that precision; std::invalid_argument if the GPU does not support it.
  double peak_flops(Precision p) const;
  // HBM bytes/s a streaming kernel achieves: hbm_Bps x hbm_efficiency.
  double achieved_hbm_Bps() const { return hbm_Bps * hbm_efficiency; }
  // Share of the SMs' last wave that is busy: tiles / (ceil(tiles / sm_count) x sm_count); 1 when
  // sm_count is unknown.  `tiles` must be positive.
  double wave_efficiency(double tiles) const;
  // The thread blocks of `batch` GEMMs writing m x n: batch ceil(m / T) ceil(n / T).
  double gemm_tiles(double m, double n, double batch = 1) const;
  // The HBM term alone: each operand moved once, batch (m k + k n + m n) elements at achieved_hbm_Bps().
  double gemm_hbm_time_s(double m, double n, double k, Precision p, double batch = 1) const;
  // The GEMM model above: `batch` GEMMs of (m, n, k) at precision p; all dims must be positive.
  double gemm_time_s(double m, double n, double k, Precision p, double batch = 1) const;
  // Its FLOPs over peak x time: the fraction of peak the GEMM achieves.
  double gemm_efficiency(double m, double n, double k, Precision p = Precision::Fp16, double batch = 1) const;
  // A matrix kernel that is not one GEMM (fused attention): the same roofline without waves,
  // max(flops / (peak x gemm_efficiency_max), bytes / achieved_hbm_Bps()).
  double matrix_kernel_time_s(double flops, double bytes, Precision p) const;
  // Share of the SMs a kernel writing `output_elements` occupies: one thread block per
  // kernel_tile_elements^2 outputs, capped at 1 (every SM busy); 1 when sm_count is unknown.
  double kernel_sm_share(double output_elements) const;
  // Roofline for kernels that are not matrix multiplies: max(flops / peak(p), bytes / achieved_hbm_Bps()).
  double roofline_time_s(double flops, double bytes, Precision p) const;
  // An elementwise kernel of which `reduction_bytes` (of `bytes`) are a row reduction's and
  // `broadcast_bytes` a non-vectorized kernel's: max(flops / peak(p), (bytes - reduction_bytes -
  // broadcast_bytes) / achieved_hbm_Bps() + reduction_bytes / (hbm_Bps x
  // row_reduction_hbm_efficiency) + broadcast_bytes / (hbm_Bps x broadcast_hbm_efficiency)).
  double elementwise_time_s(double flops, double bytes, double reduction_bytes, double broadcast_bytes,
                            Precision p) const;
  // A duration stretched by interference: time / (1 - share) while `share` of throughput is lost.
  static double slowed_time_s(double time_s, double lost_share) { return time_s / (1.0 - lost_share); }
};

// InputError (naming the profile file and $.kind) unless the profile's kind is "gpu".
GpuSpec gpu_from_profile(const Profile& profile);

}  // namespace luwu::models
