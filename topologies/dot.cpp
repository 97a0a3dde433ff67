#include "topologies/dot.hpp"

#include <map>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include <fmt/format.h>

namespace luwu::topologies {

namespace {

struct Style {
  const char* shape;
  const char* fill;
};

Style style_of(VertexKind kind) {
  switch (kind) {
    case VertexKind::Gpu: return {"box", "#9be29b"};
    case VertexKind::Cpu: return {"ellipse", "#a9c8f0"};
    case VertexKind::PcieSwitch: return {"diamond", "#e0e0e0"};
    case VertexKind::Nic: return {"hexagon", "#f7d08a"};
    case VertexKind::SmartNic: return {"hexagon", "#f5a65b"};
    case VertexKind::NvSwitch: return {"octagon", "#c8e6a0"};
    case VertexKind::Switch: return {"doubleoctagon", "#d0d0f0"};
    case VertexKind::ProgrammableSwitch: return {"doubleoctagon", "#c9a0f0"};
    case VertexKind::OptimizerNode: return {"box3d", "#f08a8a"};
    case VertexKind::Ssd: return {"cylinder", "#dddddd"};
    case VertexKind::Memory: return {"component", "#f0f0b0"};
  }
  return {"ellipse", "#ffffff"};
}

std::string dot_quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '\\';  // keep backslashes: labels use \n line breaks
    out += c;
  }
  return out + "\"";
}

std::string trim_number(double x) { return fmt::format("{:.4g}", x); }

}  // namespace

std::string link_speed_label(const EdgeProps& link) {
  if (link.kind == LinkKind::Ethernet) return trim_number(link.bandwidth_Bps * 8 / 1e9) + " Gb/s";
  return trim_number(link.bandwidth_Bps / 1e9) + " GB/s";
}

std::string to_dot(const Topology& topo, const DotOptions& options) {
  std::string out = "graph topology {\n";
  out += "  graph [rankdir=LR, fontname=\"Helvetica\", fontsize=11, nodesep=0.15, ranksep=0.5";
  if (!topo.builder.empty()) out += ", label=" + dot_quoted(topo.builder + " topology") + ", labelloc=t";
  out += "];\n  node [style=filled, fontname=\"Helvetica\", fontsize=10];\n";
  out += "  edge [fontname=\"Helvetica\", fontsize=8];\n";

  auto node_line = [&](Vertex v) {
    const VertexProps& p = topo[v];
    Style s = style_of(p.kind);
    std::string label = p.name + "\\n" + (p.profile.empty() ? to_string(p.kind) : p.profile);
    return fmt::format("{} [shape={}, fillcolor=\"{}\", label={}];\n", dot_quoted(p.name), s.shape, s.fill,
                       dot_quoted(label));
  };
  std::map<int, std::vector<Vertex>> by_server;
  for (Vertex v = 0; v < topo.vertex_count(); ++v) by_server[topo[v].server].push_back(v);
  int servers = 0;
  for (const auto& [server, vertices] : by_server) servers += server >= 0 ? 1 : 0;
  // Servers past the first few are drawn as one node when there are many (DotOptions).
  const bool collapse = !options.full && servers > options.collapse_above_servers;
  // Hidden: the vertices of the servers past the first few, and the switches that only they reach
  // below them (a fat-tree's leaves of those servers).
  std::vector<bool> hidden_vertex(topo.vertex_count(), false);
  if (collapse) {
    for (Vertex v = 0; v < topo.vertex_count(); ++v) hidden_vertex[v] = topo[v].server >= options.servers_in_full;
    for (Vertex v = 0; v < topo.vertex_count(); ++v) {
      if (topo[v].server >= 0) continue;
      bool reaches_servers = false, only_hidden = true;
      for (auto [it, end] = boost::adjacent_vertices(v, topo.graph); it != end; ++it)
        if (topo[*it].server >= 0) reaches_servers = true, only_hidden = only_hidden && hidden_vertex[*it];
      hidden_vertex[v] = reaches_servers && only_hidden;
    }
  }
  auto hidden = [&](Vertex v) { return hidden_vertex[v]; };
  const std::string rest = fmt::format("servers {}-{}", options.servers_in_full, servers - 1);
  if (collapse)
    out += fmt::format("  {} [shape=folder, fillcolor=\"#eeeeee\", label={}];\n", dot_quoted(rest),
                       dot_quoted(fmt::format("{}\\nx {}, each as server 0, with their own switches\\n(topo dot --full draws them)", rest,
                                              servers - options.servers_in_full)));
  for (const auto& [server, vertices] : by_server) {
    if (collapse && server >= options.servers_in_full) continue;
    if (server < 0) {
      for (Vertex v : vertices)
        if (!hidden(v)) out += "  " + node_line(v);
      continue;
    }
    out += fmt::format("  subgraph cluster_server{} {{\n    label=\"server {}\"; style=rounded; color=\"#888888\";\n",
                       server, server);
    for (Vertex v : vertices) out += "    " + node_line(v);
    out += "  }\n";
  }
  // Links of hidden servers to what is drawn: one edge per (vertex, link label), with a count.
  std::map<std::pair<std::string, std::string>, int> collapsed;
  for (Edge e : topo.edges()) {
    const EdgeProps& p = topo[e];
    const Vertex a = topo.link_from(e), b = topo.link_to(e);
    const std::string label = link_speed_label(p) + " " + to_string(p.kind);
    if (hidden(a) || hidden(b)) {
      if (hidden(a) && hidden(b)) continue;  // inside the hidden servers
      ++collapsed[{topo[hidden(a) ? b : a].name, label}];
      continue;
    }
    const char* style = p.kind == LinkKind::Ethernet ? "bold" : (p.kind == LinkKind::Nvlink || p.kind == LinkKind::Nvswitch ? "solid, color=\"#2e8b57\"" : "solid");
    out += fmt::format("  {} -- {} [label={}, style={}];\n", dot_quoted(topo[a].name), dot_quoted(topo[b].name),
                       dot_quoted(label), style);
  }
  for (const auto& [key, count] : collapsed)
    out += fmt::format("  {} -- {} [label={}, style=dashed];\n", dot_quoted(rest), dot_quoted(key.first),
                       dot_quoted(fmt::format("{} x {}", count, key.second)));
  return out + "}\n";
}

}  // namespace luwu::topologies
