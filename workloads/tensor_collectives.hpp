#pragma once
// The collectives one GPU of a tensor-parallel group issues in one pass of a layer (Megatron-LM's
// f and g operators, Shoeybi et al. 2019, arXiv 1909.08053, figure 3; with sequence parallelism
// Korthikanti et al. 2022, arXiv 2205.05198, figure 6 and section 4.2.2), in the order they run.
// B = micro_batch x seq_len x hidden x dtype bytes, the whole activation: every collective here is
// of B (an all-gather's output, a reduce-scatter's input) except the cross entropy's.
//   block forward, and again in its recompute:
//     all-reduce B after attention-out, all-reduce B after FFN down;
//     sequence parallel: all-gather B before QKV, reduce-scatter B after attention-out,
//     all-gather B before FFN up, reduce-scatter B after FFN down
//   block backward: all-reduce B of the input gradient of FFN up, then of QKV;
//     sequence parallel: all-gather B of FFN down's output gradient; all-gather B of FFN up's input
//     again (kept sequence-sharded, gathered for the weight gradient) and reduce-scatter B of its
//     input gradient; the same for attention-out and QKV: 4 all-gathers and 2 reduce-scatters
//     (Megatron-LM, megatron/core/tensor_parallel/layers.py, LinearWithGradAccumulationAndAsync-
//     Communication.backward)
//   embedding (vocab-parallel): forward all-reduce B of the partial lookups (sequence parallel:
//     reduce-scatter B); backward none (sequence parallel: all-gather B of its output gradient)
//   head (vocab-parallel LM head and cross entropy): forward (sequence parallel: all-gather B of
//     the LM head's input, then) 3 all-reduces of micro_batch x seq_len fp32 values, 4 bytes each
//     (the logits' maximum, the target's logit and the sum of exponentials, Megatron-LM's
//     _VocabParallelCrossEntropy); backward all-reduce B of the LM head's input gradient
//     (sequence parallel: all-gather B of its input, reduce-scatter B of the gradient)
// With tensor 1 there are none.
// Expert parallelism (parallel_layout.hpp's `expert` > 1), a block with experts, every pass (forward,
// recompute, backward): 2 all-to-alls over the expert-parallel group of E x expert_rows x h x dtype
// bytes each (the dispatch of this GPU's tokens to every expert and the combine back; backward their
// gradients), after the tensor collectives.  Listed after the block's op, not between its kernels:
// both block the compute stream, so the pass takes the same time; what moves is only the instant a
// gradient bucket issued after the op overlaps (docs/traces.md).  Not issued here: the all-reduce of the sequence-parallel norms'
// gradients and the tied embedding's first-to-last-stage gradient all-reduce, once per iteration
// each, which belong to the gradient reduction the training system models.
#include <cstdint>
#include <vector>

#include "workloads/kernels.hpp"
#include "workloads/layer_accounting.hpp"
#include "workloads/tensor_sharding.hpp"

namespace luwu::workloads {

struct TensorCollective {
  OpKind kind = OpKind::TensorAllReduce;
  std::uint64_t bytes = 0;

  bool operator==(const TensorCollective&) const = default;
};

// `pass`: Forward, Recompute or Backward.
std::vector<TensorCollective> tensor_collectives(const ModelConfig& model, const TrainingConfig& training,
                                                 const TensorSharding& sharding, LayerKind layer, OpKind pass);

}  // namespace luwu::workloads
