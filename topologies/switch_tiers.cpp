#include "topologies/switch_tiers.hpp"

#include <algorithm>

namespace luwu::topologies {

std::vector<int> switch_tiers(const Topology& topo) {
  std::vector<int> tier(topo.vertex_count(), 0);
  std::vector<Vertex> frontier;
  for (Vertex v = 0; v < topo.vertex_count(); ++v) {
    if (!is_network_switch(topo[v].kind)) continue;
    for (auto [it, end] = boost::adjacent_vertices(v, topo.graph); it != end; ++it)
      if (is_nic(topo[*it].kind)) {
        tier[v] = 1;
        frontier.push_back(v);
        break;
      }
  }
  // Breadth-first over switch-to-switch links: a switch's tier is one above its lowest neighbour's.
  for (int t = 2; !frontier.empty(); ++t) {
    std::vector<Vertex> next;
    for (Vertex u : frontier)
      for (auto [it, end] = boost::adjacent_vertices(u, topo.graph); it != end; ++it)
        if (is_network_switch(topo[*it].kind) && tier[*it] == 0) {
          tier[*it] = t;
          next.push_back(*it);
        }
    frontier = std::move(next);
  }
  return tier;
}

std::vector<Vertex> top_tier_switches(const Topology& topo) {
  const auto tier = switch_tiers(topo);
  const int top = tier.empty() ? 0 : *std::max_element(tier.begin(), tier.end());
  std::vector<Vertex> out;
  if (top < 2) return out;
  for (Vertex v = 0; v < topo.vertex_count(); ++v)
    if (tier[v] == top) out.push_back(v);
  return out;
}

}  // namespace luwu::topologies
