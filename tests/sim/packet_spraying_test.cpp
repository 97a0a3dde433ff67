// Packet spraying and ECMP with application-level flow splitting (simulation.routing "spray",
// simulation.flow_splitting; topologies/lowering.hpp, sim/engine/transfers.hpp, docs/routing.md).
//
// Closed forms, on 2-tier fat-trees of single-GPU servers (one NIC each, every link of one speed b):
// - A flow between leaves sprayed over the U leaf-spine routes puts bytes / U on each of them, at
//   once: with its NIC the only bottleneck, each leaf uplink runs at b / U while it lasts.
// - DDP's ring all-reduce over N ranks on 2 leaves crosses between the leaves twice (one flow each
//   way); a ring flow carries F = 2 (N-1)/N x the gradient bytes.  Sprayed, every spine gets F / U
//   from each of the two flows: 2 F / U each, imbalance exactly 1, and the busiest leaf-spine link
//   carries F / U (ECMP: F on the link it hashed the flow onto).
// - Flow splitting into k sub-flows: each sub-flow carries F / k, so every link's bytes are a
//   multiple of F / k and the bytes between the leaves are conserved.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include <simgrid/s4u.hpp>

#include "sim/engine/engine_config.hpp"
#include "sim/engine/traffic_meter.hpp"
#include "sim/engine/transfers.hpp"
#include "sim/experiment/isolated_run.hpp"
#include "sim/experiment/result.hpp"
#include "sim/experiment/scenario.hpp"
#include "sim/experiment/simulate.hpp"
#include "sim_test_support.hpp"
#include "topologies/builders.hpp"
#include "topologies/lowering.hpp"

using namespace luwu;
using namespace sim_test;

namespace {

// N single-GPU servers, 2 leaves of N/2 NICs, down:up `oversubscription`.
topologies::Topology leaf_spine(int servers, double oversubscription = 1) {
  topologies::FatTreeParams p;
  p.servers = servers;
  p.gpus_per_server = 1;
  p.gpus_per_pcie_switch = 1;
  p.leaf_down_ports = servers / 2;
  p.oversubscription = oversubscription;
  return topologies::build_fat_tree(p);
}

constexpr int kLayers = 4;
constexpr std::uint64_t kParams = 10'000'000;
constexpr double kGradientBytes = kLayers * 2.0 * kParams;  // fp16

sim::SystemResult run_ddp(const topologies::Topology& topo, topologies::RouteChoice routing, int flow_splitting = 1) {
  sim::SimulationOptions options;
  options.routing = routing;
  options.flow_splitting = flow_splitting;
  return sim::simulate_system(synthetic_trace(kLayers, kParams, 1e12), topo, quiet_hardware(topo), *make_system("ddp"),
                              options);
}

// Bytes of every directed leaf-spine link ("leafX-spineY" in its name), by link name.
std::map<std::string, double> leaf_spine_links(const sim::SystemResult& r) {
  std::map<std::string, double> out;
  for (const auto& l : r.links)
    if (l.link.find("leaf") != std::string::npos && l.link.find("spine") != std::string::npos) out[l.link] = l.bytes;
  return out;
}

}  // namespace

TEST_CASE("spraying: a flow between leaves runs on every leaf uplink at once, each at b / U") {
  // 4 servers, 2 leaves, 2 spines: one 1 GB flow from gpu0 (leaf0) to gpu2 (leaf1).  Sampled
  // half-way, each of leaf0's two uplinks carries b / 2 (one sub-flow each), and the flow ends
  // at the latency plus 1 GB / b (the NIC, not the uplinks, bounds it).  ECMP: one uplink at b.
  for (const bool spray : {true, false}) {
    CAPTURE(spray);
    auto result = sim::run_isolated([spray]() -> std::string {
      auto engine = sim::make_engine();
      const auto topo = leaf_spine(4);
      topologies::LoweringOptions o;
      o.route_choice = spray ? topologies::RouteChoice::Spray : topologies::RouteChoice::EcmpHash;
      auto platform = topologies::lower_to_simgrid(topo, *engine, o);
      const auto gpus = topo.gpus();
      auto* from = platform.host_of_vertex[gpus[0]];
      auto* to = platform.host_of_vertex[gpus[2]];
      const topologies::Vertex leaf0 = topo.vertex("leaf0");
      std::vector<simgrid::s4u::Link*> uplinks;
      for (auto [it, end] = boost::out_edges(leaf0, topo.graph); it != end; ++it) {
        const auto other = boost::target(*it, topo.graph);
        if (topo[other].name.rfind("spine", 0) == 0) uplinks.push_back(platform.directed_link(topo, *it, leaf0));
      }
      auto* out = new std::string();
      auto* traffic = new sim::TrafficMeter();
      const double bytes = 1e9;
      simgrid::s4u::Actor::create("sender", from, [=] {
        sim::transfer(from, to, bytes, *traffic);
        char text[200];
        std::snprintf(text, sizeof text, "end %.12g flows %llu sub %zu\n", simgrid::s4u::Engine::get_clock(),
                      static_cast<unsigned long long>(traffic->flows()), sim::sub_flows_between(from, to));
        *out += text;
      });
      simgrid::s4u::Actor::create("sampler", from, [=] {
        simgrid::s4u::this_actor::sleep_for(0.01);
        for (auto* l : uplinks) {
          char text[200];
          std::snprintf(text, sizeof text, "%.12g %.12g\n", l->get_usage(), l->get_bandwidth());
          *out += text;
        }
      });
      engine->run();
      return *out;
    });
    CAPTURE(result.output);
    REQUIRE(result.ok);
    // Parse: two uplink lines, then the end line.
    double usage[2], bw[2], end_s = 0;
    unsigned long long flows = 0;
    std::size_t sub = 0;
    REQUIRE(std::sscanf(result.output.c_str(), "%lf %lf\n%lf %lf\nend %lf flows %llu sub %zu", &usage[0], &bw[0],
                        &usage[1], &bw[1], &end_s, &flows, &sub) == 7);
    const auto topo = leaf_spine(4);
    const auto path = gpu_to_gpu(topo, 0, 2);
    const double nic_Bps = path.bandwidth_Bps, latency_s = path.latency_s;
    CHECK(end_s == doctest::Approx(latency_s + 1e9 / nic_Bps).epsilon(1e-9));
    if (spray) {
      CHECK(sub == 2);
      CHECK(flows == 2);
      CHECK(usage[0] == doctest::Approx(nic_Bps / 2).epsilon(1e-9));
      CHECK(usage[1] == doctest::Approx(nic_Bps / 2).epsilon(1e-9));
    } else {
      CHECK(sub == 1);
      CHECK(flows == 1);
      CHECK(std::max(usage[0], usage[1]) == doctest::Approx(nic_Bps).epsilon(1e-9));
      CHECK(std::min(usage[0], usage[1]) == 0);
    }
  }
}

TEST_CASE("spraying: a ring all-reduce on a leaf-spine puts the same bytes on every spine (imbalance 1), F / U on every uplink") {
  for (const double oversubscription : {1.0, 2.0}) {
    CAPTURE(oversubscription);
    const auto topo = leaf_spine(8, oversubscription);  // 2 leaves of 4 NICs; U = 4 / oversubscription spines
    const int uplinks = static_cast<int>(4 / oversubscription);
    const double per_flow = 2.0 * 7 / 8 * kGradientBytes;
    const auto r = run_ddp(topo, topologies::RouteChoice::Spray);
    REQUIRE(static_cast<int>(r.spines.size()) == uplinks);
    for (const auto& spine : r.spines) {
      CAPTURE(spine.name);
      CHECK(spine.bytes == doctest::Approx(2 * per_flow / uplinks).epsilon(1e-9));
    }
    const auto s = sim::summarize_spines(r.spines);
    REQUIRE(s.imbalance);
    CHECK(*s.imbalance == doctest::Approx(1.0).epsilon(1e-12));
    const auto links = leaf_spine_links(r);
    CHECK(static_cast<int>(links.size()) == 4 * uplinks);  // each leaf-spine cable, both ways
    for (const auto& [name, bytes] : links) {
      CAPTURE(name);
      CHECK(bytes == doctest::Approx(per_flow / uplinks).epsilon(1e-9));
    }
    // ECMP: each ring flow whole on one route, so the busiest uplink carries F (congestion 1 flow).
    const auto e = run_ddp(topo, topologies::RouteChoice::EcmpHash);
    double busiest = 0;
    for (const auto& [name, bytes] : leaf_spine_links(e)) busiest = std::max(busiest, bytes);
    CHECK(busiest == doctest::Approx(per_flow).epsilon(1e-9));
  }
}

TEST_CASE("flow splitting: k sub-flows, each hashed on its own, carry F / k, and the bytes between the leaves are conserved") {
  const auto topo = leaf_spine(8);
  const double per_flow = 2.0 * 7 / 8 * kGradientBytes;
  for (const int k : {1, 2, 4}) {
    CAPTURE(k);
    const auto r = run_ddp(topo, topologies::RouteChoice::EcmpHash, k);
    double total = 0;
    for (const auto& [name, bytes] : leaf_spine_links(r)) {
      CAPTURE(name);
      const double pieces = bytes / (per_flow / k);
      CHECK(pieces == doctest::Approx(std::round(pieces)).epsilon(1e-9));
      total += bytes;
    }
    // Two ring flows between the leaves, each over two leaf-spine links.
    CHECK(total == doctest::Approx(4 * per_flow).epsilon(1e-9));
  }
  // k = 1 is plain ECMP: the same bytes on every link.
  const auto plain = leaf_spine_links(run_ddp(topo, topologies::RouteChoice::EcmpHash));
  const auto one = leaf_spine_links(run_ddp(topo, topologies::RouteChoice::EcmpHash, 1));
  CHECK(plain == one);
}

TEST_CASE("simulation.routing \"spray\" and simulation.flow_splitting, which needs \"ecmp\"") {
  auto scenario = [](const std::string& routing, int k) {
    Json j = {{"model", "gpt3-125m"},
              {"training", {{"micro_batch", 1}, {"seq_len", 128}}},
              {"cluster", {{"topology", "fat-tree"}, {"servers", 2}}},
              {"systems", {"ddp"}},
              {"simulation", {{"routing", routing}}}};
    if (k > 0) j["simulation"]["flow_splitting"] = k;
    return sim::scenario_from_json(JsonNode(j, "s.json"));
  };
  CHECK(scenario("spray", 0).routing == topologies::RouteChoice::Spray);
  CHECK(scenario("ecmp", 0).flow_splitting == 1);
  CHECK(scenario("ecmp", 4).flow_splitting == 4);
  for (const auto& [routing, k] : {std::pair{std::string("spray"), 2}, {std::string("ecmp"), 0 + 65},
                                   {std::string("single-path"), 2}}) {
    CAPTURE(routing);
    try {
      scenario(routing, k);
      FAIL("expected an InputError");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find("$.simulation.flow_splitting") != std::string::npos);
    }
  }
}
