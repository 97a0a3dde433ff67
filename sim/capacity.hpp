#pragma once
// Whether the hosts hold what a system keeps off the GPUs: ZeRO-Offload's and ZeRO-Infinity's
// state in worker DRAM or NVMe, LuWu's model on its optimizer node.  GPU memory is checked by the
// memory footprint (workloads/memory_footprint.hpp); this is the host side.
#include <string>

#include "sim/hardware.hpp"
#include "sim/system_settings.hpp"
#include "topologies/topology.hpp"
#include "workloads/trace.hpp"

namespace luwu::sim {

// "" when the configuration can run, else one sentence saying why not.
std::string host_capacity_problem(const workloads::Trace& trace, const topologies::Topology& topology,
                                  const Hardware& hardware, const SystemSettings& system);

}  // namespace luwu::sim
