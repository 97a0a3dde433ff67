#pragma once
// What `luwusim topo show` prints: vertex counts by kind, link counts by kind and speed, and a
// routes summary (hop counts of the shortest routes between GPUs, to the switch and to the
// optimizer node).
#include <string>

#include "common/json_input.hpp"
#include "topologies/topology.hpp"

namespace luwu::topologies {

// Route statistics sample at most `max_gpu_pairs` GPU pairs (gpu0 to every other GPU first) so a
// 4,096-GPU fat-tree stays quick.
luwu::Json topology_summary(const Topology& topo, std::size_t max_gpu_pairs = 64);
std::string format_summary(const luwu::Json& summary);

}  // namespace luwu::topologies
