#include <doctest/doctest.h>

#include <set>

#include "tests/topologies/topology_test_support.hpp"
#include "topologies/builders.hpp"
#include "topologies/routes.hpp"

using namespace topo_test;
using namespace luwu::topologies;

namespace {
// 4 servers x 2 GPUs, a NIC per GPU, both NICs of a server on one leaf (2 down ports), 2 spines.
Topology leaf_spine() {
  FatTreeParams p;
  p.servers = 4;
  p.gpus_per_server = 2;
  p.gpus_per_pcie_switch = 2;
  p.leaf_down_ports = 2;
  return build_fat_tree(p);
}
}  // namespace

TEST_CASE("routes: hop counts in a leaf-spine fat-tree") {
  Topology t = leaf_spine();
  auto route = [&](const char* a, const char* b) { return shortest_route(t, t.vertex(a), t.vertex(b)); };
  // Same server: through the NVSwitch (2 hops), which the builder adds before the PCIe switch.
  CHECK(route_names(t, route("gpu0", "gpu1"), t.vertex("gpu0")) == std::vector<std::string>{"gpu0", "nvswitch0", "gpu1"});
  // NIC to NIC on different leaves: nic - leaf - spine - leaf - nic = 4 hops.
  CHECK(route("nic0-0", "nic1-0").size() == 4);
  // GPU to GPU across leaves: gpu - pcie - nic (2) + 4 + nic - pcie - gpu (2) = 8.
  auto r = route("gpu0", "gpu2");
  CHECK(r.size() == 8);
  CHECK(route_names(t, r, t.vertex("gpu0")) ==
        std::vector<std::string>{"gpu0", "pcie0-0", "nic0-0", "leaf0", "spine0", "leaf1", "nic1-0", "pcie1-0", "gpu2"});
  CHECK(route("gpu0", "gpu0").empty());
  // Deterministic and symmetric in length.
  CHECK(route("gpu2", "gpu0").size() == 8);
  CHECK(route("gpu0", "gpu2") == r);
}

TEST_CASE("routes: ECMP path counts") {
  Topology t = leaf_spine();
  auto ecmp = [&](const char* a, const char* b, std::size_t max) { return ecmp_routes(t, t.vertex(a), t.vertex(b), max); };
  // Inter-leaf: one minimum-hop path per spine.
  CHECK(ecmp("leaf0", "leaf3", 100).size() == 2);
  CHECK(ecmp("nic0-0", "nic2-1", 100).size() == 2);
  // GPU to GPU: 2 NICs on the source PCIe switch x 2 spines x 2 NICs on the destination's = 8.
  auto all = ecmp("gpu0", "gpu2", 100);
  CHECK(all.size() == 8);
  std::set<std::vector<Edge>> distinct(all.begin(), all.end());
  CHECK(distinct.size() == 8);
  for (const auto& r : all) CHECK(r.size() == 8);
  CHECK(all.front() == shortest_route(t, t.vertex("gpu0"), t.vertex("gpu2")));
  CHECK(ecmp("gpu0", "gpu2", 3).size() == 3);
  // The two NICs of one server: nic - pcie switch - nic and nic - leaf - nic, both 2 hops.
  CHECK(ecmp("nic0-0", "nic0-1", 100).size() == 2);
}

TEST_CASE("routes: the k = 4 three-tier fat-tree") {
  FatTreeParams p;
  p.servers = 8;
  p.gpus_per_server = 1;
  p.gpus_per_pcie_switch = 1;
  p.tiers = 3;
  const auto tiny_switch = small_switch_profile(4);
  p.switch_profile = tiny_switch->path;
  Topology t = build_fat_tree(p);
  auto hops = [&](const char* a, const char* b) { return shortest_route(t, t.vertex(a), t.vertex(b)).size(); };
  auto paths = [&](const char* a, const char* b) { return ecmp_routes(t, t.vertex(a), t.vertex(b), 100).size(); };
  // NICs 0,1 on leaf0; 2,3 on leaf1 (pod 0); 4..7 in pod 1.
  CHECK(hops("nic0-0", "nic1-0") == 2);  // same leaf
  CHECK(hops("nic0-0", "nic2-0") == 4);  // same pod: leaf - agg - leaf
  CHECK(hops("nic0-0", "nic4-0") == 6);  // across pods: leaf - agg - core - agg - leaf
  CHECK(paths("nic0-0", "nic2-0") == 2);  // one per aggregation switch of the pod
  CHECK(paths("nic0-0", "nic4-0") == 4);  // (k/2)^2 = 2 aggs x 2 cores
  CHECK(hops("gpu0", "gpu7") == 6 + 4);   // plus gpu - pcie - nic at both ends
}

TEST_CASE("routes: an unreachable pair is an error, not a crash") {
  Topology t;
  t.add_vertex({"a", VertexKind::Gpu, "", 0});
  t.add_vertex({"b", VertexKind::Gpu, "", 1});
  CHECK_THROWS_AS(shortest_route(t, 0, 1), luwu::InputError);
  CHECK_THROWS_AS(ecmp_routes(t, 0, 1, 4), luwu::InputError);
}

TEST_CASE("GPUDirect RDMA's path: a GPU reaches its NIC through PCIe switches only, not through the CPU") {
  // NCCL 2.20's ncclTopoCheckGdr: direct only up to PATH_PXB.  A NIC on the GPU's PCIe switch
  // qualifies; one on another root port of the CPU does not.
  Topology t;
  const EdgeProps pcie{"", LinkKind::Pcie, "", 1e10, 1e-6};
  for (const auto& [name, kind] : std::vector<std::pair<std::string, VertexKind>>{
           {"gpu0", VertexKind::Gpu}, {"sw0", VertexKind::PcieSwitch}, {"sw1", VertexKind::PcieSwitch},
           {"cpu0", VertexKind::Cpu}, {"nic_near", VertexKind::Nic}, {"nic_far", VertexKind::Nic}})
    t.add_vertex({name, kind, "", 0});
  for (const auto& [a, b] : std::vector<std::pair<std::string, std::string>>{
           {"gpu0", "sw0"}, {"sw0", "nic_near"}, {"sw0", "cpu0"}, {"cpu0", "sw1"}, {"sw1", "nic_far"}}) {
    EdgeProps e = pcie;
    e.name = a + "--" + b;
    t.add_link(a, b, e);
  }
  CHECK(t.reaches_over_pcie_switches(t.vertex("gpu0"), t.vertex("nic_near")));
  CHECK_FALSE(t.reaches_over_pcie_switches(t.vertex("gpu0"), t.vertex("nic_far")));
  // The shipped luwu-star puts each worker's NIC on its GPU's PCIe switch.
  auto star = luwu::topologies::build_luwu_star({});
  CHECK(star.reaches_over_pcie_switches(star.vertex("gpu0"), star.nic_of(star.vertex("gpu0"))));
}
