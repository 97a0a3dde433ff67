#pragma once
#include <string>
#include <vector>

// ZeRO-Offload (Ren et al., arXiv 2101.06840).
#include "sim/systems/checkpoint_offload.hpp"
#include "sim/systems/gpu_collective.hpp"
#include "sim/systems/host_state_placement.hpp"
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
  // How the last micro-step's gradients are checked for overflow ("overflow_check"): "blocking",
  // as DeepSpeed 0.9.3 does with the optimizer offloaded (stage_1_and_2.py copy_grads_in_partition
  // -> update_overflow_tracker_for_param_grad -> _has_inf_or_nan: float(x.float().sum()) for each
  // gradient of the rank's partition, in the backward hook), so the host thread that launches
  // backward's kernels waits for the bucket's reduction and the GPU computes nothing meanwhile; or
  // "async", no host wait.  Every rank waits for every bucket: a bucket that holds none of a rank's
  // partition holds another's, whose wait reaches this rank through the next reduction.
  bool blocking_overflow_check = true;
  // How a full bucket is reduced ("gradient_reduction"): "reduce", as DeepSpeed 0.9.3 does with
  // its default reduce_scatter true (stage_1_and_2.py average_tensor: one NCCL Reduce of each
  // partition's slice of the bucket to its owner, back to back on one communicator: the buffer's
  // time on the link where a reduce-scatter takes (N-1)/N of it, ring_reduce_to_owners);
  // "all-reduce", DeepSpeed's reduce_scatter false (gradient_reduction_w_predivide: the bucket
  // all-reduced, each rank keeping its partition's slice); "reduce-scatter", one NCCL
  // reduce-scatter of the bucket (luwusim's model before; what later frameworks issue).
  CollectiveOp gradient_reduction = CollectiveOp::ReduceToOwners;
  CheckpointOffloadSettings checkpoints;
  CollectiveSettings collectives;
  // Where the optimizer state lives on a server with CXL memory (host_state_placement.hpp).
  StatePlacementSettings placement;

  // Its settings' keys, and the parse, for a system that builds on ZeRO-Offload (Deep Optimizer
  // States): everything but delayed_param_update when `with_delayed_update` is false.
  static std::vector<std::string> keys(bool with_delayed_update = true);
  static ZeroOffloadSettings parse(const SystemEntry& entry, bool with_delayed_update = true);
};

// Host bytes per server (the rank's shards of its GPUs), ZeRO-Offload's: the optimizer state the
// CPU step streams (the part state_placement places), and the rest the DRAM holds (gradient
// partitions, accumulated sums, the 16-bit shard it sends back, offloaded activation checkpoints).
struct OffloadHostBytes {
  double state = 0;
  double other = 0;
};
OffloadHostBytes zero_offload_host_bytes(const ZeroOffloadSettings& s, const workloads::Trace& trace,
                                         const Hardware& hw);
// ZeRO-Offload's GPU footprint and host bytes per worker (its System::memory_footprint).
MemoryFootprint zero_offload_footprint(const ZeroOffloadSettings& s, const workloads::Trace& trace, int workers,
                                       double gpu_memory, const std::string& system_name);

SystemPtr parse_zero_offload(const SystemEntry& entry);

}  // namespace luwu::sim
