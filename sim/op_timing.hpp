#pragma once
// How long a trace op takes on a GPU: its FLOPs at the efficiency its GEMM shape achieves
// (models/gpu.hpp).  The representative GEMM of a layer: tokens x hidden by hidden x hidden for a
// transformer block, tokens x hidden by hidden x vocab for the LM head.
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

inline double op_time_s(const workloads::Trace& trace, const workloads::TraceOp& op, const models::GpuSpec& gpu) {
  if (op.flops <= 0) return 0;
  const auto& layer = trace.layers.at(static_cast<std::size_t>(op.layer));
  const double tokens = static_cast<double>(trace.training.micro_batch) * trace.training.seq_len;
  const double hidden = trace.model.hidden;
  const double n = layer.kind == workloads::LayerKind::Head ? trace.model.vocab : hidden;
  return gpu.compute_time_s(op.flops, tokens, n, hidden, precision_of(trace.training.dtype));
}

}  // namespace luwu::sim
