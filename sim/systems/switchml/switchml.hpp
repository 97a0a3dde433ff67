#pragma once
// SwitchML-style in-network aggregation data parallelism (Sapio et al., NSDI'21).
#include "sim/systems/in_switch_aggregation.hpp"
#include "sim/systems/system.hpp"

namespace luwu::sim {

struct SwitchMlSettings {
  // Gradient bucket size, as DDP's (PyTorch's bucket_cap_mb default, 25 MB).
  double bucket_bytes = 25e6;
  AggregationSettings aggregation;
};

SystemPtr parse_switchml(const SystemEntry& entry);

}  // namespace luwu::sim
