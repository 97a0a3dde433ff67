#pragma once
// A GraphViz drawing of a topology: node shape by kind, link speed (and kind) on every edge,
// the devices of one server grouped in a box.
#include <string>

#include "topologies/topology.hpp"

namespace luwu::topologies {

std::string to_dot(const Topology& topo);

// "100 Gb/s", "25 GB/s": network links in bits, device links in bytes, as vendors quote them.
std::string link_speed_label(const EdgeProps& link);

}  // namespace luwu::topologies
