#pragma once
// ZeRO-3 with hierarchical partitioning: the model state partitioned inside each server and
// replicated across servers, the low-bandwidth partitioning of "Scaling Large Language Model
// Training on Frontier with Low-Bandwidth Partitioning" (after ZeRO++'s hpZ and MiCS).
#include "sim/systems/system.hpp"
#include "sim/systems/zero3/zero3.hpp"

namespace luwu::sim {

struct ZeroHierarchicalSettings {
  Zero3Settings zero3;
  // GPUs a partition spans: the high-bandwidth domain, the cluster's GPUs per server (a Frontier
  // node's 8 GCDs, a DGX's 8 GPUs).  The footprint is judged before the cluster is known, so it is
  // a setting, checked against the cluster (any other value does not run).
  int partition_size = 8;
};

SystemPtr parse_zero_hierarchical(const SystemEntry& entry);

}  // namespace luwu::sim
