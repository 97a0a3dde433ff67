#include "sim/experiment/spine_utilization.hpp"

#include <algorithm>

#include "topologies/switch_tiers.hpp"

namespace luwu::sim {

std::vector<SpineUse> spine_use(const topologies::Topology& topo, const topologies::LoweredPlatform& platform,
                                const TrafficMeter& traffic, double iteration_s) {
  std::vector<SpineUse> out;
  for (auto spine : topologies::top_tier_switches(topo)) {
    SpineUse use{topo[spine].name};
    for (auto [it, end] = boost::out_edges(spine, topo.graph); it != end; ++it) {
      const auto other = boost::target(*it, topo.graph);
      const double capacity = topo[*it].bandwidth_Bps * iteration_s;
      const double in = traffic.bytes_on(platform.directed_link(topo, *it, other));
      const double leaving = traffic.bytes_on(platform.directed_link(topo, *it, spine));
      use.bytes += in;
      if (capacity > 0) use.busiest_link_utilization = std::max({use.busiest_link_utilization, in / capacity, leaving / capacity});
    }
    out.push_back(use);
  }
  return out;
}

}  // namespace luwu::sim
