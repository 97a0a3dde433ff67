#pragma once
// ZeRO-Infinity (DeepSpeed stage 3 with parameters and optimizer state offloaded).
#include "sim/systems/checkpoint_offload.hpp"
#include "sim/systems/gpu_collective.hpp"
#include "sim/systems/system.hpp"

namespace luwu::sim {

struct ZeroInfinitySettings {
  // Where parameters and optimizer state live (DeepSpeed's offload_param.device /
  // offload_optimizer.device).
  enum class Tier { Nvme, Dram } offload = Tier::Nvme;
  // Optimizer state is streamed through DRAM in sub-groups of this many parameters, read ->
  // update -> write back, double-buffered.  DeepSpeed's sub_group_size default, 1e9; at least 1e5.
  double optimizer_chunk_params = 1e9;
  PrefetchSettings prefetch;
  CheckpointOffloadSettings checkpoints;
  CollectiveSettings collectives;
  CollectiveStreamSettings streams;
};

SystemPtr parse_zero_infinity(const SystemEntry& entry);

}  // namespace luwu::sim
