// GraphViz drawings: a large cluster is drawn with its first servers whole and the rest as one
// node (#20: a 512-GPU fat-tree was a 529 x 32,767 px strip); --full draws every server.
#include <doctest/doctest.h>

#include <string>

#include "topologies/builders.hpp"
#include "topologies/dot.hpp"

using namespace luwu::topologies;

namespace {
int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("dot: a 64-server fat-tree draws 2 servers whole and the other 62 as one node, full draws all 64") {
  FatTreeParams p;
  p.servers = 64;
  const Topology topo = build_fat_tree(p);
  const std::string collapsed = to_dot(topo);
  CHECK(count(collapsed, "subgraph cluster_server") == 2);
  CHECK(count(collapsed, "\"servers 2-63\" [shape=folder") == 1);
  CHECK(collapsed.find("x 62, each as server 0") != std::string::npos);
  // No vertex of a hidden server is drawn; their links to the drawn switches are counted.
  CHECK(collapsed.find("\"gpu16\"") == std::string::npos);
  CHECK(collapsed.find("style=dashed") != std::string::npos);
  DotOptions full;
  full.full = true;
  const std::string all = to_dot(topo, full);
  CHECK(count(all, "subgraph cluster_server") == 64);
  CHECK(all.find("servers 2-63") == std::string::npos);
  CHECK(all.size() > 4 * collapsed.size());
}

TEST_CASE("dot: up to 8 servers every server is drawn") {
  FatTreeParams p;
  p.servers = 8;
  CHECK(count(to_dot(build_fat_tree(p)), "subgraph cluster_server") == 8);
}
