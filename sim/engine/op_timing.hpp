#pragma once
// How long a trace op takes on a GPU: its FLOPs at the efficiency its representative GEMM shape
// achieves (models/gpu.hpp).  The shape comes with the op (workloads::TraceOp::gemm: tokens x
// hidden by hidden x hidden for a transformer block, tokens x hidden by hidden x vocab for the LM
// head), so timing needs nothing from the training configuration but the precision.
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

// op.flops / (peak(precision) * gemm_efficiency(op.gemm)); 0 for an op without FLOPs.
inline double op_time_s(const workloads::TraceOp& op, const models::GpuSpec& gpu, models::Precision precision) {
  if (op.flops <= 0) return 0;
  return gpu.compute_time_s(op.flops, static_cast<double>(op.gemm.m), static_cast<double>(op.gemm.n),
                            static_cast<double>(op.gemm.k), precision);
}

// The same at the trace's precision (training.dtype); kept for callers that hold a trace.
inline double op_time_s(const workloads::Trace& trace, const workloads::TraceOp& op, const models::GpuSpec& gpu) {
  return op_time_s(op, gpu, precision_of(trace.training.dtype));
}

}  // namespace luwu::sim
