#pragma once
// The cluster graph: one vertex per device (GPU, CPU/root complex, PCIe switch, NIC, network
// switch, optimizer node, SSD, DRAM), one edge per physical link.
//
// The graph is undirected: every link is full duplex, and `bandwidth_Bps` is the rate available in
// EACH direction (lowering turns it into a SimGrid split-duplex link).  Vertex and edge storage are
// vectors (vecS), so vertex descriptors are dense indices in insertion order; edges carry their
// own dense `index` (insertion order) because undirected edge descriptors have none.
//
// All numbers are resolved from the hardware profiles (models/profiles/) when the topology is
// built and stored in SI base units, so the JSON file, the routes and the SimGrid lowering never
// need a profile look-up.
#include <cstddef>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

namespace luwu::topologies {

enum class VertexKind {
  Gpu,
  Cpu,                 // a host CPU / PCIe root complex of a server
  PcieSwitch,
  Nic,
  SmartNic,            // a NIC that runs collectives itself (BlueField-class)
  NvSwitch,            // the NVLink switch of a multi-GPU server
  Switch,              // a plain network switch
  ProgrammableSwitch,  // a switch that can aggregate/multicast in its data plane (Tofino-class)
  OptimizerNode,       // LuWu's in-network optimizer server (its CPU)
  Ssd,
  Memory,              // DRAM of a server or of the optimizer node
};

enum class LinkKind { Pcie, Nvlink, Nvswitch, Ethernet, Nvme, Memory };

struct VertexProps {
  std::string name;     // unique
  VertexKind kind = VertexKind::Gpu;
  std::string profile;  // hardware profile in models/profiles/ ("" when none applies)
  int server = -1;      // server (worker) index, -1 for devices outside any server
  // Network switches: port count and speed per port from the switch profile.
  int ports = 0;
  double port_Bps = 0;
  // GPUs: peak dense 16-bit tensor throughput from the GPU profile (the SimGrid host speed).
  double speed_flops = 0;
  // SSDs: sequential bandwidths and capacity; Memory: capacity.
  double read_Bps = 0;
  double write_Bps = 0;
  double read_write_Bps = 0;  // SSDs: reads plus writes at once (models/storage.hpp); 0: max(read, write)
  double capacity_bytes = 0;

  bool operator==(const VertexProps&) const = default;
};

struct EdgeProps {
  std::string name;  // unique
  LinkKind kind = LinkKind::Pcie;
  std::string profile;
  double bandwidth_Bps = 0;  // per direction
  double latency_s = 0;
  std::size_t index = 0;     // dense, insertion order; set by Topology::add_link

  bool operator==(const EdgeProps&) const = default;
};

using ClusterGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, VertexProps, EdgeProps>;
using Vertex = ClusterGraph::vertex_descriptor;
using Edge = ClusterGraph::edge_descriptor;

// Names as written in JSON files ("gpu", "programmable-switch", "nvlink", ...).
const std::vector<std::string>& vertex_kind_names();
const std::vector<std::string>& link_kind_names();
std::string to_string(VertexKind kind);
std::string to_string(LinkKind kind);
// Throw std::invalid_argument naming the closest valid name.
VertexKind vertex_kind_from_string(const std::string& name);
LinkKind link_kind_from_string(const std::string& name);

inline bool is_network_switch(VertexKind k) { return k == VertexKind::Switch || k == VertexKind::ProgrammableSwitch; }
inline bool is_nic(VertexKind k) { return k == VertexKind::Nic || k == VertexKind::SmartNic; }

}  // namespace luwu::topologies
