#include "topologies/topology.hpp"

#include <algorithm>
#include <deque>
#include <unordered_set>
#include <stdexcept>

#include "common/choice.hpp"
#include "common/input_error.hpp"

namespace luwu::topologies {

namespace {
const std::vector<std::string> kVertexKindNames = {"gpu",       "cpu",    "pcie-switch", "nic",
                                                   "smartnic",  "nvswitch", "switch",    "programmable-switch",
                                                   "optimizer-node", "ssd", "memory"};
const std::vector<std::string> kLinkKindNames = {"pcie", "nvlink", "nvswitch", "ethernet", "nvme", "memory"};
}  // namespace

const std::vector<std::string>& vertex_kind_names() { return kVertexKindNames; }
const std::vector<std::string>& link_kind_names() { return kLinkKindNames; }
std::string to_string(VertexKind kind) { return kVertexKindNames.at(static_cast<std::size_t>(kind)); }
std::string to_string(LinkKind kind) { return kLinkKindNames.at(static_cast<std::size_t>(kind)); }
VertexKind vertex_kind_from_string(const std::string& name) {
  return static_cast<VertexKind>(luwu::choice_index(name, kVertexKindNames, "vertex kind"));
}
LinkKind link_kind_from_string(const std::string& name) {
  return static_cast<LinkKind>(luwu::choice_index(name, kLinkKindNames, "link kind"));
}

Topology::Topology(const Topology& other)
    : graph(other.graph),
      builder(other.builder),
      builder_args(other.builder_args),
      profiles(other.profiles),
      network_Bps(other.network_Bps),
      source_file(other.source_file),
      by_name_(other.by_name_),
      edge_by_name_(other.edge_by_name_) {
  reindex_edges();
}

Topology::Topology(Topology&& other) noexcept
    : graph(std::move(other.graph)),
      builder(std::move(other.builder)),
      builder_args(std::move(other.builder_args)),
      profiles(std::move(other.profiles)),
      network_Bps(other.network_Bps),
      source_file(std::move(other.source_file)),
      by_name_(std::move(other.by_name_)),
      edge_by_name_(std::move(other.edge_by_name_)) {
  reindex_edges();
  other.edges_.clear();
}

Topology& Topology::operator=(const Topology& other) {
  if (this != &other) {
    Topology copy(other);
    *this = std::move(copy);
  }
  return *this;
}

Topology& Topology::operator=(Topology&& other) noexcept {
  if (this != &other) {
    graph = std::move(other.graph);
    builder = std::move(other.builder);
    builder_args = std::move(other.builder_args);
    profiles = std::move(other.profiles);
    network_Bps = other.network_Bps;
    source_file = std::move(other.source_file);
    by_name_ = std::move(other.by_name_);
    edge_by_name_ = std::move(other.edge_by_name_);
    reindex_edges();
    other.edges_.clear();
  }
  return *this;
}

void Topology::reindex_edges() {
  edges_.assign(boost::num_edges(graph), Edge{});
  for (auto [it, end] = boost::edges(graph); it != end; ++it) edges_.at(graph[*it].index) = *it;
}

Vertex Topology::add_vertex(VertexProps props) {
  if (props.name.empty()) throw std::invalid_argument("a vertex needs a name");
  if (by_name_.count(props.name)) throw std::invalid_argument("duplicate vertex name \"" + props.name + "\"");
  std::string name = props.name;
  Vertex v = boost::add_vertex(std::move(props), graph);
  by_name_.emplace(std::move(name), v);
  return v;
}

Edge Topology::add_link(Vertex a, Vertex b, EdgeProps props) {
  if (a >= vertex_count() || b >= vertex_count()) throw std::invalid_argument("link endpoint out of range");
  if (a == b) throw std::invalid_argument("link \"" + props.name + "\" connects " + graph[a].name + " to itself");
  if (props.name.empty()) props.name = graph[a].name + "--" + graph[b].name;
  if (edge_by_name_.count(props.name)) {
    // Parallel links between the same pair get a numbered suffix.
    std::string base = props.name;
    for (int k = 2; edge_by_name_.count(props.name); ++k) props.name = base + "#" + std::to_string(k);
  }
  props.index = edges_.size();
  std::string name = props.name;
  Edge e = boost::add_edge(a, b, std::move(props), graph).first;
  edges_.push_back(e);
  edge_by_name_.emplace(std::move(name), edges_.size() - 1);
  return e;
}

Edge Topology::add_link(const std::string& a, const std::string& b, EdgeProps props) {
  return add_link(vertex(a), vertex(b), std::move(props));
}

std::optional<Vertex> Topology::find_vertex(const std::string& name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

Vertex Topology::vertex(const std::string& name) const {
  if (auto v = find_vertex(name)) return *v;
  std::vector<std::string> names;
  names.reserve(by_name_.size());
  for (const auto& [n, v] : by_name_) names.push_back(n);
  throw luwu::InputError(source_file, "", "no vertex named \"" + name + "\"" + luwu::did_you_mean(name, names));
}

std::vector<Vertex> Topology::of_kind(VertexKind kind) const {
  std::vector<Vertex> out;
  for (Vertex v = 0; v < vertex_count(); ++v)
    if (graph[v].kind == kind) out.push_back(v);
  return out;
}

std::vector<Vertex> Topology::gpus() const { return of_kind(VertexKind::Gpu); }

std::vector<Vertex> Topology::network_switches() const {
  std::vector<Vertex> out;
  for (Vertex v = 0; v < vertex_count(); ++v)
    if (is_network_switch(graph[v].kind)) out.push_back(v);
  return out;
}

// Breadth-first over PCIe links from `from`; returns the first vertices of kind a or b, nearest
// first, ties by vertex index (each BFS level is sorted).
std::vector<Vertex> Topology::nearest_over_pcie(Vertex from, VertexKind a, VertexKind b, std::size_t max_results) const {
  std::unordered_set<Vertex> seen{from};
  std::vector<Vertex> level{from}, out;
  while (!level.empty() && out.size() < max_results) {
    std::vector<Vertex> next;
    for (Vertex u : level)
      for (auto [it, end] = boost::out_edges(u, graph); it != end; ++it) {
        if (graph[*it].kind != LinkKind::Pcie) continue;
        Vertex w = boost::target(*it, graph);
        if (seen.insert(w).second) next.push_back(w);
      }
    std::sort(next.begin(), next.end());
    for (Vertex w : next)
      if ((graph[w].kind == a || graph[w].kind == b) && out.size() < max_results) out.push_back(w);
    level = std::move(next);
  }
  return out;
}

bool Topology::reaches_over_pcie_switches(Vertex from, Vertex to) const {
  std::unordered_set<Vertex> seen{from};
  std::deque<Vertex> queue{from};
  while (!queue.empty()) {
    const Vertex u = queue.front();
    queue.pop_front();
    for (auto [it, end] = boost::out_edges(u, graph); it != end; ++it) {
      if (graph[*it].kind != LinkKind::Pcie) continue;
      const Vertex w = boost::target(*it, graph);
      if (w == to) return true;
      if (graph[w].kind != VertexKind::PcieSwitch || !seen.insert(w).second) continue;
      queue.push_back(w);
    }
  }
  return false;
}

// Several GPUs may be equally near several NICs (a PCIe switch with two GPUs and two NICs): the
// NICs are then shared out in order, the k-th of those GPUs getting NIC k * nics / gpus.
Vertex Topology::nic_of(Vertex gpu) const {
  auto nearest = nearest_over_pcie(gpu, VertexKind::Nic, VertexKind::SmartNic, vertex_count());
  if (nearest.empty()) throw luwu::InputError(source_file, "", graph[gpu].name + " has no NIC reachable over PCIe");
  // Keep only the NICs at the minimum distance.
  const auto dist = pcie_hops(gpu);
  std::vector<Vertex> candidates;
  for (Vertex n : nearest)
    if (dist.at(n) == dist.at(nearest.front())) candidates.push_back(n);
  if (candidates.size() == 1) return candidates.front();
  // Peer GPUs: those in the same PCIe tree (in vertex order) whose nearest NICs are the same set.
  std::vector<Vertex> tree;
  for (const auto& [v, hops] : dist) tree.push_back(v);
  std::sort(tree.begin(), tree.end());
  std::vector<Vertex> peers;
  for (Vertex g : tree) {
    if (graph[g].kind != VertexKind::Gpu) continue;
    if (g == gpu) {
      peers.push_back(g);
      continue;
    }
    const auto gd = pcie_hops(g);
    auto hops = [&](Vertex n) {
      auto it = gd.find(n);
      return it == gd.end() ? static_cast<std::size_t>(-1) : it->second;
    };
    std::size_t best = static_cast<std::size_t>(-1);
    for (Vertex n : candidates) best = std::min(best, hops(n));
    bool same = best != static_cast<std::size_t>(-1);
    for (Vertex n : candidates) same = same && hops(n) == best;
    if (same) {
      // ... and no other NIC nearer or as near.
      for (const auto& [n, h] : gd)
        if (is_nic(graph[n].kind) && h <= best && std::find(candidates.begin(), candidates.end(), n) == candidates.end())
          same = false;
    }
    if (same) peers.push_back(g);
  }
  std::size_t k = std::find(peers.begin(), peers.end(), gpu) - peers.begin();
  return candidates[k * candidates.size() / peers.size()];
}

std::unordered_map<Vertex, std::size_t> Topology::pcie_hops(Vertex from) const {
  std::unordered_map<Vertex, std::size_t> dist{{from, 0}};
  std::deque<Vertex> queue{from};
  while (!queue.empty()) {
    Vertex u = queue.front();
    queue.pop_front();
    const std::size_t next = dist.at(u) + 1;
    for (auto [it, end] = boost::out_edges(u, graph); it != end; ++it) {
      if (graph[*it].kind != LinkKind::Pcie) continue;
      Vertex w = boost::target(*it, graph);
      if (dist.emplace(w, next).second) queue.push_back(w);
    }
  }
  return dist;
}

Vertex Topology::cpu_of(Vertex gpu) const {
  auto found = nearest_over_pcie(gpu, VertexKind::Cpu, VertexKind::OptimizerNode, 1);
  if (found.empty()) throw luwu::InputError(source_file, "", graph[gpu].name + " has no CPU reachable over PCIe");
  return found.front();
}

std::vector<Vertex> Topology::gpus_behind(Vertex nic) const {
  std::vector<Vertex> out;
  const auto dist = pcie_hops(nic);
  for (const auto& [g, hops] : dist)
    if (graph[g].kind == VertexKind::Gpu && nic_of(g) == nic) out.push_back(g);
  std::sort(out.begin(), out.end());  // rank order, as gpus()
  return out;
}

std::optional<Vertex> Topology::optimizer_node() const {
  auto nodes = of_kind(VertexKind::OptimizerNode);
  if (nodes.empty()) return std::nullopt;
  return nodes.front();
}

std::vector<Vertex> Topology::ssds_of(Vertex host) const {
  std::unordered_set<Vertex> seen{host};
  std::deque<Vertex> queue{host};
  std::vector<Vertex> out;
  while (!queue.empty()) {
    Vertex u = queue.front();
    queue.pop_front();
    for (auto [it, end] = boost::out_edges(u, graph); it != end; ++it) {
      LinkKind lk = graph[*it].kind;
      if (lk != LinkKind::Pcie && lk != LinkKind::Nvme) continue;
      Vertex w = boost::target(*it, graph);
      if (!seen.insert(w).second) continue;
      VertexKind k = graph[w].kind;
      if (k == VertexKind::Ssd) out.push_back(w);
      else if (k == VertexKind::PcieSwitch) queue.push_back(w);  // only PCIe fabric is traversed
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<Vertex> Topology::memory_of(Vertex host) const {
  std::optional<Vertex> best;
  for (auto [it, end] = boost::out_edges(host, graph); it != end; ++it) {
    Vertex w = boost::target(*it, graph);
    if (graph[*it].kind == LinkKind::Memory && graph[w].kind == VertexKind::Memory && (!best || w < *best)) best = w;
  }
  return best;
}

std::optional<Vertex> Topology::switch_of(Vertex nic) const {
  std::optional<Vertex> best;
  std::size_t best_index = 0;
  for (auto [it, end] = boost::out_edges(nic, graph); it != end; ++it) {
    Vertex w = boost::target(*it, graph);
    if (is_network_switch(graph[w].kind) && (!best || graph[*it].index < best_index))
      best = w, best_index = graph[*it].index;
  }
  return best;
}

}  // namespace luwu::topologies
