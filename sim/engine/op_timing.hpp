#pragma once
// How long an op's kernels take on a GPU, each undisturbed (models/gpu.hpp):
//   GEMM         GpuSpec::gemm_time_s: the measured matmul ceiling or the HBM roofline, whichever
//                binds, over the last wave's idle SMs (batched GEMMs count every GEMM's tiles)
//   attention    fused: GpuSpec::matrix_kernel_time_s (the same roofline, no waves); unfused
//                attention is GEMMs and elementwise kernels (workloads/kernels.hpp)
//   elementwise  the roofline: bytes / (hbm_bandwidth x hbm_efficiency), a row reduction's bytes
//                (norms, softmax) at row_reduction_hbm_efficiency (no FLOPs counted)
//   measured     a kernel with Kernel::measured_s (from a profile) takes that long, on any GPU
// and how much of the GPU each occupies (GpuSpec::kernel_sm_share).
#include <string>
#include <vector>

#include "models/gpu.hpp"
#include "workloads/trace.hpp"

namespace luwu::sim {

inline models::Precision precision_of(workloads::DType t) {
  switch (t) {
    case workloads::DType::Fp16: return models::Precision::Fp16;
    case workloads::DType::Bf16: return models::Precision::Bf16;
    case workloads::DType::Fp32: return models::Precision::Fp32;
  }
  return models::Precision::Fp16;
}

struct KernelRun {
  const workloads::Kernel* kernel = nullptr;
  double seconds = 0;   // undisturbed
  double sm_share = 1;  // of the GPU's SMs it occupies
  bool is_gemm = false; // a matrix kernel (GEMM or attention): what cuts a collective's bandwidth beside it
};

inline KernelRun kernel_run(const workloads::Kernel& k, const models::GpuSpec& gpu, workloads::DType dtype) {
  const models::Precision p = precision_of(dtype);
  KernelRun run{&k, 0, gpu.kernel_sm_share(k.output_elements), k.kind != workloads::KernelKind::Elementwise};
  if (k.measured_s > 0) {  // a measured kernel keeps its time (workloads/kernel_times.hpp)
    run.seconds = k.measured_s;
    return run;
  }
  switch (k.kind) {
    case workloads::KernelKind::Gemm:
      if (k.flops > 0) {
        // The shape's rate applied to the kernel's FLOPs (a trace file may count them differently).
        const double m = static_cast<double>(k.gemm.m), n = static_cast<double>(k.gemm.n),
                     kk = static_cast<double>(k.gemm.k), batch = static_cast<double>(k.gemm.batch);
        run.seconds = gpu.gemm_time_s(m, n, kk, p, batch) * k.flops / (2 * batch * m * n * kk);
      }
      break;
    case workloads::KernelKind::Attention:
      if (k.flops > 0) run.seconds = gpu.matrix_kernel_time_s(k.flops, k.bytes, p);
      break;
    case workloads::KernelKind::Elementwise:
      run.seconds = gpu.elementwise_time_s(k.flops, k.bytes, k.reduction_bytes, k.broadcast_bytes, p);
      break;
  }
  return run;
}

// The op's kernels, timed, in launch order.
inline std::vector<KernelRun> kernel_runs(const workloads::Trace& trace, const workloads::TraceOp& op,
                                          const models::GpuSpec& gpu) {
  std::vector<KernelRun> runs;
  for (const auto& k : trace.kernels_of(op)) runs.push_back(kernel_run(k, gpu, trace.training.dtype));
  return runs;
}

// The sum of its kernels' undisturbed times.
inline double op_time_s(const workloads::Trace& trace, const workloads::TraceOp& op, const models::GpuSpec& gpu) {
  double sum = 0;
  for (const auto& run : kernel_runs(trace, op, gpu)) sum += run.seconds;
  return sum;
}

}  // namespace luwu::sim
