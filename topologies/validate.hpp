#pragma once
// Checks that a topology is usable, naming the file, the JSON path and the offending vertex or
// link in a luwu::InputError:
//  - every link has a positive bandwidth and a non-negative latency;
//  - every network switch has ports and a port speed, no more links than ports, and no link
//    faster than its port speed;
//  - every GPU reaches a network switch (reports the GPU a missing link cut off);
//  - the graph is connected.
#include <string>

#include "topologies/topology.hpp"

namespace luwu::topologies {

void validate_topology(const Topology& topo, const std::string& file);

}  // namespace luwu::topologies
