#pragma once
// Routes in the cluster graph.  A route is the list of links from `from` to `to`, in order.
//
// Metric: hop count (every link one hop).  Among equal-hop routes the choice is deterministic:
// at each step the next vertex with the smallest index is taken, and among parallel links the one
// with the smallest link index.  ecmp_routes() enumerates all minimum-hop routes in that same
// order (so ecmp_routes(...)[0] == shortest_route(...)), stopping at max_paths.
#include <cstddef>
#include <vector>

#include "topologies/topology.hpp"

namespace luwu::topologies {

constexpr std::size_t kUnreachable = static_cast<std::size_t>(-1);

// Hop distance of every vertex to `to` (kUnreachable where there is no path).
std::vector<std::size_t> hop_distances_to(const Topology& topo, Vertex to);

// Throws luwu::InputError if `to` cannot be reached from `from`.  Empty when from == to.
std::vector<Edge> shortest_route(const Topology& topo, Vertex from, Vertex to);
// The same, reusing distances from hop_distances_to(topo, to).
std::vector<Edge> shortest_route(const Topology& topo, Vertex from, Vertex to, const std::vector<std::size_t>& dist_to);

std::vector<std::vector<Edge>> ecmp_routes(const Topology& topo, Vertex from, Vertex to, std::size_t max_paths);

// The vertices a route visits, starting at `from`.
std::vector<Vertex> route_vertices(const Topology& topo, Vertex from, const std::vector<Edge>& route);

}  // namespace luwu::topologies
