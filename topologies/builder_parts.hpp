#pragma once
// Pieces the builders share: devices and links with their numbers resolved from hardware
// profiles (models/), in SI units, so the topology never needs a profile look-up again.
//
// Link numbers:
//   pcie      bandwidth = PcieSpec::achieved_Bps_per_direction(), latency = PcieSpec::latency_s
//   nvswitch  GPU <-> NVSwitch: bandwidth = NvlinkSpec::per_direction_Bps (per GPU), latency =
//             latency_s / 2 on each side, so GPU-to-GPU pays the profile's latency once
//   memory    CPU <-> DRAM: MemorySpec::achieved_Bps() (STREAM-like), latency = MemorySpec::latency_s
//   nvme      CPU <-> SSD: max(read, write) bandwidth so the link never hides the SimGrid disk's
//             own read/write rates; latency = the SSD's access latency
//   ethernet  NIC <-> switch: the NIC's RDMA goodput at its MTU (line rate * mtu / (mtu + header),
//             line rate overridable); latency = NIC latency / 2 + switch pipeline latency / 2
//             (the NIC profile's one-way latency is NIC to NIC, so a NIC-switch-NIC path pays it
//             once plus one switch pipeline).  Switch <-> switch: the switch port rate (capped by
//             the line-rate override) times the same goodput share; latency = one pipeline
//             latency (half of each switch's).
// Vertex numbers: GPU speed = peak dense fp16 tensor FLOP/s; CPU speed = the host profile's peak
// fp32 FLOP/s; DRAM capacity; SSD read/write/capacity; switch ports and port rate.  A switch is
// "programmable" when its profile has aggregation slots.
//
// Every piece that reads a profile takes the catalog to resolve its name in (`profiles`, a
// scenario's inline and overridden profiles; models::ProfileCatalog::resolve): a name it holds
// gets the catalog's profile, any other name the shipped one.
#include <string>

#include "common/json_input.hpp"
#include "models/models.hpp"
#include "topologies/topology.hpp"

namespace luwu::topologies::parts {

// The network every NIC and switch of a topology shares.
struct Network {
  models::NicSpec nic;           // line rate already overridden
  std::string nic_profile;
  bool smart = false;
  models::SwitchSpec sw;
  std::string switch_profile;
  bool programmable = false;
  double line_rate_Bps = 0;      // the NICs' line rate after the override

  double nic_link_Bps() const { return nic.goodput_Bps(); }
  double goodput_share() const { return nic.mtu_bytes / (nic.mtu_bytes + nic.header_bytes); }
  double trunk_Bps() const;      // switch-to-switch link goodput
};

// network_Bps = 0 keeps the NIC profile's line rate.  std::invalid_argument if the line rate
// exceeds the switch ports.
Network make_network(const std::string& nic_profile, const std::string& switch_profile, double network_Bps,
                     const models::ProfileCatalog& profiles);

Vertex add_gpu(Topology& t, const std::string& name, const std::string& profile, int server,
               const models::ProfileCatalog& profiles);
Vertex add_cpu(Topology& t, const std::string& name, VertexKind kind, const std::string& host_profile, int server,
               const models::ProfileCatalog& profiles);
// DRAM vertex <name> linked to `cpu` by a memory link.
Vertex add_dram(Topology& t, const std::string& name, Vertex cpu, const std::string& host_profile, int server,
                const models::ProfileCatalog& profiles);
Vertex add_ssd(Topology& t, const std::string& name, Vertex owner, const std::string& ssd_profile, int server,
               const models::ProfileCatalog& profiles);
// A CXL memory expander <name> (a memory vertex of a kind "memory" profile) on `cpu`'s memory
// link: bandwidth MemorySpec::achieved_Bps(), latency MemorySpec::latency_s, its capacity.
Vertex add_cxl(Topology& t, const std::string& name, Vertex cpu, const std::string& cxl_profile, int server,
               const models::ProfileCatalog& profiles);
Vertex add_plain(Topology& t, const std::string& name, VertexKind kind, const std::string& profile, int server);
Vertex add_nic(Topology& t, const std::string& name, const Network& net, const std::string& profile, int server);
Vertex add_switch(Topology& t, const std::string& name, const Network& net);

void add_pcie(Topology& t, Vertex a, Vertex b, const std::string& pcie_profile, const models::ProfileCatalog& profiles);
void add_nvswitch_port(Topology& t, Vertex gpu, Vertex nvswitch, const std::string& nvlink_profile,
                       const models::ProfileCatalog& profiles);
void add_nic_uplink(Topology& t, Vertex nic, Vertex sw, const Network& net);
// `links`: a trunk of that many switch-to-switch links, one link of their summed bandwidth.
void add_trunk(Topology& t, Vertex a, Vertex b, const Network& net, int links = 1);

// Server internals of DGX-like machines (dgx and fat-tree builders).
struct ServerShape {
  int gpus = 8;
  int gpus_per_nic = 1;
  int gpus_per_pcie_switch = 2;
  int nvme = 2;
  std::string gpu_profile, nvlink_profile, pcie_profile, host_profile, ssd_profile;
  int cxl = 0;  // CXL memory expanders cxl<s>-<j> on the CPU
  std::string cxl_profile;
};
void check_server_shape(const ServerShape& shape);
// Adds server s (GPUs gpu<s*gpus + i>, nvswitch<s>, pcie<s>-<j>, nic<s>-<j>, cpu<s>, dram<s>,
// nvme<s>-<j>, cxl<s>-<j>) and returns its NICs in order.
std::vector<Vertex> add_dgx_server(Topology& t, int s, const ServerShape& shape, const Network& net,
                                   const models::ProfileCatalog& profiles);

}  // namespace luwu::topologies::parts
