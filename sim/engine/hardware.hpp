#pragma once
// The hardware a simulation runs on, as typed specs resolved from the topology's profiles.  The
// topology carries every link's bandwidth and latency already; this holds what is not a link: the
// GPU's compute model, the hosts' CPUs, memory and SSDs (for offloading and the optimizer node),
// the NIC's packet goodput, and the programmable switch's aggregation.
#include <algorithm>
#include <optional>

#include "models/models.hpp"
#include "topologies/topology.hpp"

namespace luwu::sim {

struct Hardware {
  int workers = 0;          // GPUs, one rank each
  int gpus_per_server = 1;  // ranks whose GPUs share a server (its CPU, DRAM, NVMe and PCIe root)
  // The worker servers: workers / gpus_per_server, at least 1.
  int worker_servers() const { return std::max(1, workers / std::max(1, gpus_per_server)); }
  models::GpuSpec gpu;
  models::HostSpec worker_host;                      // CPU, DRAM, NVMe array and CXL tier of rank 0's server
  // Rank 0's GPU's share of its path to its host CPU, B/s per direction: over each PCIe link of the
  // path, its bandwidth divided by the GPUs of the server whose own path to the CPU crosses it
  // (a DGX's PCIe switch uplink serves two GPUs).  What a system's own cost model of host<->GPU
  // copies assumes (Deep Optimizer States); the simulation shares the links itself.
  double gpu_host_Bps = 0;
  std::optional<models::HostSpec> optimizer_node;    // LuWu's in-network optimizer node
  // The share of its optimizer node's DRAM and SSDs that this data-parallel group's model state
  // may take: 1 when the node serves one group; with model parallelism, the group's parameters
  // over those of every group the node serves (sim/experiment/simulate.cpp), so that each group's
  // placement is its part of the node's placement of all of them.
  double optimizer_node_share = 1;
  int parameter_servers = 0;                          // CPU machines outside any server (ps<k>)
  std::optional<models::HostSpec> parameter_server;  // their host, when there are any
  models::NicSpec worker_nic;                        // rank 0's NIC, line rate as the topology set it
  std::optional<models::NvlinkSpec> nvlink;          // rank 0's NVLink/NVSwitch fabric, when it has one
  // Rank 0's NIC and the optimizer node's first NIC when they are SmartNICs (their push and pull
  // limits, models/smartnic.hpp), line rate as the topology set it.
  std::optional<models::SmartNicSpec> worker_smartnic;
  std::optional<models::SmartNicSpec> optimizer_smartnic;
  std::optional<models::SwitchSpec> network_switch;  // rank 0's switch, when it aggregates
  // The scenario's inline and overridden profiles (the topology's), for parts a system brings
  // besides the cluster's (LuWu's "gpu" update engine): resolve names here, not in the shipped set.
  models::ProfileCatalog profiles;
};

// luwusim simulates one kind of GPU, worker server and NIC per cluster, and the same number of GPUs
// in every server: rank 0's stand for all.  A topology that mixes GPU or worker-CPU profiles, or
// servers of different sizes, is std::invalid_argument naming what differs (rather than a silently
// wrong result); NICs are taken as rank 0's.
// Vertex profile names resolve in topology.profiles first (a scenario's inline and overridden
// profiles), so the specs see the same numbers the topology's links were built from; the NIC's
// line rate is topology.network_Bps when the builder overrode it.
Hardware hardware_of(const topologies::Topology& topology);

}  // namespace luwu::sim
