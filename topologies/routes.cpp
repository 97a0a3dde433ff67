#include "topologies/routes.hpp"

#include <algorithm>
#include <tuple>

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/visitors.hpp>

#include "common/input_error.hpp"

namespace luwu::topologies {

std::vector<std::size_t> hop_distances_to(const Topology& topo, Vertex to) {
  std::vector<std::size_t> dist(topo.vertex_count(), kUnreachable);
  dist[to] = 0;
  boost::breadth_first_search(
      topo.graph, to,
      boost::visitor(boost::make_bfs_visitor(boost::record_distances(dist.data(), boost::on_tree_edge()))));
  return dist;
}

namespace {

// Hop distances to `to`, searching only until `from` is found: at that moment every vertex
// nearer to `to` than `from` already has its final distance, which is all a walk from `from`
// towards `to` looks at (vertices not yet reached stay kUnreachable and are never next hops).
std::vector<std::size_t> distances_until(const Topology& topo, Vertex to, Vertex from) {
  std::vector<std::size_t> dist(topo.vertex_count(), kUnreachable);
  std::vector<Vertex> queue;
  queue.reserve(64);
  queue.push_back(to);
  dist[to] = 0;
  for (std::size_t head = 0; head < queue.size() && dist[from] == kUnreachable; ++head) {
    Vertex u = queue[head];
    for (auto [it, end] = boost::adjacent_vertices(u, topo.graph); it != end; ++it)
      if (dist[*it] == kUnreachable) {
        dist[*it] = dist[u] + 1;
        queue.push_back(*it);
      }
  }
  return dist;
}

// The next hops from u towards the destination, in the deterministic order (vertex, link index).
std::vector<std::pair<Vertex, Edge>> next_hops(const Topology& topo, Vertex u, const std::vector<std::size_t>& dist) {
  std::vector<std::pair<Vertex, Edge>> out;
  for (auto [it, end] = boost::out_edges(u, topo.graph); it != end; ++it) {
    Vertex w = boost::target(*it, topo.graph);
    if (dist[w] != kUnreachable && dist[w] + 1 == dist[u]) out.emplace_back(w, *it);
  }
  std::sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
    return std::make_tuple(a.first, topo.graph[a.second].index) < std::make_tuple(b.first, topo.graph[b.second].index);
  });
  return out;
}

[[noreturn]] void unreachable(const Topology& topo, Vertex from, Vertex to) {
  throw luwu::InputError(topo.source_file, "",
                         "no route from " + topo[from].name + " to " + topo[to].name + " (the graph is not connected)");
}

void enumerate(const Topology& topo, Vertex u, const std::vector<std::size_t>& dist, std::size_t max_paths,
               std::vector<Edge>& prefix, std::vector<std::vector<Edge>>& out) {
  if (dist[u] == 0) {
    out.push_back(prefix);
    return;
  }
  for (const auto& [w, e] : next_hops(topo, u, dist)) {
    if (out.size() >= max_paths) return;
    prefix.push_back(e);
    enumerate(topo, w, dist, max_paths, prefix, out);
    prefix.pop_back();
  }
}

}  // namespace

std::vector<Edge> shortest_route(const Topology& topo, Vertex from, Vertex to, const std::vector<std::size_t>& dist) {
  if (dist[from] == kUnreachable) unreachable(topo, from, to);
  std::vector<Edge> route;
  route.reserve(dist[from]);
  for (Vertex u = from; u != to;) {
    auto hops = next_hops(topo, u, dist);
    route.push_back(hops.front().second);
    u = hops.front().first;
  }
  return route;
}

std::vector<Edge> shortest_route(const Topology& topo, Vertex from, Vertex to) {
  return shortest_route(topo, from, to, distances_until(topo, to, from));
}

std::vector<std::vector<Edge>> ecmp_routes(const Topology& topo, Vertex from, Vertex to, std::size_t max_paths) {
  auto dist = distances_until(topo, to, from);
  if (dist[from] == kUnreachable) unreachable(topo, from, to);
  std::vector<std::vector<Edge>> out;
  std::vector<Edge> prefix;
  if (max_paths > 0) enumerate(topo, from, dist, max_paths, prefix, out);
  return out;
}

std::vector<Vertex> route_vertices(const Topology& topo, Vertex from, const std::vector<Edge>& route) {
  std::vector<Vertex> out{from};
  for (Edge e : route) {
    Vertex a = boost::source(e, topo.graph), b = boost::target(e, topo.graph);
    out.push_back(out.back() == a ? b : a);
  }
  return out;
}

}  // namespace luwu::topologies
