#include "topologies/builder_parts.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

namespace luwu::topologies::parts {

namespace {

// Shipped profiles are read once per name: a 4,096-GPU fat-tree would otherwise parse the same few
// files tens of thousands of times.  The cache holds only what models::find_profile reads from
// files; a name the caller's catalog defines (an inline or overridden profile) is taken from the
// catalog, never cached, so one scenario's overrides never reach another's topology.
const models::Profile& find_profile(const std::string& name, const models::ProfileCatalog& profiles) {
  if (const auto* own = profiles.find(name)) return *own;
  static std::map<std::string, models::Profile> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, models::find_profile(name)).first;
  return it->second;
}

}  // namespace

double Network::trunk_Bps() const { return std::min(sw.port_Bps, line_rate_Bps) * goodput_share(); }

Network make_network(const std::string& nic_profile, const std::string& switch_profile, double network_Bps,
                     const models::ProfileCatalog& profiles) {
  Network n;
  models::Profile nic = find_profile(nic_profile, profiles);
  n.nic = models::nic_from_profile(nic);
  n.nic_profile = nic_profile;
  n.smart = nic.kind == "smartnic";
  if (network_Bps > 0) n.nic.line_rate_Bps = network_Bps;
  n.line_rate_Bps = n.nic.line_rate_Bps;
  models::Profile sw = find_profile(switch_profile, profiles);
  n.sw = models::switch_from_profile(sw);
  n.switch_profile = switch_profile;
  n.programmable = sw.has("aggregation_slots");
  if (n.line_rate_Bps > n.sw.port_Bps * (1 + 1e-12))
    throw std::invalid_argument(fmt::format("network line rate {:g} Gb/s exceeds the {:g} Gb/s ports of switch profile {}",
                                            n.line_rate_Bps * 8 / 1e9, n.sw.port_Bps * 8 / 1e9, switch_profile));
  return n;
}

Vertex add_plain(Topology& t, const std::string& name, VertexKind kind, const std::string& profile, int server) {
  VertexProps p;
  p.name = name;
  p.kind = kind;
  p.profile = profile;
  p.server = server;
  return t.add_vertex(std::move(p));
}

Vertex add_gpu(Topology& t, const std::string& name, const std::string& profile, int server,
               const models::ProfileCatalog& profiles) {
  VertexProps p{name, VertexKind::Gpu, profile, server};
  p.speed_flops = models::gpu_from_profile(find_profile(profile, profiles)).peak_fp16_flops;
  return t.add_vertex(std::move(p));
}

Vertex add_cpu(Topology& t, const std::string& name, VertexKind kind, const std::string& host_profile, int server,
               const models::ProfileCatalog& profiles) {
  VertexProps p{name, kind, host_profile, server};
  p.speed_flops = models::cpu_from_profile(find_profile(host_profile, profiles)).flops;
  return t.add_vertex(std::move(p));
}

Vertex add_dram(Topology& t, const std::string& name, Vertex cpu, const std::string& host_profile, int server,
                const models::ProfileCatalog& profiles) {
  auto mem = models::memory_from_profile(find_profile(host_profile, profiles));
  VertexProps p{name, VertexKind::Memory, host_profile, server};
  p.capacity_bytes = mem.capacity_bytes;
  Vertex v = t.add_vertex(std::move(p));
  EdgeProps e;
  e.kind = LinkKind::Memory;
  e.profile = host_profile;
  e.bandwidth_Bps = mem.achieved_Bps();
  e.latency_s = mem.latency_s;
  t.add_link(cpu, v, std::move(e));
  return v;
}

Vertex add_cxl(Topology& t, const std::string& name, Vertex cpu, const std::string& cxl_profile, int server,
               const models::ProfileCatalog& profiles) {
  const auto profile = find_profile(cxl_profile, profiles);
  models::require_kind(profile, {"memory"});
  auto mem = models::memory_from_profile(profile);
  VertexProps p{name, VertexKind::Memory, cxl_profile, server};
  p.capacity_bytes = mem.capacity_bytes;
  Vertex v = t.add_vertex(std::move(p));
  EdgeProps e;
  e.kind = LinkKind::Memory;
  e.profile = cxl_profile;
  e.bandwidth_Bps = mem.achieved_Bps();
  e.latency_s = mem.latency_s;
  t.add_link(cpu, v, std::move(e));
  return v;
}

Vertex add_ssd(Topology& t, const std::string& name, Vertex owner, const std::string& ssd_profile, int server,
               const models::ProfileCatalog& profiles) {
  auto ssd = models::ssd_from_profile(find_profile(ssd_profile, profiles));
  VertexProps p{name, VertexKind::Ssd, ssd_profile, server};
  p.read_Bps = ssd.read_Bps;
  p.write_Bps = ssd.write_Bps;
  p.read_write_Bps = ssd.read_write_Bps;
  p.capacity_bytes = ssd.capacity_bytes;
  Vertex v = t.add_vertex(std::move(p));
  EdgeProps e;
  e.kind = LinkKind::Nvme;
  e.profile = ssd_profile;
  e.bandwidth_Bps = std::max(ssd.read_Bps, ssd.write_Bps);
  e.latency_s = ssd.latency_s;
  t.add_link(owner, v, std::move(e));
  return v;
}

Vertex add_nic(Topology& t, const std::string& name, const Network& net, const std::string& profile, int server) {
  return add_plain(t, name, net.smart ? VertexKind::SmartNic : VertexKind::Nic, profile, server);
}

Vertex add_switch(Topology& t, const std::string& name, const Network& net) {
  VertexProps p{name, net.programmable ? VertexKind::ProgrammableSwitch : VertexKind::Switch, net.switch_profile, -1};
  p.ports = net.sw.ports;
  p.port_Bps = net.sw.port_Bps;
  return t.add_vertex(std::move(p));
}

void add_pcie(Topology& t, Vertex a, Vertex b, const std::string& pcie_profile, const models::ProfileCatalog& profiles) {
  auto pcie = models::pcie_from_profile(find_profile(pcie_profile, profiles));
  EdgeProps e;
  e.kind = LinkKind::Pcie;
  e.profile = pcie_profile;
  e.bandwidth_Bps = pcie.achieved_Bps_per_direction();
  e.latency_s = pcie.latency_s;
  t.add_link(a, b, std::move(e));
}

void add_nvswitch_port(Topology& t, Vertex gpu, Vertex nvswitch, const std::string& nvlink_profile,
                       const models::ProfileCatalog& profiles) {
  auto nv = models::nvlink_from_profile(find_profile(nvlink_profile, profiles));
  EdgeProps e;
  e.kind = LinkKind::Nvswitch;
  e.profile = nvlink_profile;
  e.bandwidth_Bps = nv.per_direction_Bps;
  e.latency_s = nv.latency_s / 2;
  t.add_link(gpu, nvswitch, std::move(e));
}

void add_nic_uplink(Topology& t, Vertex nic, Vertex sw, const Network& net) {
  EdgeProps e;
  e.kind = LinkKind::Ethernet;
  e.profile = net.nic_profile;
  e.bandwidth_Bps = net.nic_link_Bps();
  e.latency_s = net.nic.latency_s / 2 + net.sw.pipeline_latency_s / 2;
  t.add_link(nic, sw, std::move(e));
}

void add_trunk(Topology& t, Vertex a, Vertex b, const Network& net, int links) {
  EdgeProps e;
  e.kind = LinkKind::Ethernet;
  e.profile = net.switch_profile;
  e.bandwidth_Bps = links == 1 ? net.trunk_Bps() : net.trunk_Bps() * links;
  e.latency_s = net.sw.pipeline_latency_s;
  t.add_link(a, b, std::move(e));
}

void check_server_shape(const ServerShape& s) {
  if (s.gpus < 1) throw std::invalid_argument("a server needs at least one GPU");
  if (s.gpus_per_nic < 1 || s.gpus % s.gpus_per_nic != 0)
    throw std::invalid_argument(fmt::format("GPUs per NIC ({}) must divide GPUs per server ({})", s.gpus_per_nic, s.gpus));
  if (s.gpus_per_pcie_switch < 1 || s.gpus % s.gpus_per_pcie_switch != 0)
    throw std::invalid_argument(
        fmt::format("GPUs per PCIe switch ({}) must divide GPUs per server ({})", s.gpus_per_pcie_switch, s.gpus));
  if (s.nvme < 0) throw std::invalid_argument("NVMe devices per server must be >= 0");
  if (s.cxl < 0) throw std::invalid_argument("CXL memory expanders per server must be >= 0");
}

std::vector<Vertex> add_dgx_server(Topology& t, int s, const ServerShape& shape, const Network& net,
                                   const models::ProfileCatalog& profiles) {
  const std::string srv = std::to_string(s);
  std::vector<Vertex> gpus;
  for (int i = 0; i < shape.gpus; ++i)
    gpus.push_back(add_gpu(t, "gpu" + std::to_string(s * shape.gpus + i), shape.gpu_profile, s, profiles));
  if (shape.gpus > 1) {
    Vertex nvs = add_plain(t, "nvswitch" + srv, VertexKind::NvSwitch, shape.nvlink_profile, s);
    for (Vertex g : gpus) add_nvswitch_port(t, g, nvs, shape.nvlink_profile, profiles);
  }
  Vertex cpu = add_cpu(t, "cpu" + srv, VertexKind::Cpu, shape.host_profile, s, profiles);
  add_dram(t, "dram" + srv, cpu, shape.host_profile, s, profiles);
  std::vector<Vertex> pcie;
  for (int j = 0; j < shape.gpus / shape.gpus_per_pcie_switch; ++j) {
    pcie.push_back(add_plain(t, "pcie" + srv + "-" + std::to_string(j), VertexKind::PcieSwitch, shape.pcie_profile, s));
    add_pcie(t, pcie.back(), cpu, shape.pcie_profile, profiles);
  }
  for (int i = 0; i < shape.gpus; ++i) add_pcie(t, gpus[i], pcie[i / shape.gpus_per_pcie_switch], shape.pcie_profile, profiles);
  std::vector<Vertex> nics;
  for (int j = 0; j < shape.gpus / shape.gpus_per_nic; ++j) {
    nics.push_back(add_nic(t, "nic" + srv + "-" + std::to_string(j), net, net.nic_profile, s));
    // The NIC sits on the PCIe switch of the first GPU it serves (GPUDirect RDMA path).
    add_pcie(t, nics.back(), pcie[(j * shape.gpus_per_nic) / shape.gpus_per_pcie_switch], shape.pcie_profile,
             profiles);
  }
  for (int j = 0; j < shape.nvme; ++j) add_ssd(t, "nvme" + srv + "-" + std::to_string(j), cpu, shape.ssd_profile, s, profiles);
  for (int j = 0; j < shape.cxl; ++j) add_cxl(t, "cxl" + srv + "-" + std::to_string(j), cpu, shape.cxl_profile, s, profiles);
  return nics;
}

}  // namespace luwu::topologies::parts
