#pragma once
// A GraphViz drawing of a topology: node shape by kind, link speed (and kind) on every edge,
// the devices of one server grouped in a box.
#include <string>

#include "topologies/topology.hpp"

namespace luwu::topologies {

struct DotOptions {
  // Past this many servers, only the first `servers_in_full` are drawn whole; the rest become one
  // node ("servers 2-63, x 62, as server 0") with one edge per switch they reach, labelled with
  // the number of links: a 512-GPU fat-tree is otherwise a drawing tens of thousands of pixels long.
  int collapse_above_servers = 8;
  int servers_in_full = 2;
  bool full = false;  // draw every server
};

std::string to_dot(const Topology& topo, const DotOptions& options = {});

// "100 Gb/s", "25 GB/s": network links in bits, device links in bytes, as vendors quote them.
std::string link_speed_label(const EdgeProps& link);

}  // namespace luwu::topologies
