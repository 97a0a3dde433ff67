#pragma once
// ZeRO-Offload (Ren et al., arXiv 2101.06840).
#include "sim/systems/checkpoint_offload.hpp"
#include "sim/systems/system.hpp"

namespace luwu::sim {

struct ZeroOffloadSettings {
  // Gradients are reduce-scattered in buckets of this many bytes.  DeepSpeed's reduce_bucket_size
  // default, 5e8 elements = 1e9 bytes at 16 bits.
  double reduce_bucket_bytes = 1e9;
  // The paper's one-step delayed parameter update (DPU): the CPU step, the copy back and the
  // all-gather of the previous step run under this step's forward and backward.  Off by default:
  // the paper enables it only after the first few steps, as an option.
  bool delayed_param_update = false;
  // The last micro-step's gradient shard is converted to fp32 on the GPU and copied into the CPU
  // optimizer's fp32 gradient partition (DeepSpeed's default: stage_1_and_2.py,
  // async_inplace_copy_grad_to_fp32_buffer_from_gpu), 4 B/param over PCIe; false copies it in the
  // training dtype (the paper's 2 B/param; DeepSpeed's fp16_master_weights_and_gradients).
  bool fp32_gradient_copy = true;
  CheckpointOffloadSettings checkpoints;
  CollectiveSettings collectives;
};

SystemPtr parse_zero_offload(const SystemEntry& entry);

}  // namespace luwu::sim
