// The network model choice (sim/engine/engine_config.hpp) must reproduce the alpha-beta closed form of a
// ring all-reduce: 2(N-1)(a + S/(N B)), on a star where every rank has its own link of bandwidth
// B and the route between two ranks has latency a.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "sim/engine/collectives.hpp"
#include "sim/engine/engine_config.hpp"
#include "sim/experiment/isolated_run.hpp"

namespace sg = simgrid::s4u;
using namespace luwu::sim;

namespace {

// Builds a star of n hosts (per-host split-duplex link: bandwidth b, latency a/2 each way, so a
// host-to-host route has latency a), runs `collective` on every rank, returns the finish time.
template <class Collective>
double simulate_on_star(int n, double bytes, double a, double b, CollectiveMode mode, Collective collective) {
  auto result = run_isolated([=]() -> std::string {
    auto engine = make_engine();
    auto* zone = sg::create_star_zone("star");
    std::vector<sg::Host*> hosts;
    for (int i = 0; i < n; ++i) {
      auto* h = zone->create_host("gpu" + std::to_string(i), 1e12);
      auto* l = zone->create_split_duplex_link("link" + std::to_string(i), b)->set_latency(a / 2);
      zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, {{l, sg::LinkInRoute::Direction::UP}}, true);
      hosts.push_back(h);
    }
    zone->seal();
    auto* meter = new TrafficMeter();
    CommGroup group{"world", hosts, {}};  // no collective engines: nothing paces the steps
    CollectiveContext ctx{mode, meter};
    for (int i = 0; i < n; ++i)
      sg::Actor::create("rank" + std::to_string(i), hosts[i], [=] { collective(group, i, bytes, ctx); });
    engine->run();
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", sg::Engine::get_clock());  // every digit
    return std::string(text);
  });
  REQUIRE(result.ok);
  return std::stod(result.output);
}

}  // namespace

TEST_CASE("ring all-reduce matches 2(N-1)(a + S/(N B)) within 2% (N 2..64, S 1 MB..1 GB)") {
  const double a = 2.0e-6;      // a short RDMA hop
  const double b = 12.1875e9;   // 97.5 Gb/s RoCE goodput, in bytes/s
  for (int n : {2, 4, 8, 16, 64}) {
    for (double s : {1e6, 32e6, 1e9}) {
      CAPTURE(n);
      CAPTURE(s);
      double simulated = simulate_on_star(n, s, a, b, CollectiveMode::Detailed, ring_all_reduce);
      double expected = 2.0 * (n - 1) * (a + s / (n * b));
      CHECK(std::fabs(simulated / expected - 1) < 0.02);
    }
  }
}

TEST_CASE("ring all-gather and reduce-scatter match (N-1)(a + S/(N B))") {
  const double a = 5e-6, b = 25e9;
  for (int n : {3, 8, 32}) {
    double expected = (n - 1) * (a + 256e6 / (n * b));
    CHECK(simulate_on_star(n, 256e6, a, b, CollectiveMode::Detailed, ring_all_gather) == doctest::Approx(expected).epsilon(0.02).scale(0));
    CHECK(simulate_on_star(n, 256e6, a, b, CollectiveMode::Detailed, ring_reduce_scatter) == doctest::Approx(expected).epsilon(0.02).scale(0));
  }
}

TEST_CASE("coarse mode agrees with detailed mode within 5%") {
  const double a = 3e-6, b = 12.5e9;
  for (int n : {4, 16, 64}) {
    for (double s : {4e6, 512e6}) {
      double detailed = simulate_on_star(n, s, a, b, CollectiveMode::Detailed, ring_all_reduce);
      double coarse = simulate_on_star(n, s, a, b, CollectiveMode::Coarse, ring_all_reduce);
      CAPTURE(n);
      CAPTURE(s);
      CHECK(std::fabs(coarse / detailed - 1) < 0.05);
    }
  }
}

TEST_CASE("tree all-reduce: one level reduces and broadcasts at once, chunk by chunk") {
  // C chunks of p = S / C (4 MiB at most).  Reduce and broadcast use opposite directions of each
  // link, so they overlap; a flow alone takes a + p / B.
  // n = 2: the root receives chunk c and sends it back at once: (C + 1)(a + p / B).
  // n = 3: the root's downlink carries both children's chunk c at once (B / 2 each), so a chunk
  //        pair takes a + 2 p / B, and the last chunk's broadcast (two flows on the root's uplink)
  //        adds one more: (C + 1)(a + 2 p / B).
  const double a = 2e-6, b = 12.5e9, s = 256e6;
  const int chunks = static_cast<int>(std::ceil(s / kTreeChunkBytes));
  const double p = s / chunks;
  auto tree = [](const CommGroup& g, int i, double bytes, const CollectiveContext& c) { tree_all_reduce(g, i, bytes, c); };
  CHECK(simulate_on_star(2, s, a, b, CollectiveMode::Detailed, tree) ==
        doctest::Approx((chunks + 1) * (a + p / b)).epsilon(1e-6).scale(0));
  CHECK(simulate_on_star(3, s, a, b, CollectiveMode::Detailed, tree) ==
        doctest::Approx((chunks + 1) * (a + 2 * p / b)).epsilon(1e-6).scale(0));
}

TEST_CASE("tree all-reduce: deeper trees pipeline between the link-load bound and store-and-forward") {
  // 15 ranks: a full tree of 4 levels.  Every interior rank's link carries, each way, 3 chunk
  // flows per chunk (two children and the parent), so T >= 3 S / B; without pipelining, each of
  // the 3 levels below the root would add its 2 S / B going up and again coming down.
  const double a = 2e-6, b = 12.5e9, s = 512e6;
  auto tree = [](const CommGroup& g, int i, double bytes, const CollectiveContext& c) { tree_all_reduce(g, i, bytes, c); };
  double t = simulate_on_star(15, s, a, b, CollectiveMode::Detailed, tree);
  CHECK(t >= 3 * s / b);
  CHECK(t < 2 * 3 * 2 * s / b);
}
