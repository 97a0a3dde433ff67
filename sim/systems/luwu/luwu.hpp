#pragma once
// LuWu: model-in-network data parallelism (Sun et al., arXiv 2409.00918).
#include <string>

#include "sim/systems/checkpoint_offload.hpp"
#include "sim/systems/in_switch_aggregation.hpp"
#include "sim/systems/system.hpp"

namespace luwu::sim {

struct LuwuSettings {
  // Layers the optimizer node multicasts ahead of the workers' compute.
  PrefetchSettings prefetch;
  // Gradients cross the switch in pieces of integer elements (in_switch_aggregation.hpp); the
  // parameters are multicast in as many pieces.  4 B elements: the paper does not say otherwise.
  AggregationSettings aggregation;
  CheckpointOffloadSettings checkpoints;
  // Share of the optimizer node's DRAM available to hold fp16 parameters and optimizer state (the
  // rest: OS, buffers).  Project assumption.
  double optimizer_node_dram_share = 0.9;
  // Layers of optimizer state read from SSD into DRAM ahead of their update.
  int state_prefetch_layers = 2;
  // Where the optimizer node runs the update: on its CPU from DRAM, or on a GPU beside it over PCIe
  // (models/gpu_update_engine.hpp); the paper leaves it open.  CPU by default: the update is
  // memory-bound, and the node's DRAM (307 GB/s achieved) outruns one PCIe Gen4 x16 link
  // (28.6 GB/s per direction) for the same bytes.
  enum class UpdateEngine { Cpu, Gpu } update_engine = UpdateEngine::Cpu;
  std::string update_gpu = "a100-40gb-pcie";     // the GPU profile of the "gpu" engine
  std::string update_gpu_pcie = "pcie-gen4-x16";  // and of its PCIe link
};

SystemPtr parse_luwu(const SystemEntry& entry);

}  // namespace luwu::sim
