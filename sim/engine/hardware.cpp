#include "sim/engine/hardware.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace luwu::sim {
namespace {

models::HostSpec host_of(const topologies::Topology& topo, const models::ProfileCatalog& catalog,
                         topologies::Vertex host) {
  auto host_profile = catalog.resolve(topo[host].profile);
  auto ssds = topo.ssds_of(host);
  models::HostSpec spec;
  if (ssds.empty()) {
    spec = models::host_from_profiles(host_profile);
  } else {
    auto ssd_profile = catalog.resolve(topo[ssds.front()].profile);
    spec = models::host_from_profiles(host_profile, &ssd_profile, static_cast<int>(ssds.size()));
  }
  // CXL expanders: the memory vertices on the host's memory links other than its DRAM (whose
  // profile is the host's own), all of one profile, striped as one tier.
  const auto dram = topo.memory_of(host);
  std::vector<topologies::Vertex> cxl;
  for (auto [it, end] = boost::out_edges(host, topo.graph); it != end; ++it) {
    const auto w = boost::target(*it, topo.graph);
    if (topo.graph[*it].kind == topologies::LinkKind::Memory && topo[w].kind == topologies::VertexKind::Memory &&
        w != dram && topo[w].profile != topo[host].profile)
      cxl.push_back(w);
  }
  if (!cxl.empty()) {
    std::sort(cxl.begin(), cxl.end());
    for (auto v : cxl)
      if (topo[v].profile != topo[cxl.front()].profile)
        throw std::invalid_argument("luwusim simulates one kind of CXL expander per host: " + topo[v].name + " is \"" +
                                    topo[v].profile + "\" where " + topo[cxl.front()].name + " is \"" +
                                    topo[cxl.front()].profile + "\"");
    const auto profile = catalog.resolve(topo[cxl.front()].profile);
    models::require_kind(profile, {"memory"});
    spec.cxl = models::memory_from_profile(profile).striped(static_cast<int>(cxl.size()));
    spec.cxl_devices = static_cast<int>(cxl.size());
  }
  return spec;
}

// The GPU's share of its PCIe path to `cpu` (Hardware::gpu_host_Bps): walk the PCIe links from the
// GPU to the CPU (breadth first, fewest hops); a link leaving a PCIe switch toward the CPU is
// shared by the GPUs hanging off that switch.
double gpu_host_share_Bps(const topologies::Topology& topo, topologies::Vertex gpu, topologies::Vertex cpu) {
  using topologies::LinkKind;
  using topologies::Vertex;
  using topologies::VertexKind;
  std::map<Vertex, std::pair<Vertex, double>> parent;  // vertex -> (previous, link bandwidth)
  std::vector<Vertex> frontier{gpu};
  parent[gpu] = {gpu, 0};
  while (!frontier.empty() && !parent.count(cpu)) {
    std::vector<Vertex> next;
    for (Vertex u : frontier) {
      if (u != gpu && topo[u].kind != VertexKind::PcieSwitch) continue;  // through switches only
      for (auto [it, end] = boost::out_edges(u, topo.graph); it != end; ++it) {
        const Vertex w = boost::target(*it, topo.graph);
        if (topo.graph[*it].kind != LinkKind::Pcie || parent.count(w)) continue;
        parent[w] = {u, topo.graph[*it].bandwidth_Bps};
        next.push_back(w);
      }
    }
    frontier = std::move(next);
  }
  if (!parent.count(cpu)) return 0;
  double share = std::numeric_limits<double>::infinity();
  for (Vertex v = cpu; v != gpu; v = parent[v].first) {
    const auto [from, bandwidth] = parent[v];
    int gpus_below = 1;
    if (topo[from].kind == VertexKind::PcieSwitch) {
      gpus_below = 0;
      for (auto [it, end] = boost::out_edges(from, topo.graph); it != end; ++it)
        if (topo.graph[*it].kind == LinkKind::Pcie && topo[boost::target(*it, topo.graph)].kind == VertexKind::Gpu)
          ++gpus_below;
      gpus_below = std::max(gpus_below, 1);
    }
    share = std::min(share, bandwidth / gpus_below);
  }
  return share;
}

// The NIC's SmartNIC spec (nullopt for a plain NIC); a builder's line-rate override ("network":
// "200Gb/s") applies to every NIC it built.
std::optional<models::SmartNicSpec> smartnic_of(const topologies::Topology& topo, const models::Profile& profile) {
  if (profile.kind != "smartnic") return std::nullopt;
  models::SmartNicSpec spec = models::smartnic_from_profile(profile);
  if (topo.network_Bps > 0) spec.nic.line_rate_Bps = topo.network_Bps;
  return spec;
}

models::NicSpec nic_of(const topologies::Topology& topo, const models::Profile& profile) {
  if (auto smart = smartnic_of(topo, profile)) return smart->nic;
  models::NicSpec spec = models::nic_from_profile(profile);
  if (topo.network_Bps > 0) spec.line_rate_Bps = topo.network_Bps;
  return spec;
}

// Every vertex in `vertices` must use the first one's profile.
void require_uniform(const topologies::Topology& topo, const std::vector<topologies::Vertex>& vertices,
                     const char* what) {
  if (vertices.empty()) return;
  const auto first = vertices.front();
  for (auto v : vertices)
    if (topo[v].profile != topo[first].profile)
      throw std::invalid_argument("luwusim simulates one kind of " + std::string(what) + " per cluster: " + topo[v].name +
                                  " is \"" + topo[v].profile + "\" where " + topo[first].name + " is \"" +
                                  topo[first].profile + "\"");
}

}  // namespace

Hardware hardware_of(const topologies::Topology& topo) {
  auto gpus = topo.gpus();
  if (gpus.empty()) throw std::invalid_argument("the topology has no GPU");
  const models::ProfileCatalog& catalog = topo.profiles;
  // Linear in the cluster's size (a GPU's own CPU and NIC are found by a search of the graph, too
  // slow to do for every rank of a large cluster): the GPUs, and the worker servers' CPUs.
  require_uniform(topo, gpus, "GPU");
  std::vector<topologies::Vertex> worker_cpus, parameter_servers;
  for (auto cpu : topo.of_kind(topologies::VertexKind::Cpu)) (topo[cpu].server >= 0 ? worker_cpus : parameter_servers).push_back(cpu);
  require_uniform(topo, worker_cpus, "worker host");
  require_uniform(topo, parameter_servers, "parameter server");
  std::map<int, int> per_server;
  for (auto g : gpus) ++per_server[topo[g].server];
  for (const auto& [server, count] : per_server)
    if (count != per_server.begin()->second)
      throw std::invalid_argument("luwusim simulates servers with the same number of GPUs: server " +
                                  std::to_string(server) + " has " + std::to_string(count) + ", server " +
                                  std::to_string(per_server.begin()->first) + " has " +
                                  std::to_string(per_server.begin()->second));
  Hardware hw;
  hw.workers = static_cast<int>(gpus.size());
  hw.gpus_per_server = per_server.at(topo[gpus.front()].server);
  hw.profiles = catalog;
  hw.gpu = models::gpu_from_profile(catalog.resolve(topo[gpus.front()].profile));
  hw.worker_host = host_of(topo, catalog, topo.cpu_of(gpus.front()));
  hw.gpu_host_Bps = gpu_host_share_Bps(topo, gpus.front(), topo.cpu_of(gpus.front()));
  for (auto [it, end] = boost::out_edges(gpus.front(), topo.graph); it != end; ++it) {
    const auto& link = topo.graph[*it];
    if (link.kind == topologies::LinkKind::Nvlink || link.kind == topologies::LinkKind::Nvswitch) {
      hw.nvlink = models::nvlink_from_profile(catalog.resolve(link.profile));
      break;
    }
  }
  if (auto node = topo.optimizer_node()) {
    hw.optimizer_node = host_of(topo, catalog, *node);
    // The node's NICs hang off it over PCIe; the first (by vertex index) stands for all.
    std::optional<topologies::Vertex> node_nic;
    for (auto [it, end] = boost::out_edges(*node, topo.graph); it != end; ++it) {
      const auto w = boost::target(*it, topo.graph);
      if (topo[w].kind == topologies::VertexKind::SmartNic && (!node_nic || w < *node_nic)) node_nic = w;
    }
    if (node_nic) hw.optimizer_smartnic = smartnic_of(topo, catalog.resolve(topo[*node_nic].profile));
  }
  hw.parameter_servers = static_cast<int>(parameter_servers.size());
  if (!parameter_servers.empty()) hw.parameter_server = host_of(topo, catalog, parameter_servers.front());
  auto nic = topo.nic_of(gpus.front());
  const auto nic_profile = catalog.resolve(topo[nic].profile);
  hw.worker_nic = nic_of(topo, nic_profile);
  hw.worker_smartnic = smartnic_of(topo, nic_profile);
  if (auto sw = topo.switch_of(nic)) {
    auto profile = catalog.resolve(topo[*sw].profile);
    if (profile.has("aggregation_slots")) hw.network_switch = models::switch_from_profile(profile);
  }
  return hw;
}

}  // namespace luwu::sim
