#include "topologies/summary.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "topologies/dot.hpp"
#include "topologies/routes.hpp"

namespace luwu::topologies {

namespace {
luwu::Json hop_stats(const std::vector<std::size_t>& hops) {
  if (hops.empty()) return luwu::Json::object();
  std::size_t lo = *std::min_element(hops.begin(), hops.end()), hi = *std::max_element(hops.begin(), hops.end());
  double sum = 0;
  for (auto h : hops) sum += static_cast<double>(h);
  return {{"pairs", hops.size()}, {"min_hops", lo}, {"max_hops", hi}, {"mean_hops", sum / static_cast<double>(hops.size())}};
}
}  // namespace

luwu::Json topology_summary(const Topology& topo, std::size_t max_gpu_pairs) {
  luwu::Json out;
  out["builder"] = topo.builder;
  out["builder_args"] = topo.builder_args;
  out["vertex_count"] = topo.vertex_count();
  out["link_count"] = topo.link_count();
  std::map<std::string, std::size_t> vertices;
  for (Vertex v = 0; v < topo.vertex_count(); ++v) ++vertices[to_string(topo[v].kind)];
  out["vertices_by_kind"] = vertices;
  // Links grouped by kind and speed label; bandwidth in bytes/s per direction for machines.
  std::map<std::pair<std::string, std::string>, std::pair<std::size_t, double>> links;
  for (Edge e : topo.edges()) {
    auto& slot = links[{to_string(topo[e].kind), link_speed_label(topo[e])}];
    ++slot.first;
    slot.second = topo[e].bandwidth_Bps;
  }
  luwu::Json link_rows = luwu::Json::array();
  for (const auto& [key, value] : links)
    link_rows.push_back({{"kind", key.first}, {"speed", key.second}, {"count", value.first}, {"bandwidth_Bps", value.second}});
  out["links"] = link_rows;

  luwu::Json routes = luwu::Json::object();
  auto gpus = topo.gpus();
  if (gpus.size() >= 2) {
    std::vector<std::size_t> hops;
    auto from_gpu0 = hop_distances_to(topo, gpus[0]);
    for (std::size_t i = 1; i < gpus.size() && hops.size() < max_gpu_pairs; ++i) hops.push_back(from_gpu0[gpus[i]]);
    routes["gpu_to_gpu"] = hop_stats(hops);
    routes["gpu_to_gpu"]["ecmp_paths_gpu0_to_last"] =
        ecmp_routes(topo, gpus.front(), gpus.back(), 1024).size();
  }
  auto switches = topo.network_switches();
  if (!gpus.empty() && !switches.empty()) {
    auto to_switch = hop_distances_to(topo, switches.front());
    std::vector<std::size_t> hops;
    for (std::size_t i = 0; i < gpus.size() && i < max_gpu_pairs; ++i) hops.push_back(to_switch[gpus[i]]);
    routes["gpu_to_" + topo[switches.front()].name] = hop_stats(hops);
  }
  if (auto opt = topo.optimizer_node(); opt && !gpus.empty()) {
    auto to_opt = hop_distances_to(topo, *opt);
    std::vector<std::size_t> hops;
    for (std::size_t i = 0; i < gpus.size() && i < max_gpu_pairs; ++i) hops.push_back(to_opt[gpus[i]]);
    routes["gpu_to_" + topo[*opt].name] = hop_stats(hops);
  }
  out["routes"] = routes;
  return out;
}

std::string format_summary(const luwu::Json& s) {
  std::string out;
  std::string builder = s["builder"].get<std::string>();
  out += fmt::format("topology: {} vertices, {} links{}\n", s["vertex_count"].get<std::size_t>(),
                     s["link_count"].get<std::size_t>(), builder.empty() ? "" : " (built by " + builder + ")");
  out += "vertices by kind:\n";
  for (const auto& [kind, n] : s["vertices_by_kind"].items()) out += fmt::format("  {:<20} {}\n", kind, n.get<std::size_t>());
  out += "links by kind (bandwidth per direction):\n";
  for (const auto& row : s["links"])
    out += fmt::format("  {:<10} {:>12}  x {}\n", row["kind"].get<std::string>(), row["speed"].get<std::string>(),
                       row["count"].get<std::size_t>());
  out += "routes (shortest, hop count):\n";
  for (const auto& [name, r] : s["routes"].items()) {
    if (!r.contains("pairs")) continue;
    out += fmt::format("  {:<20} {} pairs, {}-{} hops, mean {:.2f}", name, r["pairs"].get<std::size_t>(),
                       r["min_hops"].get<std::size_t>(), r["max_hops"].get<std::size_t>(), r["mean_hops"].get<double>());
    if (r.contains("ecmp_paths_gpu0_to_last"))
      out += fmt::format("; {} equal-cost paths first to last GPU", r["ecmp_paths_gpu0_to_last"].get<std::size_t>());
    out += "\n";
  }
  return out;
}

}  // namespace luwu::topologies
