#pragma once
// ZeRO-Infinity (DeepSpeed stage 3 with parameters and optimizer state offloaded).
#include <cstdint>

#include "models/storage.hpp"
#include "sim/systems/checkpoint_offload.hpp"
#include "sim/systems/gpu_collective.hpp"
#include "sim/systems/host_state_placement.hpp"
#include "sim/systems/out_of_core_pipeline.hpp"
#include "sim/systems/param_fetch_plan.hpp"
#include "sim/systems/system.hpp"
#include "sim/systems/zero3/zero3.hpp"
#include "workloads/trace.hpp"

namespace luwu::sim {

// DeepSpeed 0.9.3's NVMe swapper: its config keys and defaults (deepspeed/runtime/zero/config.py,
// offload_config.py, swap_tensor/aio_config.py), as a scenario's zero-infinity entry names them.
struct SwapperSettings {
  // zero_optimization.sub_group_size: the optimizer steps over the rank's shard in sub-groups of
  // this many parameters, each swapped in, updated and swapped out.  Default 1e9; at least 1e5
  // here (each sub-group is simulated).  Also accepted as `optimizer_chunk_params`, its old name.
  double sub_group_size = 1e9;
  // aio.block_size and aio.queue_depth: the swapper's requests and how many are in flight, which
  // set the SSDs' achieved rate (models/storage.hpp, Little's law).
  double aio_block_size_bytes = 1048576;
  int aio_queue_depth = 8;
  // offload_optimizer.pipeline_read / pipeline_write: prefetch the next sub-group's state while
  // this one updates / write back asynchronously while the next one goes on.  Both off: a
  // sub-group is read, updated and written back before the next starts (PartitionedOptimizerSwapper).
  bool pipeline_read = false;
  bool pipeline_write = false;
  // Pinned DRAM buffers: offload_optimizer.buffer_count buffers of one fp32 tensor of the largest
  // sub-group each (DeepSpeed's docs: at least the optimizer's states per parameter, 4 for Adam:
  // parameter, gradient, momentum, variance), and offload_param.buffer_count x buffer_size
  // elements of the parameters' dtype for the parameter swapper.
  int optimizer_buffer_count = 4;
  int param_buffer_count = 5;
  double param_buffer_size = 1e8;  // elements
  // param_buffer_size "fit": each buffer one element more than the largest parameter shard, the
  // smallest DeepSpeed accepts (partitioned_param_swapper.py get_buffer asserts numel <
  // buffer_size), what a user sets when the default is too small for the model's largest shard
  // (deepspeedai/DeepSpeed issue 3506).
  bool param_buffer_fits_shard = false;
  // param_buffer_count "fit": the fewest buffers, from DeepSpeed's default 5 up, that are never all
  // held when a shard must be read (what a user sets when swap_in asserts "Not enough buffers",
  // deepspeedai/DeepSpeed issue 3062).
  bool param_buffer_count_fits = false;
  // Where the swap files sit on a worker server's SSDs ("nvme_layout"; DeepSpeed 0.9.3 takes one
  // offload_param.nvme_path and one offload_optimizer.nvme_path and stripes nothing itself):
  // "striped", both on one RAID-0 volume over all the drives, as DeepSpeed's maintainers advise for
  // several drives (deepspeedai/DeepSpeed issue 2195); "split", the parameter swapper's files on
  // the first half of the drives (rounded down) and the optimizer swapper's (state and fp32
  // gradients) on the rest, each path on its own drives.
  enum class NvmeLayout { Striped, Split } nvme_layout = NvmeLayout::Striped;
};

// A worker server's SSDs as the two swappers use them (SwapperSettings::nvme_layout): how many
// drives hold the parameter swapper's files and how many the optimizer swapper's (both all of
// them when striped).  Split needs at least 2 drives: {0, 0} below that.
struct SwapDriveCounts {
  int params = 0;
  int optimizer = 0;
};
SwapDriveCounts swap_drive_counts(SwapperSettings::NvmeLayout layout, int drives);

struct ZeroInfinitySettings {
  // Where parameters and optimizer state live (DeepSpeed's offload_param.device /
  // offload_optimizer.device).
  enum class Tier { Nvme, Dram } offload = Tier::Nvme;
  SwapperSettings swapper;
  // DeepSpeed stage 3's own: the parameter coordinator, the collectives and their streams, the
  // passes over the gradients (the same settings as zero3's).
  Zero3Settings stage3;
  CheckpointOffloadSettings checkpoints;
  // How backward's reduced gradient shards reach the host ("gradient_copies"): "blocking", as
  // DeepSpeed 0.9.3 does with the optimizer offloaded (stage3.py partition_grads copies each shard
  // into a pinned host buffer with a synchronous copy_: the fp32 buffer with offload "dram", the
  // gradient swapper's buffer via .float() with "nvme", swap_tensor/utils.py insert_tensor), so the
  // host thread, which launches the backward's kernels and the next gathers, waits for the
  // reduce-scatter and the copy and the GPU computes nothing meanwhile; or "async", on their own
  // stream while backward goes on.  Either way the 16-bit shard first goes to the host's
  // grad_partitions_flat_buffer and back to the GPU on the same stream (non_blocking copies), in
  // every micro-step; the fp32 copy, and so the host's wait, comes at the accumulation boundary only
  // (partition_grads: is_gradient_accumulation_boundary).
  bool blocking_gradient_copies = true;
  // How a gather's parameter shard reaches the GPU ("shard_copies"): "blocking", as DeepSpeed
  // 0.9.3 does with offloaded parameters (partition_parameters.py all_gather_coalesced: the shard
  // goes to the GPU with a synchronous .to() on the all-gather stream, after the gathers issued
  // before it, and only then is its all-gather launched), so a shard's copy starts when the
  // previous all-gather is done and the host thread launches nothing until the copy is; or
  // "async", copied ahead on its own stream.
  bool blocking_shard_copies = true;
  // With offload "dram", where the optimizer state lives on a server with CXL memory
  // (host_state_placement.hpp); with "nvme" it is on the SSDs and this must stay the default.
  StatePlacementSettings placement;
};

// The swapper's order (out_of_core_pipeline.hpp): pipeline_read -> read one sub-group ahead;
// pipeline_write -> one write-back in flight while the next sub-group goes on, else the swapper
// waits for each; DeepSpeed keeps one write in flight at a time either way.  Both off: {0, 1, true},
// strictly serial.  The rate caps are the SSD array's at aio_block_size x aio_queue_depth.
OutOfCorePolicy swapper_policy(const SwapperSettings& settings, const models::SsdArray& ssds);

// The stage-3 plan's settings with offload "nvme": the swapper's param_buffer_count buffers (with
// "fit", resolved) and
// the sub-modules too small to swap (ParamFetchSettings::nvme_param_buffers, nvme_min_swapped_params).
ParamFetchSettings swapper_fetch_settings(const ZeroInfinitySettings& settings, const workloads::Trace& trace, int workers);

// The parameter swapper's buffer, in elements: param_buffer_size, or with "fit" the largest
// parameter shard + 1.
std::uint64_t param_buffer_elements(const ZeroInfinitySettings& settings, const workloads::Trace& trace, int workers);
// The largest shard of a sub-module's parameters the swapper holds (persistent ones stay on the GPU).
std::uint64_t largest_param_shard(const ZeroInfinitySettings& settings, const workloads::Trace& trace, int workers);

// Pinned host bytes of one rank's swappers with offload "nvme" (0 with "dram": no swapper):
// optimizer_buffer_count x min(sub_group_size, the rank's shard) x 4 B
// + param_buffer_count (resolved) x param_buffer_elements x the parameters' bytes per element.
std::uint64_t pinned_buffer_bytes(const ZeroInfinitySettings& settings, const workloads::Trace& trace, int workers);

// One rank's gradient buffers in host DRAM, with the optimizer offloaded to either tier (DeepSpeed
// 0.9.3 stage3.py, __init__ and initialize_optimizer_states): every parameter's gradient partition
// at the training dtype (grad_partitions_flat_buffer: the shard x 2 B in bf16), and the fp32
// gradients the step reads: with offload "nvme" one buffer of the largest sub-group that the
// swapped sub-groups share (gradient_buffer), with "dram" each sub-group's own (the shard x 4 B).
std::uint64_t host_gradient_bytes(const ZeroInfinitySettings& settings, const workloads::Trace& trace, int workers);

SystemPtr parse_zero_infinity(const SystemEntry& entry);

}  // namespace luwu::sim
