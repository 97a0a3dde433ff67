#include "topologies/validate.hpp"

#include <algorithm>
#include <cmath>
#include <deque>

#include <fmt/format.h>

#include "common/input_error.hpp"
#include "common/units.hpp"
#include "topologies/json_format.hpp"

namespace luwu::topologies {

namespace {

// Vertices reachable from any of `sources`.
std::vector<char> reachable_from(const Topology& topo, const std::vector<Vertex>& sources) {
  std::vector<char> seen(topo.vertex_count(), 0);
  std::deque<Vertex> queue(sources.begin(), sources.end());
  for (Vertex s : sources) seen[s] = 1;
  while (!queue.empty()) {
    Vertex u = queue.front();
    queue.pop_front();
    for (auto [it, end] = boost::adjacent_vertices(u, topo.graph); it != end; ++it)
      if (!seen[*it]) seen[*it] = 1, queue.push_back(*it);
  }
  return seen;
}

std::string neighbours(const Topology& topo, Vertex v) {
  std::string out;
  for (auto [it, end] = boost::adjacent_vertices(v, topo.graph); it != end; ++it)
    out += (out.empty() ? "" : ", ") + topo[*it].name;
  return out.empty() ? "nothing" : out;
}

std::string rate(double Bps) { return fmt::format("{:g} Gb/s", Bps * 8 / 1e9); }

}  // namespace

void validate_topology(const Topology& topo, const std::string& given_file) {
  const std::string& file = given_file.empty() ? topo.source_file : given_file;
  if (topo.vertex_count() == 0) throw luwu::InputError(file, "$.vertices", "a topology needs at least one vertex");

  for (Edge e : topo.edges()) {
    const EdgeProps& p = topo[e];
    // Bounds that keep every transfer finite: a link slower than 1 B/s or faster than 10 PB/s, or a
    // latency over 1000 s, is a slip (a unit, an exponent), not a link.
    if (!(p.bandwidth_Bps >= 1 && p.bandwidth_Bps <= 1e16))
      throw luwu::InputError(file, link_json_path(p.index) + ".bandwidth_Bps",
                             "link \"" + p.name + "\" needs a bandwidth between 1 B/s and 10 PB/s");
    if (!(p.latency_s >= 0 && p.latency_s <= 1e3))
      throw luwu::InputError(file, link_json_path(p.index) + ".latency_s",
                             "link \"" + p.name + "\" needs a latency between 0 and 1000 s");
  }

  // A vertex's own rates, where given (0: the default or the profile's): a host slower than
  // 1 MFLOP/s runs kernels so small in the engine's units that they take no time at all (a
  // 1e-300 speed gave 0 s of compute), a disk slower than 1 B/s never finishes.
  for (Vertex v = 0; v < topo.vertex_count(); ++v) {
    const VertexProps& p = topo[v];
    auto bounded = [&](double value, const char* field, double low, double high, const char* range) {
      if (value != 0 && !(value >= low && value <= high))
        throw luwu::InputError(file, vertex_json_path(v) + "." + field,
                               "vertex \"" + p.name + "\" needs " + field + " " + range + " (or none: the default)");
    };
    bounded(p.speed_flops, "speed_flops", 1e6, 1e21, "between 1 MFLOP/s and 1 ZFLOP/s");
    bounded(p.read_Bps, "read_Bps", 1, 1e16, "between 1 B/s and 10 PB/s");
    bounded(p.write_Bps, "write_Bps", 1, 1e16, "between 1 B/s and 10 PB/s");
    bounded(p.read_write_Bps, "read_write_Bps", 1, 1e16, "between 1 B/s and 10 PB/s");
    bounded(p.port_Bps, "port_Bps", 1, 1e16, "between 1 B/s and 10 PB/s");
    bounded(p.capacity_bytes, "capacity_bytes", 1, 1e18, "between 1 B and 1 EB");
  }

  for (Vertex v : topo.network_switches()) {
    const VertexProps& s = topo[v];
    if (s.ports <= 0) throw luwu::InputError(file, vertex_json_path(v) + ".ports", "switch \"" + s.name + "\" needs a port count (ports > 0)");
    if (!(s.port_Bps > 0))
      throw luwu::InputError(file, vertex_json_path(v) + ".port_Bps", "switch \"" + s.name + "\" needs a port speed (port_Bps > 0)");
    // A link to another switch faster than a port is a trunk of several ports bonded (luwu-star's
    // trunks_per_rack): it takes ceil(bandwidth / port speed) ports.  Any other link takes one
    // port and runs at most at the port's speed.
    std::size_t ports_used = 0;
    for (auto [it, end] = boost::out_edges(v, topo.graph); it != end; ++it) {
      const EdgeProps& l = topo[*it];
      const bool trunk = is_network_switch(topo[boost::target(*it, topo.graph)].kind);
      if (trunk) {
        ports_used += static_cast<std::size_t>(std::max(1.0, std::ceil(l.bandwidth_Bps / s.port_Bps * (1 - 1e-9))));
        continue;
      }
      ++ports_used;
      if (l.bandwidth_Bps > s.port_Bps * (1 + 1e-9))
        throw luwu::InputError(file, link_json_path(l.index) + ".bandwidth_Bps",
                               fmt::format("link \"{}\" runs at {} but switch \"{}\" has {} ports", l.name,
                                           rate(l.bandwidth_Bps), s.name, rate(s.port_Bps)));
    }
    if (ports_used > static_cast<std::size_t>(s.ports))
      throw luwu::InputError(file, vertex_json_path(v),
                             fmt::format("switch \"{}\" has {} links{} but only {} ports{}", s.name,
                                         boost::out_degree(v, topo.graph),
                                         ports_used == boost::out_degree(v, topo.graph)
                                             ? ""
                                             : fmt::format(" taking {} ports (trunks of several)", ports_used),
                                         s.ports, s.profile.empty() ? "" : " (profile " + s.profile + ")"));
  }

  auto gpus = topo.gpus();
  if (!gpus.empty()) {
    auto switches = topo.network_switches();
    if (switches.empty())
      throw luwu::InputError(file, "$.vertices", "the topology has GPUs but no network switch (kind \"switch\" or \"programmable-switch\")");
    auto seen = reachable_from(topo, switches);
    for (Vertex g : gpus)
      if (!seen[g])
        throw luwu::InputError(file, vertex_json_path(g),
                               "GPU \"" + topo[g].name + "\" cannot reach any network switch (a link is missing? it is connected to " +
                                   neighbours(topo, g) + ")");
  }

  auto seen = reachable_from(topo, {Vertex{0}});
  for (Vertex v = 0; v < topo.vertex_count(); ++v)
    if (!seen[v])
      throw luwu::InputError(file, vertex_json_path(v),
                             "vertex \"" + topo[v].name + "\" is not connected to \"" + topo[0].name +
                                 "\" (a link is missing? it is connected to " + neighbours(topo, v) + ")");
}

}  // namespace luwu::topologies
