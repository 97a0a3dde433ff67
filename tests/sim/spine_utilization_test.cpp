// Per-spine utilization in results (sim/experiment/spine_utilization.hpp), checked against bytes
// counted by hand on the smallest fat-tree with a choice of spine: 4 single-GPU servers, 2 per
// leaf, 2 spines.  DDP's ring all-reduce over ranks 0-1-2-3 crosses between the leaves twice,
// 1 -> 2 and 3 -> 0, and each rank sends 2 (n-1)/n of the gradient bytes, so each of those two
// flows puts 1.5 G on the spine it takes (G = the gradient bytes).
#include <doctest/doctest.h>

#include <algorithm>

#include "sim/experiment/result.hpp"
#include "sim/experiment/simulate.hpp"
#include "sim_test_support.hpp"

using namespace luwu;
using namespace sim_test;

namespace {

topologies::Topology two_leaves_two_spines() {
  topologies::FatTreeParams p;
  p.servers = 4;
  p.gpus_per_server = 1;
  p.gpus_per_pcie_switch = 1;
  p.leaf_down_ports = 2;  // 2 leaves; oversubscription 1: 2 up ports each, so 2 spines
  return topologies::build_fat_tree(p);
}

constexpr int kLayers = 4;
constexpr std::uint64_t kParams = 10'000'000;
constexpr double kGradientBytes = kLayers * 2.0 * kParams;  // fp16

sim::SystemResult run(topologies::RouteChoice routing) {
  const auto topo = two_leaves_two_spines();
  sim::SimulationOptions options;
  options.routing = routing;
  return sim::simulate_system(synthetic_trace(kLayers, kParams, 1e12), topo, quiet_hardware(topo), *make_system("ddp"),
                              options);
}

}  // namespace

TEST_CASE("spines: single-path puts every byte between the leaves on spine0, ECMP one ring flow on each spine") {
  const auto topo = two_leaves_two_spines();
  const double trunk_Bps = topo[boost::edge(topo.vertex("leaf0"), topo.vertex("spine0"), topo.graph).first].bandwidth_Bps;
  const double per_flow = 2.0 * 3 / 4 * kGradientBytes;

  const auto single = run(topologies::RouteChoice::Shortest);
  REQUIRE(single.spines.size() == 2);
  CHECK(single.spines[0].name == "spine0");
  CHECK(single.spines[1].name == "spine1");
  CHECK(single.spines[0].bytes == doctest::Approx(2 * per_flow).epsilon(1e-12));
  CHECK(single.spines[1].bytes == 0);
  // Every link of spine0 carries one flow's bytes: leaf0 -> spine0 -> leaf1 and back the other way.
  CHECK(single.spines[0].busiest_link_utilization ==
        doctest::Approx(per_flow / (trunk_Bps * single.iteration_time_s)).epsilon(1e-12));
  CHECK(single.spines[1].busiest_link_utilization == 0);
  const auto s = sim::summarize_spines(single.spines);
  CHECK(s.bytes_mean == doctest::Approx(per_flow).epsilon(1e-12));
  REQUIRE(s.imbalance);
  CHECK(*s.imbalance == doctest::Approx(2.0));  // one spine carried all: max/mean = the spine count

  const auto ecmp = run(topologies::RouteChoice::EcmpHash);
  REQUIRE(ecmp.spines.size() == 2);
  for (const auto& spine : ecmp.spines) {
    CAPTURE(spine.name);
    CHECK(spine.bytes == doctest::Approx(per_flow).epsilon(1e-12));
    // One flow through it, one way: its two links in that direction carry it.
    CHECK(spine.busiest_link_utilization == doctest::Approx(per_flow / (trunk_Bps * ecmp.iteration_time_s)).epsilon(1e-12));
  }
  const auto e = sim::summarize_spines(ecmp.spines);
  REQUIRE(e.imbalance);
  CHECK(*e.imbalance == doctest::Approx(1.0));
  CHECK(e.utilization_min == doctest::Approx(e.utilization_max));
}

TEST_CASE("spines: results keep them through JSON, summary fields flat and the switches as columns") {
  const auto r = run(topologies::RouteChoice::Shortest);
  const Json j = sim::result_to_json(r);
  REQUIRE(j.contains("spines"));
  CHECK(j.at("spines").at("count") == 2);
  for (const auto& key : sim::spine_summary_keys()) CHECK(j.at("spines").contains(key));
  CHECK(j.at("spines").at("per_switch").at("switch") == Json::array({"spine0", "spine1"}));
  const auto back = sim::result_from_json(j);
  REQUIRE(back.spines.size() == 2);
  CHECK(back.spines[0].bytes == r.spines[0].bytes);
  CHECK(back.spines[1].busiest_link_utilization == r.spines[1].busiest_link_utilization);

  // A star has no tier above its switch: no spines, and no "spines" in the JSON.
  const auto topo = star(2);
  const auto flat = sim::simulate_system(synthetic_trace(2, kParams, 1e12), topo, quiet_hardware(topo),
                                         *make_system("ddp"), {});
  CHECK(flat.spines.empty());
  CHECK_FALSE(sim::result_to_json(flat).contains("spines"));
}
