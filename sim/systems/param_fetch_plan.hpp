#pragma once
// When the systems that keep no full copy of the model on the GPU (ZeRO-3, ZeRO-Infinity) gather
// which parameters, under one of two policies:
//
//  "sub-module" (the default): DeepSpeed's stage-3 parameter coordinator
//    (deepspeed/runtime/zero/partitioned_param_coordinator.py, 0.9-0.16).  Each sub-module's
//    parameters are gathered before the sub-module runs; then, from the recorded order of
//    parameter uses, further ones are prefetched in one coalesced all-gather of at least one
//    parameter and until `prefetch_bucket_size` elements, while fewer than
//    `max_live_parameters` are gathered; after the sub-module they are released unless used again
//    within `max_reuse_distance` elements of later uses (or already prefetched for a later use).
//    Sub-modules under `param_persistence_threshold` elements stay whole on every GPU.  The trace
//    names sub-modules per kernel (workloads/kernels.hpp); an op whose kernels name none is one.
//    luwusim's unit is the sub-module: a bias goes with its matrix, where DeepSpeed, deciding per
//    tensor, would keep a small bias persistent; a tied embedding is two sub-modules (the
//    embedding and the LM head), gathered for each.
//    DeepSpeed hooks every module (parameter_offload.py _register_hooks_recursively), and the hook
//    of one with nothing to gather (the block, the attention and activation modules, a persistent
//    norm) runs the same fetch_sub_module: the compute stream waits for the all-gather stream and
//    the coordinator prefetches (`module_hooks` "all", the default; "with-parameters": hooks only
//    where a sub-module's parameters are gathered).  Such a hook is a use with no gather.
//
//  "layer": one unit per layer, `prefetch_layers` units ahead (PyTorch FSDP wrapping each
//    transformer block, the ZeRO-3 paper's "prefetch layer l+1 while layer l computes"); a block's
//    backward reuses its recompute's gather.
//
// The coordinator decides from the recorded order and counts of elements, never from timing, so
// the plan is made once, before the simulation, and every rank's schedule replays it.  Each
// micro-step's forward and backward is planned afresh, as DeepSpeed resets its queue per step.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/systems/system_entry.hpp"
#include "workloads/trace.hpp"

namespace luwu::sim {

struct ParamFetchSettings {
  enum class Granularity { SubModule, Layer } granularity = Granularity::SubModule;
  enum class ModuleHooks { All, WithParameters } module_hooks = ModuleHooks::All;
  // sub-module: zero_optimization.stage3_* in DeepSpeed's config (defaults from
  // deepspeed/runtime/zero/config.py), in parameters (elements).
  double max_live_parameters = 1e9;
  double prefetch_bucket_size = 5e7;
  double max_reuse_distance = 1e9;
  double param_persistence_threshold = 1e5;
  // Parameters offloaded to NVMe (ZeRO-Infinity, offload_param "nvme"): the parameter swapper's
  // pinned buffers (its buffer_count; 0: not on NVMe).  Each shard holds one from its read until
  // its sub-module is released (partition_parameters.py _partition_param ->
  // remove_partition_and_release_buffers); the coordinator prefetches no all-gather past a shard
  // not yet read (fetch_sub_module: _is_currently_on_nvme) and, after each prefetch, reads shards
  // from the front of its queue while free buffers last, up to twice the elements of the gathers
  // in flight (__prefetch_nvme_param_partitions); a sub-module whose shard is unread when its own
  // use comes is read there, synchronously (_ensure_availability_of_partitioned_params).  Set by
  // the system, not a key of its own.
  int nvme_param_buffers = 0;
  // Sub-modules with fewer parameters are not swapped: their shard is under the swapper's
  // min_aio_bytes and stays in host memory (partitioned_param_swapper.py swappable_tensor).
  std::uint64_t nvme_min_swapped_params = 0;
  // The host thread's own time in DeepSpeed's stage-3 hooks, per module hook (sub-module policy):
  // in forward and recompute the pre- and post-forward hooks (fetch, prefetch, release); in
  // backward the pre- and post-backward hooks and the per-parameter gradient hooks.  Defaults:
  // DeepSpeed 0.9.3's own code timed per OPT decoder layer (11 modules) on the CPU alone, its
  // streams and events no-ops (bench/deepspeed_hook_cost.py, validation/measured/
  // deepspeed-hooks-2026-12-02): 0.82 ms and 2.41 ms per layer, 74.6 us and 219.4 us per module,
  // rounded to 5 us.  Settings "forward_hook_host_time" and "backward_hook_host_time" (0: the
  // hooks take no host time); none with the "layer" policy.  Only the stage-3 systems' schedules
  // charge them (ParamFetchReplay::hook_host_times): LuWu's streaming runs no hooks.
  double forward_hook_host_s = 75e-6;
  double backward_hook_host_s = 220e-6;
  // layer
  int prefetch_layers = 1;

  static std::vector<std::string> keys();
  // Those that apply only with the "sub-module" policy.
  static std::vector<std::string> sub_module_keys();
  // Each policy's keys are accepted only with it ("param_fetch": "sub-module" | "layer").
  static ParamFetchSettings parse(const SystemEntry& entry);
};

// A kernel that needs a sub-module's parameters on the GPU before it runs, or a hook of a module
// with none to gather (gather == kNoGather) before it.
struct ParamUse {
  static constexpr std::size_t kNoGather = static_cast<std::size_t>(-1);
  std::size_t op = 0;
  std::size_t kernel = 0;  // index in the op's kernel list
  std::size_t gather = 0;  // the gather that brings them (index into ParamFetchPlan::gathers)
  bool hook_only() const { return gather == kNoGather; }
};

// One coalesced all-gather.
struct ParamGather {
  std::size_t issued_at = 0;  // issued when use `issued_at` comes, before its kernel runs
  std::size_t first_use = 0;  // the first use it serves (for labels)
  std::uint64_t params = 0;   // elements gathered (the whole parameters, not a shard)
  // With nvme_param_buffers: the use after whose prefetches its shards' read was issued (the
  // latest, where a coalesced gather's shards were read apart), or `issued_at` with `read_on_demand`
  // when a shard was read only when the gather was issued.
  std::size_t read_at = 0;
  bool read_on_demand = false;
  std::uint64_t nvme_params = 0;  // with nvme_param_buffers: of `params`, those whose shards are on NVMe
};

struct ParamFetchPlan {
  std::vector<ParamUse> uses;         // in execution order
  std::vector<ParamGather> gathers;   // in issue order
  std::uint64_t peak_live_params = 0;   // most gathered or in flight at once (persistent ones apart)
  std::uint64_t persistent_params = 0;  // kept whole on every GPU
  int peak_nvme_buffers = 0;            // with nvme_param_buffers: the most held at once
  std::uint64_t largest_partitioned_params = 0;  // the largest sub-module not persistent
};

ParamFetchPlan plan_param_fetches(const workloads::Trace& trace, const ParamFetchSettings& settings);

// GPU bytes of gathered parameters and of the gradients being written.  "layer": the
// (1 + prefetch_layers) largest layers' parameters and gradients (layer_working_set_bytes);
// "sub-module": the plan's peak of live parameters plus the persistent ones, and the largest
// layer's gradient (a layer's backward writes it whole before the reduce-scatter takes it).
std::uint64_t gathered_working_set_bytes(const workloads::Trace& trace, const ParamFetchSettings& settings);

// The name of the kernel use `u` feeds and its op (for timeline labels).
std::string param_use_label(const workloads::Trace& trace, const ParamFetchPlan& plan, std::size_t use);

}  // namespace luwu::sim
