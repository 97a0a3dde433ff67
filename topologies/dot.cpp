#include "topologies/dot.hpp"

#include <map>

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

std::string to_dot(const Topology& topo) {
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
  for (const auto& [server, vertices] : by_server) {
    if (server < 0) {
      for (Vertex v : vertices) out += "  " + node_line(v);
      continue;
    }
    out += fmt::format("  subgraph cluster_server{} {{\n    label=\"server {}\"; style=rounded; color=\"#888888\";\n",
                       server, server);
    for (Vertex v : vertices) out += "    " + node_line(v);
    out += "  }\n";
  }
  for (Edge e : topo.edges()) {
    const EdgeProps& p = topo[e];
    const char* style = p.kind == LinkKind::Ethernet ? "bold" : (p.kind == LinkKind::Nvlink || p.kind == LinkKind::Nvswitch ? "solid, color=\"#2e8b57\"" : "solid");
    out += fmt::format("  {} -- {} [label={}, style={}];\n", dot_quoted(topo[topo.link_from(e)].name),
                       dot_quoted(topo[topo.link_to(e)].name),
                       dot_quoted(link_speed_label(p) + " " + to_string(p.kind)), style);
  }
  return out + "}\n";
}

}  // namespace luwu::topologies
