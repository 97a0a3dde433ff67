#pragma once
// The hardware a simulation runs on, as typed specs resolved from the topology's profiles (and a
// scenario's overrides).  The topology carries link bandwidths and latencies already; this holds
// what is not a link: the GPU's compute model and its interference.
#include <stdexcept>

#include "models/gpu.hpp"
#include "topologies/topology.hpp"

namespace luwu::sim {

struct Hardware {
  models::GpuSpec gpu;
};

// The GPU profile of the topology's first GPU (luwusim assumes one GPU type per cluster).
inline Hardware hardware_of(const topologies::Topology& topology) {
  auto gpus = topology.gpus();
  if (gpus.empty()) throw std::invalid_argument("the topology has no GPU");
  return Hardware{models::gpu_from_profile(models::find_profile(topology[gpus.front()].profile))};
}

}  // namespace luwu::sim
