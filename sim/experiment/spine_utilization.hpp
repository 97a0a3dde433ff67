#pragma once
// Per spine (the fabric's top switch tier, topologies/switch_tiers.hpp): the bytes that went
// through it and its busiest link's utilization over the iteration, from the traffic meter's
// per-link bytes.  Shows how routing spread the traffic between leaves: single-path puts it all on
// one spine, ECMP hashes flows over all of them.
#include <vector>

#include "sim/engine/traffic_meter.hpp"
#include "sim/experiment/result.hpp"
#include "topologies/lowering.hpp"
#include "topologies/topology.hpp"

namespace luwu::sim {

std::vector<SpineUse> spine_use(const topologies::Topology& topo, const topologies::LoweredPlatform& platform,
                                const TrafficMeter& traffic, double iteration_s);

}  // namespace luwu::sim
