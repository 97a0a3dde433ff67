#include <doctest/doctest.h>

#include <algorithm>

#include "models/models.hpp"
#include "tests/topologies/topology_test_support.hpp"
#include "topologies/builders.hpp"
#include "topologies/validate.hpp"

using namespace topo_test;
using namespace luwu::topologies;

namespace {
std::size_t count_links(const Topology& t, LinkKind k) {
  return std::count_if(t.edges().begin(), t.edges().end(), [&](Edge e) { return t[e].kind == k; });
}
double goodput_of(const std::string& nic_profile, double line_rate_Bps) {
  auto p = luwu::models::find_profile(nic_profile);
  // RoCE goodput: line rate * mtu / (mtu + per-packet header bytes)
  return line_rate_Bps * p.get("mtu") / (p.get("mtu") + p.get("header_overhead"));
}
}  // namespace

TEST_CASE("luwu-star: counts, names and look-ups for 3 workers") {
  LuwuStarParams p;
  p.workers = 3;
  p.nvme_per_worker = 2;
  p.optimizer_nics = 2;
  p.optimizer_ssds = 4;
  Topology t = build_luwu_star(p);
  // Per worker: gpu, pcie switch, smartnic, cpu, dram, 2 nvme = 7 vertices; plus switch,
  // optnode, optnode-dram, 2 optnode NICs, 4 optnode SSDs = 9.
  CHECK(t.vertex_count() == 3 * 7 + 9);
  // Per worker: gpu-pcie, nic-pcie, pcie-cpu, cpu-dram, 2 cpu-nvme, nic-switch = 7 links; plus
  // optnode-dram, 2 x (optnode-nic, nic-switch), 4 optnode-ssd = 9.
  CHECK(t.link_count() == 3 * 7 + 9);
  CHECK(count_links(t, LinkKind::Ethernet) == 3 + 2);
  CHECK(count_links(t, LinkKind::Nvme) == 3 * 2 + 4);
  CHECK(t.gpus().size() == 3);
  CHECK(t[t.gpus()[2]].name == "gpu2");
  CHECK(t[t.nic_of(t.vertex("gpu1"))].name == "nic1");
  CHECK(t[t.nic_of(t.vertex("gpu1"))].kind == VertexKind::SmartNic);
  CHECK(t[t.cpu_of(t.vertex("gpu2"))].name == "cpu2");
  CHECK(t[t.vertex("switch")].kind == VertexKind::ProgrammableSwitch);
  REQUIRE(t.optimizer_node());
  CHECK(t[*t.optimizer_node()].name == "optnode");
  auto ssds = t.ssds_of(*t.optimizer_node());
  REQUIRE(ssds.size() == 4);
  CHECK(t[ssds[3]].name == "optnode-ssd3");
  auto nvme = t.ssds_of(t.vertex("cpu1"));
  REQUIRE(nvme.size() == 2);
  CHECK(t[nvme[0]].name == "nvme1-0");
  CHECK(t[*t.memory_of(t.vertex("cpu0"))].name == "dram0");
  CHECK(t[*t.switch_of(t.vertex("optnode-nic1"))].name == "switch");
  CHECK(t[t.vertex("gpu0")].server == 0);
  CHECK(t[t.vertex("switch")].server == -1);
  // Switch ports and speed come from the switch profile.
  auto tofino = luwu::models::find_profile("tofino");
  CHECK(t[t.vertex("switch")].ports == static_cast<int>(tofino.get("ports")));
  CHECK(t[t.vertex("switch")].port_Bps == doctest::Approx(tofino.get("port_rate")));
  validate_topology(t, "");
}

TEST_CASE("luwu-star: the network speed override sets the NIC line rate of every ethernet link") {
  LuwuStarParams p;
  p.workers = 2;
  p.network_Bps = 25e9 / 8;  // 25 Gb/s
  Topology t = build_luwu_star(p);
  for (Edge e : t.edges())
    if (t[e].kind == LinkKind::Ethernet) CHECK(t[e].bandwidth_Bps == doctest::Approx(goodput_of(p.nic_profile, 25e9 / 8)));
  // Without the override the profile's line rate is used.
  Topology d = build_luwu_star(LuwuStarParams{});
  double line = luwu::models::find_profile("alveo-u50").get("line_rate");
  CHECK(d[d.edge(0)].kind == LinkKind::Pcie);
  for (Edge e : d.edges())
    if (d[e].kind == LinkKind::Ethernet) CHECK(d[e].bandwidth_Bps == doctest::Approx(goodput_of("alveo-u50", line)));
}

TEST_CASE("luwu-star: bad parameters are rejected") {
  LuwuStarParams p;
  p.workers = 0;
  CHECK_THROWS_AS(build_luwu_star(p), std::invalid_argument);
  p.workers = 64;  // 64 workers + 1 optimizer NIC > 64 tofino ports
  CHECK_THROWS_AS(build_luwu_star(p), std::invalid_argument);
  p.workers = 2;
  p.network_Bps = 400e9 / 8;  // faster than tofino's 100 Gb/s ports
  CHECK_THROWS_AS(build_luwu_star(p), std::invalid_argument);
  p.network_Bps = 0;
  p.gpu_profile = "a100-40gb-sxmm";
  CHECK_THROWS_AS(build_luwu_star(p), luwu::InputError);
}

TEST_CASE("luwu-star with 8-GPU servers: DGX-like servers, a SmartNIC per GPU, the optimizer node on the switch") {
  LuwuStarParams p;
  p.workers = 16;
  p.gpus_per_server = 8;
  p.nvme_per_worker = 1;
  Topology t = build_luwu_star(p);
  CHECK(t.gpus().size() == 16);
  CHECK(count_links(t, LinkKind::Nvswitch) == 16);
  // 16 worker NICs and the optimizer node's one on the switch.
  CHECK(boost::out_degree(t.vertex("switch"), t.graph) == 17);
  CHECK(t[t.nic_of(t.vertex("gpu3"))].name == "nic0-3");
  CHECK(t[t.nic_of(t.vertex("gpu12"))].name == "nic1-4");
  CHECK(t[t.cpu_of(t.vertex("gpu12"))].name == "cpu1");
  CHECK(t.find_vertex("optnode").has_value());
  CHECK(t.builder_args.at("gpus_per_server") == 8);
  validate_topology(t, "");
  // Two racks of 8 NICs: a server per rack.
  p.racks = 2;
  Topology racked = build_luwu_star(p);
  CHECK(boost::out_degree(racked.vertex("tor1"), racked.graph) == 9);
  // Workers must fill whole servers.
  p.workers = 12;
  p.racks = 1;
  CHECK_THROWS_AS(build_luwu_star(p), std::invalid_argument);
}

TEST_CASE("dgx: 2 servers of 8 GPUs, a NIC per GPU pair") {
  DgxParams p;
  p.servers = 2;
  p.gpus_per_server = 8;
  p.gpus_per_nic = 2;
  p.gpus_per_pcie_switch = 2;
  p.nvme_per_server = 1;
  Topology t = build_dgx(p);
  // Per server: 8 GPUs, nvswitch, cpu, dram, 4 PCIe switches, 4 NICs, 1 NVMe = 20; + switch.
  CHECK(t.vertex_count() == 2 * 20 + 1);
  // Per server: 8 GPU-nvswitch, cpu-dram, 4 pcie-cpu, 8 gpu-pcie, 4 nic-pcie, 1 nvme,
  // 4 NIC uplinks = 30.
  CHECK(t.link_count() == 2 * 30);
  CHECK(count_links(t, LinkKind::Nvswitch) == 16);
  CHECK(t[t.nic_of(t.vertex("gpu3"))].name == "nic0-1");
  CHECK(t[t.nic_of(t.vertex("gpu2"))].name == "nic0-1");
  CHECK(t[t.nic_of(t.vertex("gpu12"))].name == "nic1-2");
  CHECK(t[t.cpu_of(t.vertex("gpu12"))].name == "cpu1");
  auto behind = t.gpus_behind(t.vertex("nic1-3"));
  REQUIRE(behind.size() == 2);
  CHECK(t[behind[0]].name == "gpu14");
  CHECK(t[behind[1]].name == "gpu15");
  validate_topology(t, "");
}

TEST_CASE("dgx: a NIC per GPU shares the PCIe switch's NICs out in order") {
  DgxParams p;
  p.servers = 1;
  p.gpus_per_nic = 1;
  Topology t = build_dgx(p);
  // gpu2 and gpu3 share pcie0-1 with nic0-2 and nic0-3.
  CHECK(t[t.nic_of(t.vertex("gpu2"))].name == "nic0-2");
  CHECK(t[t.nic_of(t.vertex("gpu3"))].name == "nic0-3");
  CHECK(t.gpus_behind(t.vertex("nic0-3")) == std::vector<Vertex>{t.vertex("gpu3")});
}

TEST_CASE("fat-tree, 2 tiers: counts for 4 servers of 2 GPUs, 2 NICs per leaf") {
  FatTreeParams p;
  p.servers = 4;
  p.gpus_per_server = 2;
  p.gpus_per_pcie_switch = 2;
  p.leaf_down_ports = 2;
  Topology t = build_fat_tree(p);
  // 8 NICs / 2 per leaf = 4 leaves; up = 2 / 1.0 = 2 spines.
  // Per server: 2 GPUs, nvswitch, cpu, dram, 1 PCIe switch, 2 NICs = 8.
  CHECK(t.vertex_count() == 4 * 8 + 4 + 2);
  // Per server: 2 nvswitch, dram, pcie-cpu, 2 gpu-pcie, 2 nic-pcie = 8; 8 NIC uplinks; 4 x 2 trunks.
  CHECK(t.link_count() == 4 * 8 + 8 + 8);
  CHECK(t.network_switches().size() == 6);
  validate_topology(t, "");

  p.oversubscription = 2.0;  // 2 down : 1 up
  Topology o = build_fat_tree(p);
  CHECK(o.vertex_count() == 4 * 8 + 4 + 1);
  CHECK(o.link_count() == 4 * 8 + 8 + 4);
}

TEST_CASE("fat-tree, 3 tiers of 4-port switches is the k = 4 fat-tree") {
  FatTreeParams p;
  p.servers = 8;
  p.gpus_per_server = 1;
  p.gpus_per_pcie_switch = 1;
  p.tiers = 3;
  const auto tiny_switch = small_switch_profile(4);
  p.switch_profile = tiny_switch->path;
  Topology t = build_fat_tree(p);
  // k = 4: 8 hosts, 4 leaves (2 per pod), 2 pods x 2 aggregation switches, (k/2)^2 = 4 cores.
  CHECK(t.of_kind(VertexKind::Gpu).size() == 8);
  CHECK(t.network_switches().size() == 4 + 4 + 4);
  // Per server: gpu, cpu, dram, pcie switch, nic = 5 vertices; gpu-pcie, nic-pcie, pcie-cpu,
  // cpu-dram, nic uplink = 5 links.  Leaf-agg: 4 leaves x 2; agg-core: 4 aggs x 2.
  CHECK(t.vertex_count() == 8 * 5 + 12);
  CHECK(t.link_count() == 8 * 5 + 8 + 8);
  validate_topology(t, "");
  // Leaves: 2 NICs + 2 aggs; aggs: 2 leaves + 2 cores; cores: one agg per pod = 2.
  for (const char* n : {"leaf0", "leaf3", "agg0", "agg3"}) CHECK(boost::out_degree(t.vertex(n), t.graph) == 4);
  for (const char* n : {"core0", "core3"}) CHECK(boost::out_degree(t.vertex(n), t.graph) == 2);
  // agg j of every pod goes to plane j: agg1 (pod 0) and agg3 (pod 1) reach core2 and core3.
  CHECK(boost::edge(t.vertex("agg1"), t.vertex("core2"), t.graph).second);
  CHECK(boost::edge(t.vertex("agg3"), t.vertex("core3"), t.graph).second);
  CHECK_FALSE(boost::edge(t.vertex("agg1"), t.vertex("core0"), t.graph).second);
  // 24 servers need 12 leaves = 6 pods, more than a core's 4 ports.
  p.servers = 24;
  CHECK_THROWS_AS(build_fat_tree(p), std::invalid_argument);
  // 2 tiers: 10 servers need 5 leaves, more than a spine's 4 ports.
  p.tiers = 2;
  p.servers = 10;
  CHECK_THROWS_AS(build_fat_tree(p), std::invalid_argument);
}

TEST_CASE("builders: a catalog's profiles replace the shipped ones of their names, and the topology keeps them") {
  using luwu::models::apply_override;
  using luwu::models::find_profile;
  luwu::models::ProfileCatalog catalog;
  auto ssd = find_profile("samsung-pm1733");
  apply_override(ssd, "read_bandwidth", 9e9);  // shipped: 7.0 GB/s read, 3.8 GB/s write
  catalog.add(ssd);
  auto gpu = find_profile("a100-40gb-sxm");
  apply_override(gpu, "peak_fp16_flops", 156e12);  // shipped: 312 TFLOP/s
  catalog.add(gpu);
  auto nic = find_profile("alveo-u50");
  apply_override(nic, "line_rate", 50e9 / 8);  // shipped: 100 Gb/s
  catalog.add(nic);

  LuwuStarParams p;
  p.workers = 2;
  const Topology t = build_luwu_star(p, catalog);
  // builder_parts.hpp: the NVMe link carries max(read, write); GPU speed = peak fp16; NIC uplinks
  // the RDMA goodput of the line rate.
  CHECK(t[t.vertex("nvme1-0")].read_Bps == 9e9);
  CHECK(t[t.vertex("optnode-ssd0")].read_Bps == 9e9);
  CHECK(t[t.vertex("gpu0")].speed_flops == 156e12);
  for (Edge e : t.edges()) {
    if (t[e].kind == LinkKind::Nvme) CHECK(t[e].bandwidth_Bps == 9e9);
    if (t[e].kind == LinkKind::Ethernet) CHECK(t[e].bandwidth_Bps == doctest::Approx(goodput_of("alveo-u50", 50e9 / 8)));
  }
  REQUIRE(t.profiles.find("samsung-pm1733") != nullptr);
  CHECK(t.profiles.find("samsung-pm1733")->get("read_bandwidth") == 9e9);
  CHECK(t.profiles.profiles().size() == 3);
  CHECK(t.network_Bps == 0);

  // Without a catalog: the shipped profiles, and none of the catalog's numbers stick (the
  // builders' cache of shipped profiles must not have kept them).
  const Topology shipped = build_luwu_star(p);
  CHECK(shipped.profiles.empty());
  CHECK(shipped[shipped.vertex("nvme1-0")].read_Bps == 7e9);
  CHECK(shipped[shipped.vertex("gpu0")].speed_flops == 312e12);

  // dgx and fat-tree: an NVLink and a switch profile from the catalog.
  auto nvlink = find_profile("nvlink3-a100");
  apply_override(nvlink, "per_direction_bandwidth", 100e9);
  auto tofino = find_profile("tofino");
  apply_override(tofino, "pipeline_latency", 2e-6);
  luwu::models::ProfileCatalog servers;
  servers.add(nvlink);
  servers.add(tofino);
  DgxParams d;
  d.servers = 1;
  d.gpus_per_server = 2;
  d.switch_profile = "tofino";
  d.nic_profile = "rdma-nic-100g";  // the 200 Gb/s default would exceed tofino's 100 Gb/s ports
  const Topology dgx = build_dgx(d, servers);
  for (Edge e : dgx.edges())
    if (dgx[e].kind == LinkKind::Nvswitch) CHECK(dgx[e].bandwidth_Bps == 100e9);
  CHECK(dgx.profiles.find("nvlink3-a100") != nullptr);
  FatTreeParams f;
  f.servers = 2;
  f.gpus_per_server = 2;
  f.network_Bps = 50e9 / 8;
  const Topology tree = build_fat_tree(f, servers);
  // A switch-to-switch trunk's latency is one pipeline latency.
  std::size_t trunks = 0;
  for (Edge e : tree.edges())
    if (tree[tree.link_from(e)].kind == VertexKind::ProgrammableSwitch &&
        tree[tree.link_to(e)].kind == VertexKind::ProgrammableSwitch) {
      CHECK(tree[e].latency_s == 2e-6);
      ++trunks;
    }
  CHECK(trunks > 0);
  CHECK(tree.network_Bps == 50e9 / 8);
}

TEST_CASE("luwu-star optimizer_nodes = 2: two full optimizer nodes, each with its DRAM, NICs and SSDs on the switch") {
  LuwuStarParams p;
  p.workers = 4;
  p.optimizer_nics = 2;
  p.optimizer_ssds = 3;
  p.optimizer_nodes = 2;
  Topology t = build_luwu_star(p);
  // W (5 + nvme_per_worker) + 1 switch + N (2 + K + S); links W (5 + nvme) + N (1 + 2 K + S).
  CHECK(t.vertex_count() == 4 * (5 + 1) + 1 + 2 * (2 + 2 + 3));
  CHECK(t.link_count() == 4 * (5 + 1) + 2 * (1 + 2 * 2 + 3));
  const auto nodes = t.optimizer_nodes();
  REQUIRE(nodes.size() == 2);
  CHECK(t[nodes[0]].name == "optnode");  // the first keeps the single node's names
  CHECK(t[nodes[1]].name == "optnode1");
  CHECK(t.optimizer_node() == nodes[0]);
  const Vertex sw = t.vertex("switch");
  for (const std::string id : {"optnode", "optnode1"}) {
    const Vertex node = t.vertex(id);
    const auto ssds = t.ssds_of(node);
    REQUIRE(ssds.size() == 3);
    for (std::size_t j = 0; j < ssds.size(); ++j) CHECK(t[ssds[j]].name == id + "-ssd" + std::to_string(j));
    CHECK(t[*t.memory_of(node)].name == id + "-dram");
    for (int k = 0; k < 2; ++k) {
      const Vertex nic = t.vertex(id + "-nic" + std::to_string(k));
      CHECK(boost::edge(node, nic, t.graph).second);
      CHECK(*t.switch_of(nic) == sw);
    }
  }
  // 4 worker NICs and 2 x 2 node NICs on the switch.
  CHECK(boost::out_degree(sw, t.graph) == 4 + 4);
  CHECK(t.builder_args.at("optimizer_nodes") == 2);
  validate_topology(t, "");
  // One node: the record and the names as before.
  p.optimizer_nodes = 1;
  Topology single = build_luwu_star(p);
  CHECK(single.optimizer_nodes().size() == 1);
  CHECK_FALSE(single.builder_args.contains("optimizer_nodes"));
  CHECK_FALSE(single.find_vertex("optnode1").has_value());
  p.optimizer_nodes = 0;
  CHECK_THROWS_WITH_AS(build_luwu_star(p), doctest::Contains("optimizer_nodes (0)"), std::invalid_argument);
  // Their NICs take the cluster switch's ports: 60 workers + 3 x 2 node NICs > the Tofino's 64.
  p.workers = 60;
  p.optimizer_nodes = 3;
  CHECK_THROWS_WITH_AS(build_luwu_star(p), doctest::Contains("6 optimizer-node NICs"), std::invalid_argument);
}

TEST_CASE("luwu-star trunks_per_rack = 4: each rack's trunk is one link of 4 trunks' bandwidth, 4 NIC rates") {
  LuwuStarParams p;
  p.workers = 8;
  p.racks = 2;
  Topology one = build_luwu_star(p);
  p.trunks_per_rack = 4;
  Topology four = build_luwu_star(p);
  CHECK(four.link_count() == one.link_count());
  for (const std::string tor : {"tor0", "tor1"}) {
    const auto [trunk1, found1] = boost::edge(one.vertex(tor), one.vertex("switch"), one.graph);
    const auto [trunk4, found4] = boost::edge(four.vertex(tor), four.vertex("switch"), four.graph);
    REQUIRE((found1 && found4));
    CHECK(four[trunk4].bandwidth_Bps == doctest::Approx(4 * one[trunk1].bandwidth_Bps).epsilon(1e-15));
    // The alveo-u50's 100 Gb/s on the Tofino's 100 Gb/s ports: a trunk is a NIC link's rate.
    const auto [uplink, found] = boost::edge(four.vertex("nic0"), four.vertex("tor0"), four.graph);
    REQUIRE(found);
    CHECK(four[trunk4].bandwidth_Bps == doctest::Approx(4 * four[uplink].bandwidth_Bps).epsilon(1e-15));
  }
  CHECK(four.builder_args.at("trunks_per_rack") == 4);
  validate_topology(four, "");
  // The trunks take ports: 2 racks x 40 trunks exceed the cluster switch's 64.
  p.trunks_per_rack = 40;
  CHECK_THROWS_WITH_AS(build_luwu_star(p), doctest::Contains("80 rack trunks"), std::invalid_argument);
  p.trunks_per_rack = 0;
  CHECK_THROWS_WITH_AS(build_luwu_star(p), doctest::Contains("trunks_per_rack (0)"), std::invalid_argument);
  // One switch has no trunks.
  p.trunks_per_rack = 4;
  p.racks = 1;
  CHECK_THROWS_WITH_AS(build_luwu_star(p), doctest::Contains("racks must be > 1"), std::invalid_argument);
}

TEST_CASE("luwu-star pods: racks in contiguous blocks under pod switches, each pod trunked to the cluster switch") {
  LuwuStarParams p;
  p.workers = 32;
  p.racks = 4;
  Topology racked = build_luwu_star(p);
  p.pods = 2;
  Topology podded = build_luwu_star(p);
  // 32 single-GPU workers (6 vertices and 6 links each with one NVMe SSD), the cluster switch, one
  // optimizer node (node, DRAM, NIC, 4 SSDs: 7 vertices and 1 + 2 + 4 links), 4 ToRs with a trunk
  // each, and 2 pod switches with a trunk each.
  CHECK(racked.vertex_count() == 32 * 6 + 1 + 7 + 4);
  CHECK(racked.link_count() == 32 * 6 + 7 + 4);
  CHECK(podded.vertex_count() == 32 * 6 + 1 + 7 + 4 + 2);
  CHECK(podded.link_count() == 32 * 6 + 7 + 4 + 2);
  const Vertex sw = podded.vertex("switch");
  const int expected_pod[] = {0, 0, 1, 1};
  for (int k = 0; k < 4; ++k) {
    const Vertex tor = podded.vertex("tor" + std::to_string(k));
    CHECK(boost::edge(tor, podded.vertex("pod" + std::to_string(expected_pod[k])), podded.graph).second);
    CHECK_FALSE(boost::edge(tor, sw, podded.graph).second);
    CHECK(boost::out_degree(tor, podded.graph) == 8 + 1);
  }
  for (int j = 0; j < 2; ++j) {
    const Vertex pod = podded.vertex("pod" + std::to_string(j));
    const auto [trunk, found] = boost::edge(pod, sw, podded.graph);
    REQUIRE(found);
    // One trunk: a NIC link's rate (the alveo-u50's 100 Gb/s on the Tofino's 100 Gb/s ports).
    const auto [uplink, nic_found] = boost::edge(podded.vertex("nic0"), podded.vertex("tor0"), podded.graph);
    REQUIRE(nic_found);
    CHECK(podded[trunk].bandwidth_Bps == doctest::Approx(podded[uplink].bandwidth_Bps).epsilon(1e-15));
    CHECK(podded[pod].kind == VertexKind::ProgrammableSwitch);
    CHECK(boost::out_degree(pod, podded.graph) == 2 + 1);
  }
  // The cluster switch: 2 pod trunks and the optimizer node's NIC.
  CHECK(boost::out_degree(sw, podded.graph) == 2 + 1);
  CHECK(podded.builder_args.at("pods") == 2);
  CHECK_FALSE(podded.builder_args.contains("trunks_per_pod"));
  CHECK_FALSE(racked.builder_args.contains("pods"));
  validate_topology(podded, "");

  // An uneven split: 5 racks over 2 pods, 3 and 2; trunks_per_pod 3 is one link of 3 trunks' rate.
  p.racks = 5;
  p.trunks_per_pod = 3;
  Topology uneven = build_luwu_star(p);
  for (int k = 0; k < 5; ++k)
    CHECK(boost::edge(uneven.vertex("tor" + std::to_string(k)), uneven.vertex(k < 3 ? "pod0" : "pod1"), uneven.graph).second);
  const auto [trunk3, found3] = boost::edge(uneven.vertex("pod1"), uneven.vertex("switch"), uneven.graph);
  const auto [rack_trunk, found1] = boost::edge(uneven.vertex("tor4"), uneven.vertex("pod1"), uneven.graph);
  REQUIRE((found3 && found1));
  CHECK(uneven[trunk3].bandwidth_Bps == doctest::Approx(3 * uneven[rack_trunk].bandwidth_Bps).epsilon(1e-15));
  CHECK(uneven.builder_args.at("trunks_per_pod") == 3);
  validate_topology(uneven, "");
}

TEST_CASE("luwu-star pods: errors, port counts of pod and cluster switches, and 32,768 GPUs in 576 racks of 12 pods") {
  LuwuStarParams p;
  p.workers = 8;
  p.racks = 2;
  p.pods = 0;
  CHECK_THROWS_WITH_AS(build_luwu_star(p), doctest::Contains("pods (0)"), std::invalid_argument);
  p.pods = 3;
  CHECK_THROWS_WITH_AS(build_luwu_star(p), doctest::Contains("racks (2) must be > 1 and at least pods"), std::invalid_argument);
  p.pods = 2;
  p.racks = 1;
  CHECK_THROWS_WITH_AS(build_luwu_star(p), doctest::Contains("racks (1) must be > 1"), std::invalid_argument);
  p.racks = 2;
  p.pods = 1;
  p.trunks_per_pod = 2;
  CHECK_THROWS_WITH_AS(build_luwu_star(p), doctest::Contains("pods must be > 1"), std::invalid_argument);
  p.trunks_per_pod = 0;
  CHECK_THROWS_WITH_AS(build_luwu_star(p), doctest::Contains("trunks_per_pod (0)"), std::invalid_argument);

  // 65 racks of 2 exceed the cluster switch's 64 ports; 2 pods of 33 and 32 racks (and a trunk up) fit.
  p.workers = 130;
  p.racks = 65;
  p.pods = 1;
  p.trunks_per_pod = 1;
  CHECK_THROWS_WITH_AS(build_luwu_star(p), doctest::Contains("65 rack trunks"), std::invalid_argument);
  p.pods = 2;
  CHECK_NOTHROW(validate_topology(build_luwu_star(p), ""));
  // A pod switch: 32 racks x 2 trunks + 1 trunk up > 64.
  p.trunks_per_rack = 2;
  CHECK_THROWS_WITH_AS(build_luwu_star(p), doctest::Contains("33 racks per pod x 2 trunk(s) + 1 trunk(s) up"),
                       std::invalid_argument);
  // The cluster switch: 32 pods x 2 trunks + the optimizer node's NIC > 64.
  p.trunks_per_rack = 1;
  p.racks = 64;
  p.workers = 128;
  p.pods = 32;
  p.trunks_per_pod = 2;
  CHECK_THROWS_WITH_AS(build_luwu_star(p), doctest::Contains("64 pod trunks + 1 optimizer-node NICs"),
                       std::invalid_argument);

  // The paper's scale-out: 4,096 servers of 8 GPUs, a SmartNIC per GPU, in 576 racks of 57 or 56
  // NICs (+ 1 trunk = 58 ports), 12 pods of 48 racks (+ 4 trunks up = 52 ports), and the cluster
  // switch's 12 x 4 pod trunks + 16 optimizer nodes' NICs = 64 ports.
  LuwuStarParams big;
  big.workers = 32768;
  big.gpus_per_server = 8;
  big.racks = 576;
  big.pods = 12;
  big.trunks_per_pod = 4;
  big.optimizer_nodes = 16;
  big.optimizer_ssds = 1;
  big.nvme_per_worker = 0;
  Topology t = build_luwu_star(big);
  validate_topology(t, "");
  CHECK(boost::out_degree(t.vertex("switch"), t.graph) == 12 + 16);
  CHECK(boost::out_degree(t.vertex("pod11"), t.graph) == 48 + 1);
  CHECK(boost::out_degree(t.vertex("tor0"), t.graph) == 57 + 1);    // 32768 = 576 x 56 + 512: 512 racks of 57
  CHECK(boost::out_degree(t.vertex("tor575"), t.graph) == 56 + 1);
  // One more optimizer node overflows the cluster switch.
  big.optimizer_nodes = 17;
  CHECK_THROWS_WITH_AS(build_luwu_star(big), doctest::Contains("48 pod trunks + 17 optimizer-node NICs"),
                       std::invalid_argument);
}
