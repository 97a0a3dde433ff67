// How switches pick among equal-cost routes (SimulationOptions::routing): on a two-leaf fat-tree
// with two spines, single-path routing sends every flow between the leaves over the lowest-numbered
// spine, while ECMP (a fixed hash of each flow's endpoints) spreads the flows over both, and the
// result's per-link bytes show it.  A scenario selects it as simulation.routing.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "sim/experiment/scenario.hpp"
#include "sim/experiment/simulate.hpp"
#include "sim/systems/registry.hpp"
#include "topologies/builders.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/trace.hpp"

using namespace luwu;

namespace {

// Bytes over the links that touch each spine ("spine0", "spine1").
std::map<std::string, double> spine_bytes(topologies::RouteChoice routing) {
  topologies::FatTreeParams p;
  p.servers = 4;
  p.gpus_per_server = 2;
  p.gpus_per_pcie_switch = 2;
  p.leaf_down_ports = 4;  // 8 NICs: two leaves, 4 down and 4 up ports each, over 4 spines
  const auto topo = topologies::build_fat_tree(p);
  workloads::TrainingConfig t;
  t.micro_batch = 1;
  t.seq_len = 128;
  const auto trace = workloads::generate_trace(*workloads::find_catalog_model("gpt3-125m"), t);
  sim::SimulationOptions options;
  options.routing = routing;
  options.check_memory = false;
  const auto r = sim::simulate_system(trace, topo, sim::hardware_of(topo), *sim::system_named("ddp"), options);
  std::map<std::string, double> bytes;
  for (const auto& l : r.links)
    for (const char* spine : {"spine0", "spine1", "spine2", "spine3"})
      if (l.link.find(spine) != std::string::npos) bytes[spine] += l.bytes;
  return bytes;
}

}  // namespace

TEST_CASE("single-path routing loads one spine, and ECMP spreads the flows between leaves over the spines") {
  auto single = spine_bytes(topologies::RouteChoice::Shortest);
  auto ecmp = spine_bytes(topologies::RouteChoice::EcmpHash);
  CAPTURE(single.size());
  CAPTURE(ecmp.size());
  REQUIRE(single.count("spine0"));
  CHECK(single.size() == 1);  // every cross-leaf byte over spine0
  CHECK(ecmp.size() >= 2);
  // The same bytes cross between the leaves either way.
  double total_single = 0, total_ecmp = 0;
  for (auto& [k, v] : single) total_single += v;
  for (auto& [k, v] : ecmp) total_ecmp += v;
  CHECK(total_ecmp == doctest::Approx(total_single));
}

TEST_CASE("simulation.routing is \"ecmp\" (the default) or \"single-path\", anything else is an error at its path") {
  auto scenario = [](const std::string& routing) {
    Json j = {{"model", "gpt3-125m"},
              {"training", {{"micro_batch", 1}, {"seq_len", 128}}},
              {"cluster", {{"topology", "fat-tree"}, {"servers", 2}}},
              {"systems", {"ddp"}}};
    if (!routing.empty()) j["simulation"] = {{"routing", routing}};
    return sim::scenario_from_json(JsonNode(j, "s.json"));
  };
  CHECK(scenario("").routing == topologies::RouteChoice::EcmpHash);
  CHECK(scenario("single-path").routing == topologies::RouteChoice::Shortest);
  try {
    scenario("random");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("$.simulation.routing") != std::string::npos);
  }
}
