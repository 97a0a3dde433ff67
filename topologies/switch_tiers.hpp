#pragma once
// Tiers of a network's switches, counted up from the hosts: a switch cabled to a NIC is tier 1 (a
// leaf, or a star's only switch); a switch one switch-to-switch hop above tier n and none lower is
// tier n + 1 (a 2-tier fat-tree's spines are tier 2; a 3-tier one's aggregation switches 2, its
// cores 3).  From the graph alone, so hand-written topologies get tiers too.
#include <vector>

#include "topologies/topology.hpp"

namespace luwu::topologies {

// By vertex: the switch's tier, 0 for a vertex that is no network switch or reaches no NIC over
// switches.
std::vector<int> switch_tiers(const Topology& topo);

// The switches of the highest tier when it is above 1 (a fat-tree's spines, or cores), in vertex
// order; empty for a network of one tier.
std::vector<Vertex> top_tier_switches(const Topology& topo);

}  // namespace luwu::topologies
