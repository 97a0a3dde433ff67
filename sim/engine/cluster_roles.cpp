#include "sim/engine/cluster_roles.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

namespace luwu::sim {
namespace {

std::vector<simgrid::s4u::Disk*> disks_of(const topologies::Topology& topo, const topologies::LoweredPlatform& platform,
                                          topologies::Vertex owner) {
  std::vector<simgrid::s4u::Disk*> disks;
  for (auto ssd : topo.ssds_of(owner)) disks.push_back(platform.disks.at(topo[ssd].name));
  return disks;
}

// The switch the NICs of a host (cabled to it directly) reach, if any.
std::optional<topologies::Vertex> switch_of_host(const topologies::Topology& topo, topologies::Vertex host) {
  for (auto kind : {topologies::VertexKind::Nic, topologies::VertexKind::SmartNic})
    for (auto nic : topo.of_kind(kind))
      if (boost::edge(nic, host, topo.graph).second) return topo.switch_of(nic);
  return std::nullopt;
}

}  // namespace

std::vector<simgrid::s4u::Host*> ClusterRoles::gpu_hosts() const {
  std::vector<simgrid::s4u::Host*> hosts;
  for (const auto& r : ranks) hosts.push_back(r.gpu);
  return hosts;
}

std::vector<int> ClusterRoles::servers() const {
  std::vector<int> s;
  for (const auto& r : ranks) s.push_back(r.server);
  return s;
}

ClusterRoles roles_of(const topologies::Topology& topo, const topologies::LoweredPlatform& platform) {
  ClusterRoles roles;
  for (auto gpu : topo.gpus()) {
    RankHosts r;
    r.gpu = platform.host_of_vertex.at(gpu);
    auto cpu = topo.cpu_of(gpu);
    r.cpu = platform.host_of_vertex.at(cpu);
    r.nic = platform.host_of_vertex.at(topo.nic_of(gpu));
    r.nvme = disks_of(topo, platform, cpu);
    r.server = topo[gpu].server;
    roles.ranks.push_back(r);
  }
  if (!roles.ranks.empty())
    if (auto sw = topo.switch_of(topo.nic_of(topo.gpus().front())))
      roles.network_switch = platform.host_of_vertex.at(*sw);
  for (auto node : topo.optimizer_nodes()) {
    roles.optimizer_nodes.push_back(platform.host_of_vertex.at(node));
    roles.optimizer_node_ssds.push_back(disks_of(topo, platform, node));
  }
  if (auto node = topo.optimizer_node()) {
    roles.optimizer_node = roles.optimizer_nodes.front();
    roles.optimizer_ssds = roles.optimizer_node_ssds.front();
    // The node's switch is the cluster's top; ranks cabled elsewhere are in racks below it.
    const auto top = switch_of_host(topo, *node);
    if (top && roles.network_switch != platform.host_of_vertex.at(*top)) {
      roles.network_switch = platform.host_of_vertex.at(*top);
      const auto gpus = topo.gpus();
      std::vector<topologies::Vertex> tors;
      for (std::size_t r = 0; r < gpus.size(); ++r) {
        const auto tor_vertex = *topo.switch_of(topo.nic_of(gpus[r]));
        auto* tor = platform.host_of_vertex.at(tor_vertex);
        auto at = std::find(roles.rack_switches.begin(), roles.rack_switches.end(), tor);
        roles.ranks[r].rack = static_cast<int>(at - roles.rack_switches.begin());
        if (at == roles.rack_switches.end()) {
          roles.rack_switches.push_back(tor);
          tors.push_back(tor_vertex);
        }
      }
      // Pods: a rack switch's uplink to a switch other than the cluster switch.
      std::vector<int> pod_of_rack;
      for (auto tor : tors) {
        int pod = -1;
        for (auto [it, end] = boost::out_edges(tor, topo.graph); it != end; ++it) {
          const auto up = boost::target(*it, topo.graph);
          if (up == *top || !topologies::is_network_switch(topo[up].kind)) continue;
          auto* host = platform.host_of_vertex.at(up);
          auto at = std::find(roles.pod_switches.begin(), roles.pod_switches.end(), host);
          pod = static_cast<int>(at - roles.pod_switches.begin());
          if (at == roles.pod_switches.end()) roles.pod_switches.push_back(host);
          break;
        }
        pod_of_rack.push_back(pod);
      }
      if (!roles.pod_switches.empty()) {
        if (std::find(pod_of_rack.begin(), pod_of_rack.end(), -1) != pod_of_rack.end())
          throw std::invalid_argument("some rack switches hang under pod switches and some under the cluster switch");
        roles.pod_of_rack = std::move(pod_of_rack);
      }
    }
  }
  for (auto cpu : topo.of_kind(topologies::VertexKind::Cpu))
    if (topo[cpu].server < 0) roles.parameter_servers.push_back(platform.host_of_vertex.at(cpu));
  return roles;
}

}  // namespace luwu::sim
