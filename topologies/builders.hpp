#pragma once
// Parameterised topology builders.  Numbers come from hardware profiles (builder_parts.hpp says
// how each link's bandwidth and latency are derived); names follow topology.hpp.  Bad parameters
// throw std::invalid_argument; an unknown profile name throws luwu::InputError.
//
// `profiles`: a scenario's inline and overridden profiles.  A profile name the parameters give
// resolves there first (models::ProfileCatalog::resolve), then to the shipped profile of that
// name; the default, an empty catalog, means shipped profiles only.  The built topology keeps the
// catalog (Topology::profiles) and the line-rate override (Topology::network_Bps).
#include <string>

#include "topologies/topology.hpp"

namespace luwu::topologies {

// The most GPUs a builder makes (checked in 64-bit before anything is built): 64 times the
// 4,096-GPU benchmark, beyond which a graph takes minutes and gigabytes to build.
constexpr long long kMaxBuilderGpus = 262144;

// LuWu's testbed shape: N single-GPU workers, each  gpu<w> - pcie<w>-0 - nic<w> (SmartNIC) -
// ethernet - "switch" (programmable), with the host cpu<w> (root complex) above the PCIe switch,
// its DRAM dram<w> and NVMe SSDs nvme<w>-<j> (ZeRO-Infinity/Offload use them); plus the
// in-network optimizer node "optnode" (CPU) with optnode-dram, SSDs optnode-ssd<j> and NICs
// optnode-nic<k> on the switch; plus `parameter_servers` CPU machines ps<k> (plain parameter
// servers, ATP's: a CPU outside any server, server -1) with DRAM ps<k>-dram and one NIC ps<k>-nic.
//   vertices = W (5 + nvme_per_worker) + 1 (switch) + N (2 (optnode, its DRAM) + K nics + S ssds) + 3 PS
//   links    = W (5 + nvme_per_worker) + N (1 (optnode DRAM) + 2 K + S) + 3 PS
// (single-GPU workers, one rack; N = optimizer_nodes)
struct LuwuStarParams {
  int workers = 8;
  // GPUs per worker server.  1: the testbed's single-GPU workers (names above).  g > 1: workers / g
  // DGX-like servers (as build_dgx: gpu<k>, nvswitch<s> over nvlink_profile, pcie<s>-<j> of 2 GPUs,
  // a SmartNIC nic<s>-<j> per GPU, cpu<s>, dram<s>, nvme<s>-<j>, nvme_per_worker x g of them), for
  // tensor parallelism over NVLink with LuWu's data parallelism across the servers.
  int gpus_per_server = 1;
  std::string nvlink_profile = "nvlink3-a100";
  std::string gpu_profile = "a100-40gb-sxm";
  std::string pcie_profile = "pcie-gen4-x16";
  std::string nic_profile = "alveo-u50";              // the workers' SmartNICs (the paper's FPGA NIC)
  std::string switch_profile = "tofino";
  std::string host_profile = "dual-socket-server-2021";  // worker hosts (and the optimizer node by default)
  std::string ssd_profile = "samsung-pm1733";
  std::string optimizer_nic_profile;                   // "" = nic_profile
  std::string optimizer_host_profile;                  // "" = host_profile
  std::string optimizer_ssd_profile;                   // "" = ssd_profile
  double network_Bps = 0;                              // NIC line rate override; 0 = profile's
  int optimizer_nics = 1;
  int optimizer_ssds = 4;
  int nvme_per_worker = 1;
  int parameter_servers = 0;
  // Racks > 1: the workers are split over that many top-of-rack switches (of switch_profile, the
  // first workers % racks racks one worker more), each cabled by one trunk to the cluster switch
  // "switch", where the optimizer node and parameter servers are.  LuWu's multi-rack arrangement:
  // each ToR aggregates its rack's gradients and the cluster switch the racks', so a trunk carries
  // one worker's share each way (the paper's section on multiple racks).
  int racks = 1;
  // Racks > 1: each rack's trunk to the cluster switch is this many links of the trunk rate
  // (min(switch port, NIC line rate) at MTU goodput), taking as many ports on the ToR and on the
  // cluster switch.  Modelled as one link of that many times the bandwidth (a LAG whose members
  // the flows share evenly): the builders' routing picks one route per pair, so parallel links
  // would leave all but one idle.  1: one trunk (a worker's share each way, the paper's setup).
  int trunks_per_rack = 1;
  // Pods > 1 (racks > 1, racks >= pods): a third level of programmable switches for clusters
  // beyond one cluster switch's ports (the paper's 32,768-GPU scale-out).  The racks are split
  // over pod switches pod<j> (of switch_profile) in contiguous blocks, the first racks % pods pods
  // one rack more (as the workers over the racks); each rack's trunk goes to its pod switch instead
  // of the cluster switch, and each pod switch has one trunk to the cluster switch "switch" of
  // trunks_per_pod links of the trunk rate (one link, as trunks_per_rack).  Pod switches aggregate
  // their racks' sums and replicate multicasts to their racks.  1: no pods (the names above).
  int pods = 1;
  int trunks_per_pod = 1;
  // In-network optimizer nodes, each a full node as described above (its host, DRAM,
  // `optimizer_nics` NICs and `optimizer_ssds` SSDs on the cluster switch).  The first keeps the
  // names optnode, optnode-dram, optnode-nic<k>, optnode-ssd<j>; node n >= 1 is optnode<n>,
  // optnode<n>-dram, optnode<n>-nic<k>, optnode<n>-ssd<j>.  With pipeline parallelism, stage p's
  // data-parallel groups use node p mod optimizer_nodes (sim/experiment/simulate.cpp); the paper's
  // scale-out does not say how LuWu arranges its nodes, so 1 (the testbed's) is the default.
  int optimizer_nodes = 1;
  std::string parameter_server_host_profile;  // "" = host_profile
  std::string parameter_server_nic_profile = "rdma-nic-100g";  // a conventional NIC
};
Topology build_luwu_star(const LuwuStarParams& params, const models::ProfileCatalog& profiles = {});

// Multi-GPU servers (DGX-like): per server s, GPUs on an NVSwitch nvswitch<s>, PCIe switches
// pcie<s>-<j> (gpus_per_pcie_switch GPUs each) under cpu<s>, NICs nic<s>-<j> (one per
// gpus_per_nic GPUs) on the PCIe switch of their first GPU, DRAM dram<s>, NVMe nvme<s>-<j>.
// All NICs on one network "switch".
struct DgxParams {
  int servers = 2;
  int gpus_per_server = 8;
  int gpus_per_nic = 1;            // 1: a NIC per GPU, 2: per pair, ...
  int gpus_per_pcie_switch = 2;
  int nvme_per_server = 2;
  std::string gpu_profile = "a100-40gb-sxm";
  std::string nvlink_profile = "nvlink3-a100";
  std::string pcie_profile = "pcie-gen4-x16";
  std::string nic_profile = "rdma-nic-200g";
  std::string switch_profile = "tofino2";
  std::string host_profile = "dual-socket-server-2021";
  std::string ssd_profile = "samsung-pm1733";
  double network_Bps = 0;
  // CXL memory expanders per server (cxl<s>-<j>, memory vertices on the CPU's memory link; 0 =
  // none) and their profile (kind "memory").
  int cxl_per_server = 0;
  std::string cxl_profile = "cxl-samsung-cmm-d";
};
Topology build_dgx(const DgxParams& params, const models::ProfileCatalog& profiles = {});

// DGX-like servers (as build_dgx) on a fat-tree.  NIC n (numbered server by server) is cabled to
// leaf<n / leaf_down_ports>.  Each leaf has up = round(leaf_down_ports / oversubscription)
// uplinks.
//   tiers = 2 (leaf-spine): `up` spines spine<j>; every leaf has one link to every spine.
//   tiers = 3: leaves are grouped in pods of (switch ports / 2) leaves; each pod has `up`
//     aggregation switches agg<p*up + j> (one link from every leaf of the pod); aggregation
//     switch j of every pod has (ports / 2) uplinks, one to each core of plane j:
//     core<j*(ports/2) + c>.  Above the leaves the tree is not oversubscribed.
// ECMP: minimum-hop routes between leaves of a 2-tier tree = number of spines.
struct FatTreeParams {
  int servers = 4;
  int gpus_per_server = 8;
  int gpus_per_nic = 1;
  int gpus_per_pcie_switch = 2;
  int nvme_per_server = 0;
  int tiers = 2;
  int leaf_down_ports = 0;        // NICs per leaf; 0 = half the switch ports
  double oversubscription = 1.0;  // leaf down : up ports
  std::string gpu_profile = "a100-40gb-sxm";
  std::string nvlink_profile = "nvlink3-a100";
  std::string pcie_profile = "pcie-gen4-x16";
  std::string nic_profile = "rdma-nic-100g";
  std::string switch_profile = "tofino";
  std::string host_profile = "dual-socket-server-2021";
  std::string ssd_profile = "samsung-pm1733";
  double network_Bps = 0;
  int cxl_per_server = 0;                       // as DgxParams
  std::string cxl_profile = "cxl-samsung-cmm-d";
};
Topology build_fat_tree(const FatTreeParams& params, const models::ProfileCatalog& profiles = {});

// Groups of DGX-like clusters joined by a wide-area network (Streaming DiLoCo's setting: each
// group a datacenter training its own replica).  Group g holds servers g*S .. g*S+S-1 (S =
// servers_per_group, built as build_dgx builds its servers: GPUs gpu<rank> numbered group by
// group), their NICs on the group's switch "switch<g>", which a trunk joins to the group's WAN
// router "wan-router<g>"; every router has one wide-area link to the WAN core "wan", of wan_Bps
// per direction and half the one-way latency wan_latency_s each, so group to group takes
// wan_latency_s and each group's WAN capacity is wan_Bps each way.
//   vertices = per server as dgx, plus G (switch, router) + 1;  links = per server as dgx, plus
//   G (NIC uplinks of the group) + 2 G
struct WanParams {
  int groups = 2;
  int servers_per_group = 1;
  int gpus_per_server = 8;
  int gpus_per_nic = 1;
  int gpus_per_pcie_switch = 2;
  int nvme_per_server = 0;
  std::string gpu_profile = "a100-40gb-sxm";
  std::string nvlink_profile = "nvlink3-a100";
  std::string pcie_profile = "pcie-gen4-x16";
  std::string nic_profile = "rdma-nic-200g";
  std::string switch_profile = "tofino2";
  std::string host_profile = "dual-socket-server-2021";
  std::string ssd_profile = "samsung-pm1733";
  double network_Bps = 0;
  double wan_Bps = 0;        // required (> 0): the wide-area link of each group, per direction
  double wan_latency_s = 0;  // one way, group to group
};
Topology build_wan(const WanParams& params, const models::ProfileCatalog& profiles = {});

}  // namespace luwu::topologies
