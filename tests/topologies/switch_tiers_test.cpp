// Switch tiers from the graph (topologies/switch_tiers.hpp): counted up from the switches cabled
// to NICs.
#include <doctest/doctest.h>

#include "topologies/builders.hpp"
#include "topologies/switch_tiers.hpp"

using namespace luwu::topologies;

namespace {
std::vector<std::string> names(const Topology& t, const std::vector<Vertex>& vs) {
  std::vector<std::string> out;
  for (auto v : vs) out.push_back(t[v].name);
  return out;
}
}  // namespace

TEST_CASE("switch tiers: leaves 1 and spines 2 in a 2-tier fat-tree, aggregation 2 and cores 3 in a 3-tier one") {
  FatTreeParams p;
  p.servers = 4;
  p.gpus_per_server = 2;
  p.gpus_per_pcie_switch = 2;
  p.leaf_down_ports = 4;  // 8 NICs on 2 leaves, 4 uplinks each
  p.oversubscription = 2;  // 2 uplinks: spine0, spine1
  Topology two = build_fat_tree(p);
  auto tier = switch_tiers(two);
  CHECK(tier[two.vertex("leaf0")] == 1);
  CHECK(tier[two.vertex("leaf1")] == 1);
  CHECK(tier[two.vertex("spine1")] == 2);
  CHECK(tier[two.vertex("gpu0")] == 0);
  CHECK(tier[two.vertex("nic0-0")] == 0);
  CHECK(names(two, top_tier_switches(two)) == std::vector<std::string>{"spine0", "spine1"});

  p.tiers = 3;
  p.oversubscription = 4;  // 1 uplink per leaf: agg0 in the only pod, over 32 cores (tofino: 64 ports)
  Topology three = build_fat_tree(p);
  tier = switch_tiers(three);
  CHECK(tier[three.vertex("leaf1")] == 1);
  CHECK(tier[three.vertex("agg0")] == 2);
  CHECK(tier[three.vertex("core0")] == 3);
  const auto cores = top_tier_switches(three);
  CHECK(cores.size() == 32);
  CHECK(three[cores.front()].name == "core0");
}

TEST_CASE("switch tiers: a single switch is tier 1 and there is no top tier above it") {
  LuwuStarParams p;
  p.workers = 2;
  Topology star = build_luwu_star(p);
  CHECK(switch_tiers(star)[star.vertex("switch")] == 1);
  CHECK(top_tier_switches(star).empty());
}
