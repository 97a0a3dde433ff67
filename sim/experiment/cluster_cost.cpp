#include "sim/experiment/cluster_cost.hpp"

#include <algorithm>

namespace luwu::sim {

using topologies::VertexKind;

ClusterCost cluster_cost(const topologies::Topology& topology, const models::PriceList& prices, ClusterParts used) {
  const auto& g = topology.graph;
  ClusterCost cost;
  cost.price_list = prices.name;
  // Kinds each server's own price already includes.
  std::map<int, std::vector<std::string>> included;
  for (auto v : boost::make_iterator_range(boost::vertices(g)))
    if (g[v].kind == VertexKind::Cpu)
      if (const auto* p = prices.find(g[v].profile)) included[g[v].server] = p->includes;

  // Machines outside the worker servers (the optimizer node, parameter servers) count, with the
  // NICs and SSDs they hold, only for a system that uses them.
  std::map<topologies::Vertex, bool> outside_used;
  for (auto v : boost::make_iterator_range(boost::vertices(g))) {
    const bool node = g[v].kind == VertexKind::OptimizerNode;
    if (g[v].server >= 0 || (!node && g[v].kind != VertexKind::Cpu)) continue;
    const bool in_use = node ? used.optimizer_node : used.parameter_servers;
    outside_used[v] = in_use;
    for (auto [it, end] = boost::adjacent_vertices(v, g); it != end; ++it) outside_used[*it] = in_use;
  }
  auto outside = [&](topologies::Vertex v) {
    auto it = outside_used.find(v);
    return it != outside_used.end() && it->second;
  };

  for (auto v : boost::make_iterator_range(boost::vertices(g))) {
    const auto& d = g[v];
    const std::string kind = topologies::to_string(d.kind);
    bool counted = false;
    switch (d.kind) {
      case VertexKind::Memory:
      case VertexKind::PcieSwitch:
      case VertexKind::NvSwitch: break;  // inside a server
      case VertexKind::Switch:
      case VertexKind::ProgrammableSwitch: counted = true; break;
      case VertexKind::OptimizerNode: counted = used.optimizer_node; break;
      case VertexKind::Ssd: counted = d.server >= 0 ? used.worker_ssds : outside(v); break;
      case VertexKind::Nic:
      case VertexKind::SmartNic: counted = d.server >= 0 || outside(v); break;
      case VertexKind::Gpu: counted = true; break;
      case VertexKind::Cpu: counted = d.server >= 0 || used.parameter_servers; break;
    }
    if (!counted) continue;
    if (d.server >= 0 && d.kind != VertexKind::Cpu) {
      const auto& in = included[d.server];
      if (std::find(in.begin(), in.end(), kind) != in.end()) continue;
    }
    const auto* p = prices.find(d.profile);
    if (!p) {
      const std::string what = d.profile + " (" + kind + ")";
      if (std::find(cost.unpriced.begin(), cost.unpriced.end(), what) == cost.unpriced.end()) cost.unpriced.push_back(what);
      continue;
    }
    ++cost.parts[d.profile];
    cost.usd += p->usd;
  }
  std::sort(cost.unpriced.begin(), cost.unpriced.end());
  return cost;
}

luwu::Json cost_to_json(const ClusterCost& cost, double tokens_per_s) {
  luwu::Json parts = luwu::Json::object();
  for (const auto& [profile, n] : cost.parts) parts[profile] = n;
  luwu::Json j = {{"price_list", cost.price_list}, {"parts", parts}, {"unpriced", cost.unpriced}};
  j["usd"] = cost.known() ? luwu::Json(cost.usd) : luwu::Json(nullptr);
  j["tokens_per_s_per_1000_usd"] =
      cost.known() && tokens_per_s > 0 && cost.usd > 0 ? luwu::Json(tokens_per_s / cost.usd * 1000) : luwu::Json(nullptr);
  return j;
}

}  // namespace luwu::sim
