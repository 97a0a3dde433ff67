#pragma once
// ATP: in-network aggregation for multi-tenant learning (Lao et al., NSDI'21), the LuWu paper's
// in-switch aggregation baseline for replicated data parallelism.
#include "sim/systems/in_switch_aggregation.hpp"
#include "sim/systems/parameter_servers.hpp"
#include "sim/systems/system.hpp"

namespace luwu::sim {

struct AtpSettings {
  // Gradient bucket size, as DDP's (PyTorch's bucket_cap_mb default, 25 MB).
  double bucket_bytes = 25e6;
  AggregationSettings aggregation;
  // Share of the gradient's pieces that find a free aggregator in the switch (ATP's best effort:
  // a piece whose aggregator another job holds passes through to its parameter server).  1: the
  // job has the switch to itself, as in the LuWu paper's testbed.
  double switch_aggregator_share = 1;
  // ATP's parameter servers; colocated on the workers by default: the LuWu paper's ATP baseline
  // lists 8 workers and a switch, no extra machines (ATP colocates a PS with each worker).
  ParameterServerSettings servers{ParameterServerSettings::Placement::Colocated, 0};
};

SystemPtr parse_atp(const SystemEntry& entry);

}  // namespace luwu::sim
