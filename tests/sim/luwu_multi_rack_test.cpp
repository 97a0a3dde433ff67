// LuWu across racks (luwu-star with racks > 1): each top-of-rack switch aggregates its rack's
// gradients and streams the sum to the cluster switch, and the parameters are multicast down the
// same tree.  What each link carries follows in closed form from the single-switch run: a worker
// moves what it moves under one switch, and a trunk carries what one worker's link carries.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "sim/experiment/simulate.hpp"
#include "tests/sim/sim_test_support.hpp"
#include "topologies/builders.hpp"
#include "topologies/topology.hpp"

using namespace luwu;
using namespace sim_test;

TEST_CASE("luwu-star racks: contiguous blocks of workers under top-of-rack switches, trunked to the cluster switch") {
  auto topo = star(7, 3);
  // 7 workers over 3 racks: 3, 2, 2.
  const int expected_rack[] = {0, 0, 0, 1, 1, 2, 2};
  const auto gpus = topo.gpus();
  REQUIRE(gpus.size() == 7);
  for (std::size_t r = 0; r < gpus.size(); ++r)
    CHECK(topo[*topo.switch_of(topo.nic_of(gpus[r]))].name == "tor" + std::to_string(expected_rack[r]));
  for (int k = 0; k < 3; ++k) {
    auto tor = topo.vertex("tor" + std::to_string(k));
    CHECK(boost::edge(tor, topo.vertex("switch"), topo.graph).second);
  }
  CHECK(topo.builder_args.at("racks") == 3);
}

TEST_CASE("luwu-star racks: each switch's ports bound its rack or the racks, with errors that say which") {
  // The Tofino profile has 64 ports: 63 workers and the trunk fill a rack switch.
  CHECK_NOTHROW(star(2 * 63, 2));
  CHECK_THROWS_WITH_AS(star(2 * 64, 2), doctest::Contains("workers per rack + 1 trunk"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(star(64, 64), doctest::Contains("rack trunks"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(star(4, 5), doctest::Contains("racks (5)"), std::invalid_argument);
}

TEST_CASE("luwu across racks: a worker moves what it moves under one switch, and each trunk carries one "
          "worker's share each way") {
  const int n = 8, racks = 2, layers = 3;
  const std::uint64_t params = 8'000'000;
  auto trace = synthetic_trace(layers, params, 1e12);
  auto flat_topo = star(n);
  auto racked_topo = star(n, racks);
  auto flat = sim::simulate_system(trace, flat_topo, sim::hardware_of(flat_topo), *make_system("luwu"), {});
  auto racked = sim::simulate_system(trace, racked_topo, sim::hardware_of(racked_topo), *make_system("luwu"), {});
  REQUIRE(flat.feasible);
  REQUIRE(racked.feasible);
  // Per worker: the parameters of every layer in forward and in backward (fp16), and the gradient
  // as LuWu's 2-byte integers on the wire.
  const double parameter_bytes = 2.0 * layers * 2 * params;
  const double wire_gradient = 2.0 * layers * params;
  CHECK(flat.sent_bytes_per_worker == doctest::Approx(wire_gradient).scale(0));
  CHECK(racked.sent_bytes_per_worker == doctest::Approx(wire_gradient).scale(0));
  CHECK(racked.received_bytes_per_worker == doctest::Approx(parameter_bytes).scale(0));
  for (int k = 0; k < racks; ++k) {
    const std::string trunk = "tor" + std::to_string(k) + "--switch";
    CHECK(link_bytes(racked, trunk + "_UP") == doctest::Approx(wire_gradient).scale(0));
    CHECK(link_bytes(racked, trunk + "_DOWN") == doctest::Approx(parameter_bytes).scale(0));
  }
  // The optimizer node sees one aggregate and sends each parameter once, racks or not.
  CHECK(link_bytes(racked, "optnode-nic0--switch_DOWN") == doctest::Approx(link_bytes(flat, "optnode-nic0--switch_DOWN")).scale(0));
  CHECK(link_bytes(racked, "optnode-nic0--switch_UP") == doctest::Approx(link_bytes(flat, "optnode-nic0--switch_UP")).scale(0));
}

TEST_CASE("switchml across racks: the sums are multicast down the tree, so a trunk carries one worker's share each way") {
  const int n = 6, racks = 3, layers = 2;
  const std::uint64_t params = 4'000'000;
  auto trace = synthetic_trace(layers, params, 1e12);
  auto topo = star(n, racks);
  auto r = sim::simulate_system(trace, topo, sim::hardware_of(topo), *make_system("switchml"), {});
  REQUIRE(r.feasible);
  // Every worker sends its gradient and gets the sum back, 4-byte integers on the wire.
  const double wire_gradient = 4.0 * layers * params;
  CHECK(r.sent_bytes_per_worker == doctest::Approx(wire_gradient).scale(0));
  CHECK(r.received_bytes_per_worker == doctest::Approx(wire_gradient).scale(0));
  for (int k = 0; k < racks; ++k) {
    const std::string trunk = "tor" + std::to_string(k) + "--switch";
    CHECK(link_bytes(r, trunk + "_UP") == doctest::Approx(wire_gradient).scale(0));
    CHECK(link_bytes(r, trunk + "_DOWN") == doctest::Approx(wire_gradient).scale(0));
  }
}

namespace {
topologies::Topology podded_star(int workers, int racks, int pods) {
  topologies::LuwuStarParams p;
  p.workers = workers;
  p.racks = racks;
  p.pods = pods;
  return topologies::build_luwu_star(p);
}
}  // namespace

TEST_CASE("luwu across pods: a worker moves what it moves under one switch or racks, and each pod trunk carries "
          "one aggregated stream each way, a rack trunk's bytes") {
  const int n = 32, racks = 4, pods = 2, layers = 3;
  const std::uint64_t params = 2'000'000;
  auto trace = synthetic_trace(layers, params, 1e12);
  auto flat_topo = star(n);
  auto racked_topo = star(n, racks);
  auto podded_topo = podded_star(n, racks, pods);
  auto flat = sim::simulate_system(trace, flat_topo, sim::hardware_of(flat_topo), *make_system("luwu"), {});
  auto racked = sim::simulate_system(trace, racked_topo, sim::hardware_of(racked_topo), *make_system("luwu"), {});
  auto podded = sim::simulate_system(trace, podded_topo, sim::hardware_of(podded_topo), *make_system("luwu"), {});
  REQUIRE((flat.feasible && racked.feasible && podded.feasible));
  // Per worker: the parameters of every layer in forward and in backward (fp16), and the gradient
  // as LuWu's 2-byte integers on the wire.
  const double parameter_bytes = 2.0 * layers * 2 * params;
  const double wire_gradient = 2.0 * layers * params;
  for (const auto* r : {&flat, &racked, &podded}) {
    CHECK(r->sent_bytes_per_worker == doctest::Approx(wire_gradient).scale(0));
    CHECK(r->received_bytes_per_worker == doctest::Approx(parameter_bytes).scale(0));
  }
  for (int k = 0; k < racks; ++k) {
    const std::string trunk = "tor" + std::to_string(k) + "--pod" + std::to_string(k / 2);
    CHECK(link_bytes(podded, trunk + "_UP") == doctest::Approx(wire_gradient).scale(0));
    CHECK(link_bytes(podded, trunk + "_DOWN") == doctest::Approx(parameter_bytes).scale(0));
    CHECK(link_bytes(podded, trunk + "_UP") == doctest::Approx(link_bytes(racked, "tor" + std::to_string(k) + "--switch_UP")).scale(0));
  }
  for (int j = 0; j < pods; ++j) {
    const std::string trunk = "pod" + std::to_string(j) + "--switch";
    CHECK(link_bytes(podded, trunk + "_UP") == doctest::Approx(wire_gradient).scale(0));
    CHECK(link_bytes(podded, trunk + "_DOWN") == doctest::Approx(parameter_bytes).scale(0));
  }
  // The optimizer node sees one aggregate and sends each parameter once, pods or not.
  CHECK(link_bytes(podded, "optnode-nic0--switch_DOWN") == doctest::Approx(link_bytes(flat, "optnode-nic0--switch_DOWN")).scale(0));
  CHECK(link_bytes(podded, "optnode-nic0--switch_UP") == doctest::Approx(link_bytes(flat, "optnode-nic0--switch_UP")).scale(0));
}

TEST_CASE("switchml across pods: the sums go up and are multicast down three levels, a worker's share on each trunk") {
  const int n = 12, racks = 3, pods = 2, layers = 2;
  const std::uint64_t params = 2'000'000;
  auto trace = synthetic_trace(layers, params, 1e12);
  auto topo = podded_star(n, racks, pods);  // racks 0-1 in pod 0, rack 2 in pod 1
  auto r = sim::simulate_system(trace, topo, sim::hardware_of(topo), *make_system("switchml"), {});
  REQUIRE(r.feasible);
  const double wire_gradient = 4.0 * layers * params;
  CHECK(r.sent_bytes_per_worker == doctest::Approx(wire_gradient).scale(0));
  CHECK(r.received_bytes_per_worker == doctest::Approx(wire_gradient).scale(0));
  for (const std::string trunk : {"tor0--pod0", "tor1--pod0", "tor2--pod1", "pod0--switch", "pod1--switch"}) {
    CAPTURE(trunk);
    CHECK(link_bytes(r, trunk + "_UP") == doctest::Approx(wire_gradient).scale(0));
    CHECK(link_bytes(r, trunk + "_DOWN") == doctest::Approx(wire_gradient).scale(0));
  }
}
