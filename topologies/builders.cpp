#include "topologies/builders.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "topologies/builder_parts.hpp"

namespace luwu::topologies {

using namespace parts;

namespace {
void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}
void require_gpu_count(long long servers, long long gpus_per_server) {
  require(servers >= 1 && gpus_per_server >= 1, "servers and GPUs per server must be >= 1");
  require(servers <= kMaxBuilderGpus && servers * gpus_per_server <= kMaxBuilderGpus,
          fmt::format("{} x {} GPUs is more than the {} GPUs a topology builder makes", servers, gpus_per_server,
                      kMaxBuilderGpus));
}
// A builder makes at most this many vertices (a few per GPU and one per SSD and CXL expander):
// the largest clusters that make sense, 262,144 GPUs with an SSD each, take about 2 million.  Past
// it the platform alone would take tens of GB before any check (262,144 GPUs with 1,024 SSDs and
// 1,024 expanders per server held 12 GB after 2 minutes, still building).
constexpr long long kMaxBuilderVertices = 8'000'000;
void require_vertex_count(long long servers, long long gpus_per_server, long long devices_per_server) {
  // Per server: its GPUs, their NICs and PCIe switches (at most one each per GPU), CPU and DRAM,
  // and its devices.
  const long long vertices = servers * (3 * gpus_per_server + 2 + devices_per_server);
  require(vertices <= kMaxBuilderVertices,
          fmt::format("{} servers of {} GPUs and {} SSDs and memory expanders each make about {} vertices, more than the {} "
                      "a topology builder makes; give fewer SSDs or expanders per server",
                      servers, gpus_per_server, devices_per_server, vertices, kMaxBuilderVertices));
}
ServerShape shape_of(int gpus, int per_nic, int per_pcie, int nvme, const std::string& gpu, const std::string& nvlink,
                     const std::string& pcie, const std::string& host, const std::string& ssd, int cxl,
                     const std::string& cxl_profile) {
  ServerShape s{gpus, per_nic, per_pcie, nvme, gpu, nvlink, pcie, host, ssd, cxl, cxl_profile};
  check_server_shape(s);
  return s;
}
}  // namespace

Topology build_luwu_star(const LuwuStarParams& p, const models::ProfileCatalog& profiles) {
  require(p.workers >= 1, "luwu-star needs at least one worker");
  require_gpu_count(p.workers, 1);
  require_vertex_count(p.workers, 1, p.nvme_per_worker);
  require(p.gpus_per_server >= 1 && p.workers % p.gpus_per_server == 0,
          fmt::format("luwu-star: {} workers are not whole servers of gpus_per_server = {}", p.workers,
                      p.gpus_per_server));
  require(p.optimizer_nics >= 1, "the optimizer node needs at least one NIC");
  require(p.optimizer_nodes >= 1, fmt::format("optimizer_nodes ({}) must be >= 1", p.optimizer_nodes));
  require(p.trunks_per_rack >= 1, fmt::format("trunks_per_rack ({}) must be >= 1", p.trunks_per_rack));
  require(p.trunks_per_rack == 1 || p.racks > 1,
          fmt::format("trunks_per_rack ({}) applies to the racks' trunks: racks must be > 1", p.trunks_per_rack));
  require(p.pods >= 1, fmt::format("pods ({}) must be >= 1", p.pods));
  require(p.pods == 1 || (p.racks > 1 && p.racks >= p.pods),
          fmt::format("pods ({}) split the racks: racks ({}) must be > 1 and at least pods", p.pods, p.racks));
  require(p.trunks_per_pod >= 1, fmt::format("trunks_per_pod ({}) must be >= 1", p.trunks_per_pod));
  require(p.trunks_per_pod == 1 || p.pods > 1,
          fmt::format("trunks_per_pod ({}) applies to the pods' trunks: pods must be > 1", p.trunks_per_pod));
  require(p.optimizer_ssds >= 0 && p.nvme_per_worker >= 0, "SSD counts must be >= 0");
  Network net = make_network(p.nic_profile, p.switch_profile, p.network_Bps, profiles);
  const std::string opt_nic_profile = p.optimizer_nic_profile.empty() ? p.nic_profile : p.optimizer_nic_profile;
  const std::string opt_host_profile = p.optimizer_host_profile.empty() ? p.host_profile : p.optimizer_host_profile;
  const std::string opt_ssd_profile = p.optimizer_ssd_profile.empty() ? p.ssd_profile : p.optimizer_ssd_profile;
  Network opt_net = make_network(opt_nic_profile, p.switch_profile, p.network_Bps, profiles);
  require(p.parameter_servers >= 0, "parameter_servers must be >= 0");
  const std::string ps_host_profile = p.parameter_server_host_profile.empty() ? p.host_profile : p.parameter_server_host_profile;
  require(p.racks >= 1 && p.racks <= p.workers, fmt::format("racks ({}) must be in [1, workers ({})]", p.racks, p.workers));
  const long long node_nics = static_cast<long long>(p.optimizer_nodes) * p.optimizer_nics;
  if (p.racks == 1) {
    require(p.workers + node_nics + p.parameter_servers <= net.sw.ports,
            fmt::format("{} workers + {} optimizer-node NICs + {} parameter servers need more than the {} ports of switch {}",
                        p.workers, node_nics, p.parameter_servers, net.sw.ports, p.switch_profile));
  } else {
    const int per_rack = (p.workers + p.racks - 1) / p.racks;
    require(static_cast<long long>(per_rack) + p.trunks_per_rack <= net.sw.ports,
            fmt::format("{} workers per rack + {} trunk(s) need more than the {} ports of a top-of-rack switch {}",
                        per_rack, p.trunks_per_rack, net.sw.ports, p.switch_profile));
    if (p.pods > 1) {
      const long long racks_per_pod = (p.racks + p.pods - 1) / p.pods;
      require(racks_per_pod * p.trunks_per_rack + p.trunks_per_pod <= net.sw.ports,
              fmt::format("{} racks per pod x {} trunk(s) + {} trunk(s) up need more than the {} ports of a pod switch {}",
                          racks_per_pod, p.trunks_per_rack, p.trunks_per_pod, net.sw.ports, p.switch_profile));
      const long long pod_trunks = static_cast<long long>(p.pods) * p.trunks_per_pod;
      require(pod_trunks + node_nics + p.parameter_servers <= net.sw.ports,
              fmt::format("{} pod trunks + {} optimizer-node NICs + {} parameter servers need more than the {} ports of "
                          "cluster switch {}",
                          pod_trunks, node_nics, p.parameter_servers, net.sw.ports, p.switch_profile));
    }
    const long long trunks = static_cast<long long>(p.racks) * p.trunks_per_rack;
    require(p.pods > 1 || trunks + node_nics + p.parameter_servers <= net.sw.ports,
            fmt::format("{} rack trunks + {} optimizer-node NICs + {} parameter servers need more than the {} ports of "
                        "cluster switch {}",
                        trunks, node_nics, p.parameter_servers, net.sw.ports, p.switch_profile));
  }

  Topology t;
  t.builder = "luwu-star";
  t.profiles = profiles;
  t.network_Bps = p.network_Bps;
  t.builder_args = {{"workers", p.workers},           {"gpu", p.gpu_profile},
                    {"pcie", p.pcie_profile},         {"nic", p.nic_profile},
                    {"switch", p.switch_profile},     {"host", p.host_profile},
                    {"ssd", p.ssd_profile},           {"optimizer_nic", opt_nic_profile},
                    {"network_Bps", p.network_Bps},   {"optimizer_nics", p.optimizer_nics},
                    {"optimizer_ssds", p.optimizer_ssds}, {"nvme_per_worker", p.nvme_per_worker},
                    {"optimizer_host", opt_host_profile}, {"optimizer_ssd", opt_ssd_profile}};
  if (p.racks > 1) t.builder_args["racks"] = p.racks;
  // Recorded only when not 1, so that other clusters' records are unchanged.
  if (p.trunks_per_rack > 1) t.builder_args["trunks_per_rack"] = p.trunks_per_rack;
  if (p.pods > 1) t.builder_args["pods"] = p.pods;
  if (p.trunks_per_pod > 1) t.builder_args["trunks_per_pod"] = p.trunks_per_pod;
  if (p.optimizer_nodes > 1) t.builder_args["optimizer_nodes"] = p.optimizer_nodes;
  if (p.gpus_per_server > 1) {  // recorded only when used, so that other clusters' records are unchanged
    t.builder_args["gpus_per_server"] = p.gpus_per_server;
    t.builder_args["nvlink"] = p.nvlink_profile;
  }
  if (p.parameter_servers > 0) {
    t.builder_args["parameter_servers"] = p.parameter_servers;
    t.builder_args["parameter_server_host"] = ps_host_profile;
    t.builder_args["parameter_server_nic"] = p.parameter_server_nic_profile;
  }

  std::vector<Vertex> nics;
  if (p.gpus_per_server > 1) {
    const ServerShape shape = shape_of(p.gpus_per_server, 1, p.gpus_per_server % 2 == 0 ? 2 : 1,
                                       p.nvme_per_worker * p.gpus_per_server, p.gpu_profile, p.nvlink_profile,
                                       p.pcie_profile, p.host_profile, p.ssd_profile, 0, "");
    for (int s = 0; s < p.workers / p.gpus_per_server; ++s)
      for (Vertex n : add_dgx_server(t, s, shape, net, profiles)) nics.push_back(n);
  }
  for (int w = 0; w < p.workers && p.gpus_per_server == 1; ++w) {
    const std::string id = std::to_string(w);
    Vertex gpu = add_gpu(t, "gpu" + id, p.gpu_profile, w, profiles);
    Vertex pcie = add_plain(t, "pcie" + id + "-0", VertexKind::PcieSwitch, p.pcie_profile, w);
    Vertex nic = add_nic(t, "nic" + id, net, p.nic_profile, w);
    Vertex cpu = add_cpu(t, "cpu" + id, VertexKind::Cpu, p.host_profile, w, profiles);
    add_pcie(t, gpu, pcie, p.pcie_profile, profiles);
    add_pcie(t, nic, pcie, p.pcie_profile, profiles);
    add_pcie(t, pcie, cpu, p.pcie_profile, profiles);
    add_dram(t, "dram" + id, cpu, p.host_profile, w, profiles);
    for (int j = 0; j < p.nvme_per_worker; ++j)
      add_ssd(t, "nvme" + id + "-" + std::to_string(j), cpu, p.ssd_profile, w, profiles);
    nics.push_back(nic);
  }
  Vertex sw = add_switch(t, "switch", net);
  if (p.racks == 1) {
    for (Vertex nic : nics) add_nic_uplink(t, nic, sw, net);
  } else {
    // Contiguous blocks of workers, the first workers % racks blocks one longer.
    // With pods, contiguous blocks of racks likewise under the pod switches.
    std::vector<Vertex> pods;
    for (int j = 0; j < p.pods && p.pods > 1; ++j) {
      pods.push_back(add_switch(t, "pod" + std::to_string(j), net));
      add_trunk(t, pods.back(), sw, net, p.trunks_per_pod);
    }
    int next = 0, pod = 0, pod_end = p.pods > 1 ? p.racks / p.pods + (0 < p.racks % p.pods ? 1 : 0) : p.racks;
    for (int k = 0; k < p.racks; ++k) {
      if (k == pod_end) {
        ++pod;
        pod_end += p.racks / p.pods + (pod < p.racks % p.pods ? 1 : 0);
      }
      Vertex tor = add_switch(t, "tor" + std::to_string(k), net);
      add_trunk(t, tor, pods.empty() ? sw : pods[static_cast<std::size_t>(pod)], net, p.trunks_per_rack);
      const int size = p.workers / p.racks + (k < p.workers % p.racks ? 1 : 0);
      for (int w = 0; w < size; ++w) add_nic_uplink(t, nics[static_cast<std::size_t>(next++)], tor, net);
    }
  }

  for (int n = 0; n < p.optimizer_nodes; ++n) {
    const std::string id = n == 0 ? "optnode" : "optnode" + std::to_string(n);
    Vertex opt = add_cpu(t, id, VertexKind::OptimizerNode, opt_host_profile, -1, profiles);
    add_dram(t, id + "-dram", opt, opt_host_profile, -1, profiles);
    for (int k = 0; k < p.optimizer_nics; ++k) {
      Vertex nic = add_nic(t, id + "-nic" + std::to_string(k), opt_net, opt_nic_profile, -1);
      add_pcie(t, opt, nic, p.pcie_profile, profiles);
      add_nic_uplink(t, nic, sw, opt_net);
    }
    for (int j = 0; j < p.optimizer_ssds; ++j)
      add_ssd(t, id + "-ssd" + std::to_string(j), opt, opt_ssd_profile, -1, profiles);
  }
  if (p.parameter_servers > 0) {
    Network ps_net = make_network(p.parameter_server_nic_profile, p.switch_profile, p.network_Bps, profiles);
    for (int k = 0; k < p.parameter_servers; ++k) {
      const std::string id = "ps" + std::to_string(k);
      Vertex ps = add_cpu(t, id, VertexKind::Cpu, ps_host_profile, -1, profiles);
      add_dram(t, id + "-dram", ps, ps_host_profile, -1, profiles);
      Vertex nic = add_nic(t, id + "-nic", ps_net, p.parameter_server_nic_profile, -1);
      add_pcie(t, ps, nic, p.pcie_profile, profiles);
      add_nic_uplink(t, nic, sw, ps_net);
    }
  }
  return t;
}


Topology build_dgx(const DgxParams& p, const models::ProfileCatalog& profiles) {
  require(p.servers >= 1, "dgx needs at least one server");
  require_gpu_count(p.servers, p.gpus_per_server);
  require_vertex_count(p.servers, p.gpus_per_server, static_cast<long long>(p.nvme_per_server) + p.cxl_per_server);
  ServerShape shape = shape_of(p.gpus_per_server, p.gpus_per_nic, p.gpus_per_pcie_switch, p.nvme_per_server,
                               p.gpu_profile, p.nvlink_profile, p.pcie_profile, p.host_profile, p.ssd_profile,
                               p.cxl_per_server, p.cxl_profile);
  Network net = make_network(p.nic_profile, p.switch_profile, p.network_Bps, profiles);
  int nic_count = p.servers * (p.gpus_per_server / p.gpus_per_nic);
  require(nic_count <= net.sw.ports, fmt::format("{} NICs need more than the {} ports of switch {}: use the fat-tree builder",
                                                 nic_count, net.sw.ports, p.switch_profile));
  Topology t;
  t.builder = "dgx";
  t.profiles = profiles;
  t.network_Bps = p.network_Bps;
  t.builder_args = {{"servers", p.servers},         {"gpus_per_server", p.gpus_per_server},
                    {"gpus_per_nic", p.gpus_per_nic}, {"gpus_per_pcie_switch", p.gpus_per_pcie_switch},
                    {"nvme_per_server", p.nvme_per_server}, {"gpu", p.gpu_profile},
                    {"nvlink", p.nvlink_profile},   {"pcie", p.pcie_profile},
                    {"nic", p.nic_profile},         {"switch", p.switch_profile},
                    {"host", p.host_profile},       {"ssd", p.ssd_profile},
                    {"network_Bps", p.network_Bps}};
  if (p.cxl_per_server > 0) {  // recorded only when used, so that other clusters' records are unchanged
    t.builder_args["cxl_per_server"] = p.cxl_per_server;
    t.builder_args["cxl"] = p.cxl_profile;
  }
  std::vector<Vertex> nics;
  for (int s = 0; s < p.servers; ++s)
    for (Vertex n : add_dgx_server(t, s, shape, net, profiles)) nics.push_back(n);
  Vertex sw = add_switch(t, "switch", net);
  for (Vertex n : nics) add_nic_uplink(t, n, sw, net);
  return t;
}

Topology build_fat_tree(const FatTreeParams& p, const models::ProfileCatalog& profiles) {
  require(p.servers >= 1, "fat-tree needs at least one server");
  require_gpu_count(p.servers, p.gpus_per_server);
  require_vertex_count(p.servers, p.gpus_per_server, static_cast<long long>(p.nvme_per_server) + p.cxl_per_server);
  require(p.tiers == 2 || p.tiers == 3, "fat-tree tiers must be 2 or 3");
  require(p.oversubscription >= 1, "oversubscription (down:up) must be >= 1");
  ServerShape shape = shape_of(p.gpus_per_server, p.gpus_per_nic, p.gpus_per_pcie_switch, p.nvme_per_server,
                               p.gpu_profile, p.nvlink_profile, p.pcie_profile, p.host_profile, p.ssd_profile,
                               p.cxl_per_server, p.cxl_profile);
  Network net = make_network(p.nic_profile, p.switch_profile, p.network_Bps, profiles);
  const int ports = net.sw.ports;
  const int down = p.leaf_down_ports > 0 ? p.leaf_down_ports : ports / 2;
  const int up = std::max(1, static_cast<int>(std::lround(down / p.oversubscription)));
  require(down + up <= ports, fmt::format("a leaf with {} down and {} up links needs more than the {} ports of {}", down,
                                          up, ports, p.switch_profile));
  const int nic_count = p.servers * (p.gpus_per_server / p.gpus_per_nic);
  const int leaves = (nic_count + down - 1) / down;

  Topology t;
  t.builder = "fat-tree";
  t.profiles = profiles;
  t.network_Bps = p.network_Bps;
  t.builder_args = {{"servers", p.servers},         {"gpus_per_server", p.gpus_per_server},
                    {"gpus_per_nic", p.gpus_per_nic}, {"gpus_per_pcie_switch", p.gpus_per_pcie_switch},
                    {"nvme_per_server", p.nvme_per_server}, {"tiers", p.tiers},
                    {"leaf_down_ports", down},      {"leaf_up_ports", up},
                    {"oversubscription", p.oversubscription}, {"gpu", p.gpu_profile},
                    {"nvlink", p.nvlink_profile},   {"pcie", p.pcie_profile},
                    {"nic", p.nic_profile},         {"switch", p.switch_profile},
                    {"host", p.host_profile},       {"ssd", p.ssd_profile},
                    {"network_Bps", p.network_Bps}};
  if (p.cxl_per_server > 0) {
    t.builder_args["cxl_per_server"] = p.cxl_per_server;
    t.builder_args["cxl"] = p.cxl_profile;
  }

  std::vector<Vertex> nics;
  for (int s = 0; s < p.servers; ++s)
    for (Vertex n : add_dgx_server(t, s, shape, net, profiles)) nics.push_back(n);
  std::vector<Vertex> leaf;
  for (int l = 0; l < leaves; ++l) leaf.push_back(add_switch(t, "leaf" + std::to_string(l), net));
  for (std::size_t n = 0; n < nics.size(); ++n) add_nic_uplink(t, nics[n], leaf[n / down], net);

  if (p.tiers == 2) {
    require(leaves <= ports, fmt::format("{} leaves need more than the {} ports of a spine: use tiers = 3", leaves, ports));
    std::vector<Vertex> spine;
    for (int j = 0; j < up; ++j) spine.push_back(add_switch(t, "spine" + std::to_string(j), net));
    for (Vertex l : leaf)
      for (Vertex s : spine) add_trunk(t, l, s, net);
    return t;
  }

  const int leaves_per_pod = ports / 2;
  const int core_up = ports / 2;
  require(up <= ports / 2, fmt::format("{} leaf uplinks exceed the {} down ports of an aggregation switch", up, ports / 2));
  const int pods = (leaves + leaves_per_pod - 1) / leaves_per_pod;
  require(pods <= ports, fmt::format("{} pods need more than the {} ports of a core switch", pods, ports));
  std::vector<Vertex> agg;
  for (int a = 0; a < pods * up; ++a) agg.push_back(add_switch(t, "agg" + std::to_string(a), net));
  std::vector<Vertex> core;
  for (int c = 0; c < up * core_up; ++c) core.push_back(add_switch(t, "core" + std::to_string(c), net));
  for (int l = 0; l < leaves; ++l) {
    int pod = l / leaves_per_pod;
    for (int j = 0; j < up; ++j) add_trunk(t, leaf[l], agg[pod * up + j], net);
  }
  for (int pod = 0; pod < pods; ++pod)
    for (int j = 0; j < up; ++j)
      for (int c = 0; c < core_up; ++c) add_trunk(t, agg[pod * up + j], core[j * core_up + c], net);
  return t;
}

Topology build_wan(const WanParams& p, const models::ProfileCatalog& profiles) {
  require(p.groups >= 1, "wan needs at least one group");
  require(p.servers_per_group >= 1, "wan needs at least one server per group");
  require(p.wan_Bps > 0, "wan needs the wide-area bandwidth (wan_bandwidth) of each group, > 0");
  require(p.wan_latency_s >= 0, "the wide-area latency cannot be negative");
  require_gpu_count(static_cast<long long>(p.groups) * p.servers_per_group, p.gpus_per_server);
  require_vertex_count(static_cast<long long>(p.groups) * p.servers_per_group, p.gpus_per_server, p.nvme_per_server);
  ServerShape shape = shape_of(p.gpus_per_server, p.gpus_per_nic, p.gpus_per_pcie_switch, p.nvme_per_server,
                               p.gpu_profile, p.nvlink_profile, p.pcie_profile, p.host_profile, p.ssd_profile, 0, "");
  Network net = make_network(p.nic_profile, p.switch_profile, p.network_Bps, profiles);
  const int nic_count = p.servers_per_group * (p.gpus_per_server / p.gpus_per_nic);
  require(nic_count + 1 <= net.sw.ports,
          fmt::format("{} NICs and a WAN trunk need more than the {} ports of switch {}", nic_count, net.sw.ports,
                      p.switch_profile));
  Topology t;
  t.builder = "wan";
  t.profiles = profiles;
  t.network_Bps = p.network_Bps;
  t.builder_args = {{"groups", p.groups},           {"servers_per_group", p.servers_per_group},
                    {"gpus_per_server", p.gpus_per_server}, {"gpus_per_nic", p.gpus_per_nic},
                    {"gpus_per_pcie_switch", p.gpus_per_pcie_switch}, {"nvme_per_server", p.nvme_per_server},
                    {"gpu", p.gpu_profile},         {"nvlink", p.nvlink_profile},
                    {"pcie", p.pcie_profile},       {"nic", p.nic_profile},
                    {"switch", p.switch_profile},   {"host", p.host_profile},
                    {"ssd", p.ssd_profile},         {"network_Bps", p.network_Bps},
                    {"wan_Bps", p.wan_Bps},         {"wan_latency_s", p.wan_latency_s}};
  std::vector<Vertex> routers;
  for (int g = 0; g < p.groups; ++g) {
    std::vector<Vertex> nics;
    for (int i = 0; i < p.servers_per_group; ++i)
      for (Vertex n : add_dgx_server(t, g * p.servers_per_group + i, shape, net, profiles)) nics.push_back(n);
    Vertex sw = add_switch(t, "switch" + std::to_string(g), net);
    for (Vertex n : nics) add_nic_uplink(t, n, sw, net);
    Vertex router = add_switch(t, "wan-router" + std::to_string(g), net);
    add_trunk(t, sw, router, net);
    routers.push_back(router);
  }
  Vertex core = add_switch(t, "wan", net);
  for (Vertex router : routers) {
    EdgeProps e;
    e.kind = LinkKind::Ethernet;
    e.bandwidth_Bps = p.wan_Bps;
    e.latency_s = p.wan_latency_s / 2;
    t.add_link(router, core, std::move(e));
  }
  return t;
}

}  // namespace luwu::topologies
