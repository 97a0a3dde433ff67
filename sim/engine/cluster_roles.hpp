#pragma once
// Which SimGrid host or disk plays which part in a data-parallel iteration: each rank's GPU, its
// server's CPU and NVMe SSDs, its NIC; the switch the NICs reach; LuWu's optimizer node; dedicated
// parameter servers.
#include <vector>

#include <simgrid/s4u/Disk.hpp>
#include <simgrid/s4u/Host.hpp>

#include "topologies/lowering.hpp"
#include "topologies/topology.hpp"

namespace luwu::sim {

struct RankHosts {
  simgrid::s4u::Host* gpu = nullptr;
  simgrid::s4u::Host* cpu = nullptr;                // the server's CPU (PCIe root complex, DRAM)
  simgrid::s4u::Host* nic = nullptr;
  std::vector<simgrid::s4u::Disk*> nvme;            // the server's NVMe SSDs, striped
  int server = -1;
  int rack = -1;                                    // index into ClusterRoles::rack_switches; -1: no racks
};

struct ClusterRoles {
  std::vector<RankHosts> ranks;
  // The switch rank 0's NIC is cabled to; with racks, the cluster switch above their switches.
  simgrid::s4u::Host* network_switch = nullptr;
  // Racks: the top-of-rack switches the ranks' NICs are cabled to, when those are not the
  // optimizer node's switch (luwu-star with racks > 1); empty otherwise.
  std::vector<simgrid::s4u::Host*> rack_switches;
  // Pods (luwu-star's pods > 1): the switches between the rack switches and the cluster switch,
  // and each rack's pod (an index into pod_switches, per index of rack_switches); both empty
  // without pods.  A rack switch's pod is its uplink switch that is not the cluster switch.
  std::vector<simgrid::s4u::Host*> pod_switches;
  std::vector<int> pod_of_rack;
  // The optimizer node this iteration's system uses and its SSDs (the first of optimizer_nodes;
  // with pipeline parallelism, sim/experiment/simulate.cpp sets each stage's own).
  simgrid::s4u::Host* optimizer_node = nullptr;     // nullptr without one
  std::vector<simgrid::s4u::Disk*> optimizer_ssds;
  // Every optimizer node of the cluster (luwu-star's optimizer_nodes) and its SSDs, in vertex order.
  std::vector<simgrid::s4u::Host*> optimizer_nodes;
  std::vector<std::vector<simgrid::s4u::Disk*>> optimizer_node_ssds;
  // CPU machines outside any server (the luwu-star builder's ps<k>): dedicated parameter servers.
  std::vector<simgrid::s4u::Host*> parameter_servers;

  int world() const { return static_cast<int>(ranks.size()); }
  bool racked() const { return !rack_switches.empty(); }
  bool podded() const { return !pod_switches.empty(); }
  std::vector<simgrid::s4u::Host*> gpu_hosts() const;
  std::vector<int> servers() const;
};

ClusterRoles roles_of(const topologies::Topology& topology, const topologies::LoweredPlatform& platform);

}  // namespace luwu::sim
