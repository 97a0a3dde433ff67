#pragma once
// A cluster topology: the graph plus how it was built, with look-ups the simulator needs.
//
// Naming conventions (the builders follow them; the simulator relies on them):
//   gpu<rank>            GPU of data-parallel rank <rank>; gpus() returns them in rank order
//   nic<i>               NIC / SmartNIC (luwu-star: nic<rank>; dgx/fat-tree: nic<server>-<j>)
//   cpu<server>          host CPU (PCIe root complex) of worker server <server>
//   dram<server>         host DRAM of server <server>
//   pcie<server>-<j>     PCIe switch j of server <server>
//   nvswitch<server>     NVSwitch of a multi-GPU server
//   nvme<server>-<j>     NVMe SSD j of worker server <server>
//   switch               the (programmable) network switch of luwu-star and of a single-switch dgx
//   leaf<i>, spine<i>    fat-tree / leaf-spine switches (3 tiers: leaf<i>, agg<i>, core<i>)
//   optnode              LuWu's in-network optimizer node (its CPU); optnode-dram its DRAM,
//                        optnode-ssd<j> its SSDs, optnode-nic<k> its NICs; further nodes
//                        optnode<n> (n >= 1) with optnode<n>-dram, -ssd<j>, -nic<k>
// "Rank order" of GPUs is the order in which GPU vertices appear in the graph (JSON order).
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/json_input.hpp"
#include "models/profile.hpp"
#include "topologies/graph.hpp"

namespace luwu::topologies {

class Topology {
 public:
  ClusterGraph graph;
  std::string builder;       // "luwu-star", "dgx", "fat-tree", or "" for a hand-written file
  luwu::Json builder_args = luwu::Json::object();  // the builder's arguments, for the record
  // The profiles its vertices and links name that are not (only) shipped ones: a scenario's inline
  // and overridden profiles (sim/experiment/scenario.hpp).  Vertex and link profile names resolve here first
  // (profiles.resolve), then to shipped profiles; the builders took their numbers from it.
  models::ProfileCatalog profiles;
  // The NICs' line rate as the builder set it (its network_Bps argument), B/s; 0 = each NIC
  // profile's own line_rate.  The ethernet links already carry it; sim::hardware_of's NIC spec
  // takes it from here.
  double network_Bps = 0;
  std::string source_file;   // the file it was loaded from, for error messages ("" if built)

  Topology() = default;
  // Undirected edge descriptors point into the graph's storage, so copies re-derive them.
  Topology(const Topology& other);
  Topology(Topology&& other) noexcept;
  Topology& operator=(const Topology& other);
  Topology& operator=(Topology&& other) noexcept;
  ~Topology() = default;

  // Adding: names must be unique (std::invalid_argument otherwise).
  Vertex add_vertex(VertexProps props);
  Edge add_link(Vertex a, Vertex b, EdgeProps props);
  Edge add_link(const std::string& a, const std::string& b, EdgeProps props);

  std::size_t vertex_count() const { return boost::num_vertices(graph); }
  std::size_t link_count() const { return edges_.size(); }
  const VertexProps& operator[](Vertex v) const { return graph[v]; }
  const EdgeProps& operator[](Edge e) const { return graph[e]; }

  // Throws luwu::InputError naming the missing vertex.
  Vertex vertex(const std::string& name) const;
  std::optional<Vertex> find_vertex(const std::string& name) const;
  // Edges in insertion order (edge(i) has index i).
  const std::vector<Edge>& edges() const { return edges_; }
  Edge edge(std::size_t index) const { return edges_.at(index); }
  // A link's endpoints as created ("from", "to" in JSON).  Use these, not boost::source/target:
  // an undirected edge descriptor from out_edges(u) has source u whichever way it was added.
  Vertex link_from(Edge e) const { return boost::source(edges_[graph[e].index], graph); }
  Vertex link_to(Edge e) const { return boost::target(edges_[graph[e].index], graph); }

  std::vector<Vertex> gpus() const;  // in rank order
  std::vector<Vertex> of_kind(VertexKind kind) const;
  std::vector<Vertex> network_switches() const;  // plain and programmable
  // The GPU's network interface / host CPU: the nearest NIC (CPU) reached over PCIe links only.
  // When k GPUs share the same nearest NICs (two GPUs and two NICs on one PCIe switch), the
  // i-th GPU (vertex order) gets NIC i * nics / k; CPU ties go to the lowest vertex index.
  // Throws luwu::InputError if there is none.
  Vertex nic_of(Vertex gpu) const;
  Vertex cpu_of(Vertex gpu) const;
  // Whether `from` reaches `to` over PCIe links through PCIe switches only, without crossing a CPU's
  // root complex: NCCL's condition for GPUDirect RDMA between a GPU and a NIC (ncclTopoCheckGdr:
  // path type at most PATH_PXB, NCCL_NET_GDR_LEVEL's default).
  bool reaches_over_pcie_switches(Vertex from, Vertex to) const;
  // GPUs whose nic_of() is this NIC.
  std::vector<Vertex> gpus_behind(Vertex nic) const;
  // The first optimizer node (vertex order); optimizer_nodes(): all of them, in vertex order
  // (luwu-star's optnode, optnode1, ...).
  std::optional<Vertex> optimizer_node() const;
  std::vector<Vertex> optimizer_nodes() const { return of_kind(VertexKind::OptimizerNode); }
  // The SSDs owned by a CPU or optimizer node: reached over PCIe/NVMe links without passing
  // through another CPU, optimizer node, GPU or network element.
  std::vector<Vertex> ssds_of(Vertex host_or_node) const;
  // The DRAM vertex of a CPU or optimizer node (adjacent over a memory link), if any.
  std::optional<Vertex> memory_of(Vertex host_or_node) const;
  // The network switch a NIC is cabled to (first by edge order).
  std::optional<Vertex> switch_of(Vertex nic) const;

 private:
  void reindex_edges();
  // PCIe-only hop counts to the vertices `from` reaches (its server's PCIe tree): the searches
  // below touch only that tree, never a vector of every vertex, so finding every GPU's NIC, CPU
  // and SSDs is linear in the cluster.
  std::unordered_map<Vertex, std::size_t> pcie_hops(Vertex from) const;
  std::vector<Vertex> nearest_over_pcie(Vertex from, VertexKind a, VertexKind b, std::size_t max_results) const;
  std::map<std::string, Vertex> by_name_;
  std::map<std::string, std::size_t> edge_by_name_;
  std::vector<Edge> edges_;
};

}  // namespace luwu::topologies
