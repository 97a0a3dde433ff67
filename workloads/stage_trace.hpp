#pragma once
// One iteration of one GPU of a tensor x pipeline x data layout (workloads/parallel_layout.hpp):
// the GPU of pipeline stage `stage`, one of its tensor-parallel group's (all of them run the same
// trace), one of `data` replicas (which do not change it).
//
// Layers: the stage's (stage_blocks; the embedding on the first stage, the head on the last),
// each this GPU's share (sharded_layer_info, workloads/layer_accounting.hpp; kernels as
// layer_kernels splits them).  Ops, per the pipeline schedule's order of forward and backward
// passes (workloads/pipeline_schedule.hpp), micro_step = the micro-batch:
//   forward of micro-batch i:  [recv-activation]  for each layer: forward, its tensor collectives
//                              [send-activation]
//   backward of micro-batch i: [recv-gradient]  for each layer in reverse: (recompute, its
//                              collectives,) backward, its collectives  [send-gradient]
// Receives and sends only where there is a neighbour stage (none on stage 0 for activations in
// nor on the last stage for activations out), at the stage's first / last layer.  Interleaved
// (parallel_layout.hpp), the stage's layers are its chunks' in turn and each pass runs one chunk:
// the [recv] and [send] are the chunk's, from and to the previous and next virtual stage (the last
// stage's chunk c sends to the first stage's chunk c + 1), and only the first stage's first chunk
// receives no activation and the last stage's last chunk sends none.  Each pass's
// tensor collectives (workloads/tensor_collectives.hpp) follow its compute op: Megatron-LM runs
// them between the attention and FFN halves and after the FFN, blocking the compute behind them,
// so a simulator that runs this trace's ops in order on one stream has the same critical path.
// Pipeline transfers are micro_batch x seq_len x hidden x dtype bytes per GPU, / tensor with
// sequence parallelism (the stage's output is sequence-sharded: Megatron-LM's get_tensor_shapes,
// megatron/core/pipeline_parallel/schedules.py).  Without sequence parallelism every GPU of the
// group sends the whole activation, or, with scatter_gather_tensors_in_pipeline (Megatron-LM's
// default, Narayanan et al. 2021 section 4.1), 1 / tensor of it, and each receive is followed by
// an all-gather of the whole activation over the tensor group.
//
// Bytes per op as generate_trace (workloads/trace.hpp): compute ops carry param_bytes, activation
// saves and frees (so 1F1B's min(p - s, m) micro-batches in flight on stage s, GPipe's m, are the
// trace's peak) and, on every micro-batch's backward, the layer's (sharded) gradient, as
// generate_trace hands it over on every micro-step: the training system decides which
// micro-batch's gradients it reduces (DDP on the last).  Communication ops carry comm_bytes only.
// Layout 1 x 1 x 1 with the 1F1B schedule gives exactly generate_trace's trace.
#include "workloads/trace.hpp"

namespace luwu::workloads {

// The layers of a stage, each one GPU's share.
std::vector<LayerInfo> stage_layer_infos(const ModelConfig& model, const TrainingConfig& training,
                                         const ParallelLayout& layout, int stage);

// One GPU's share of the activation a stage passes on per micro-batch (sequence-split with
// sequence parallelism), before any scatter over the tensor group.
std::uint64_t pipeline_activation_bytes(const ModelConfig& model, const TrainingConfig& training,
                                        const ParallelLayout& layout);
// Bytes one GPU sends to the next stage per micro-batch (the activation) and to the previous one
// (its gradient): pipeline_activation_bytes, / tensor (rounded up to whole elements) when the
// layout splits pipeline sends.
std::uint64_t pipeline_transfer_bytes(const ModelConfig& model, const TrainingConfig& training,
                                      const ParallelLayout& layout);

// Throws std::invalid_argument as validate_training and validate_layout do, for a stage outside
// [0, pipeline), and for more than kMaxTraceOps ops.
Trace generate_stage_trace(const ModelConfig& model, const TrainingConfig& training, const ParallelLayout& layout,
                           int stage);

}  // namespace luwu::workloads
