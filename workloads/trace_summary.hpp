#pragma once
// The headline numbers of a trace, as one flat JSON object (what `luwusim trace show --json`
// prints): counts are integers, FLOPs and bytes are in base units (FLOP, bytes).  params, FLOPs
// and activations are the trace's GPU's (one stage's share under a parallel layout).
#include "workloads/trace.hpp"

namespace luwu::workloads {

inline luwu::Json trace_summary_json(const Trace& t) {
  std::uint64_t grad_bytes = 0;
  for (const auto& op : t.ops) grad_bytes += op.grad_bytes;
  return luwu::Json{{"version", Trace::kVersion},
                    {"model", t.model.name},
                    {"layers", t.model.layers},
                    {"hidden", t.model.hidden},
                    {"heads", t.model.heads},
                    {"kv_heads", t.model.kv_heads},
                    {"vocab", t.model.vocab},
                    {"micro_batch", t.training.micro_batch},
                    {"seq_len", t.training.seq_len},
                    {"grad_accum", t.training.grad_accum},
                    {"recompute", t.training.recompute},
                    {"dtype", to_string(t.training.dtype)},
                    {"memory_efficient_attention", t.training.memory_efficient_attention},
                    {"params", t.total_params()},
                    {"tokens_per_iteration", t.tokens_per_iteration()},
                    {"flops_per_iteration", t.flops_per_iteration()},
                    {"forward_flops", t.flops_of(OpKind::Forward)},
                    {"recompute_flops", t.flops_of(OpKind::Recompute)},
                    {"backward_flops", t.flops_of(OpKind::Backward)},
                    {"param_bytes", t.param_bytes()},
                    {"grad_bytes_per_iteration", grad_bytes},
                    {"peak_activation_bytes", t.peak_activation_bytes()},
                    {"ops", t.ops.size()},
                    {"tensor_parallel", t.layout.tensor},
                    {"pipeline_parallel", t.layout.pipeline},
                    {"data_parallel", t.layout.data},
                    {"sequence_parallel", t.layout.sequence_parallel},
                    {"pipeline_schedule", to_string(t.layout.pipeline_schedule)},
                    {"stage", t.stage},
                    {"tensor_collective_bytes_per_iteration",
                     t.comm_bytes_of(OpKind::TensorAllReduce) + t.comm_bytes_of(OpKind::TensorReduceScatter) +
                         t.comm_bytes_of(OpKind::TensorAllGather)},
                    {"pipeline_send_bytes_per_iteration",
                     t.comm_bytes_of(OpKind::SendActivation) + t.comm_bytes_of(OpKind::SendGradient)}};
}

}  // namespace luwu::workloads
