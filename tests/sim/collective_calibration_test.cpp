// The network model choice (sim/engine/engine_config.hpp) must reproduce the alpha-beta closed form of a
// ring all-reduce: 2(N-1)(a + S/(N B)), on a star where every rank has its own link of bandwidth
// B and the route between two ranks has latency a.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include <numeric>

#include "sim/engine/collectives.hpp"
#include "sim/engine/data_parallel_collectives.hpp"
#include "sim/engine/engine_config.hpp"
#include "sim/engine/pat_collectives.hpp"
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

// The same star, ranks in servers of `per_server` (contiguous), each rank making `call` on one
// DataParallelCollectives with `algorithm`: what a system's rank does.
template <class Call>
double simulate_data_parallel_call_on_star(int n, double a, double b, CollectiveAlgorithm algorithm, int per_server,
                                           Call call) {
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
    std::vector<int> servers;
    for (int i = 0; i < n; ++i) servers.push_back(i / per_server);
    auto* collectives = new DataParallelCollectives(hosts, servers, algorithm, CollectiveContext{CollectiveMode::Detailed, meter});
    for (int i = 0; i < n; ++i)
      sg::Actor::create("rank" + std::to_string(i), hosts[i], [=] { call(*collectives, i); });
    engine->run();
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", sg::Engine::get_clock());
    return std::string(text);
  });
  REQUIRE(result.ok);
  return std::stod(result.output);
}

// One collective of `kind` that way.
double simulate_data_parallel_on_star(int n, double bytes, double a, double b, CollectiveAlgorithm algorithm,
                                      CollectiveKind kind, int per_server = 1) {
  return simulate_data_parallel_call_on_star(n, a, b, algorithm, per_server, [=](DataParallelCollectives& c, int i) {
    if (kind == CollectiveKind::AllGather) c.all_gather("t", i, bytes);
    if (kind == CollectiveKind::ReduceScatter) c.reduce_scatter("t", i, bytes);
    if (kind == CollectiveKind::AllReduce) c.all_reduce("t", i, bytes);
  });
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

TEST_CASE("reduces to each shard's owner take N(a + S/(N B)): the whole buffer's time on a link, N/(N-1) of the reduce-scatter's") {
  // NCCL's Reduce is a pipelined chain to its root: each reduce of S/N keeps every link of the
  // chain busy at once for S/(N B), and the root's own link idles; N of them back to back.
  const double a = 5e-6, b = 25e9, s = 256e6;
  for (int n : {2, 3, 8, 32}) {
    CAPTURE(n);
    const double expected = n * (a + s / (n * b));
    CHECK(ring_reduce_to_owners_closed_form_s(n, s, a, b) == doctest::Approx(s / b + n * a).epsilon(1e-12));
    CHECK(simulate_on_star(n, s, a, b, CollectiveMode::Detailed, ring_reduce_to_owners) ==
          doctest::Approx(expected).epsilon(0.02).scale(0));
    CHECK(simulate_on_star(n, s, a, b, CollectiveMode::Coarse, ring_reduce_to_owners) ==
          doctest::Approx(expected).epsilon(0.02).scale(0));
  }
}

TEST_CASE("data-parallel reduces to each owner: the world ring whatever the algorithm, and with several GPUs per server "
          "a ring reduce-scatter inside and the reduces across servers") {
  const double a = 5e-6, b = 25e9, s = 64e6;
  auto reduce = [s](DataParallelCollectives& c, int i) { c.reduce_to_owners("t", i, s); };
  // One GPU per server (the LuWu testbed), and one server: the ring of all ranks, every algorithm.
  for (auto algorithm : {CollectiveAlgorithm::Ring, CollectiveAlgorithm::Hierarchical, CollectiveAlgorithm::Pat}) {
    CHECK(simulate_data_parallel_call_on_star(8, a, b, algorithm, 1, reduce) ==
          doctest::Approx(ring_reduce_to_owners_closed_form_s(8, s, a, b)).epsilon(0.01));
    CHECK(simulate_data_parallel_call_on_star(8, a, b, algorithm, 8, reduce) ==
          doctest::Approx(ring_reduce_to_owners_closed_form_s(8, s, a, b)).epsilon(0.01));
  }
  // 4 servers of 4: every server's ring reduce-scatter, then 4 rings of the GPUs of one local index
  // reduce S/4 each to its owners, all on links of their own.
  const double expected = ring_all_gather_closed_form_s(4, s, a, b) + ring_reduce_to_owners_closed_form_s(4, s / 4, a, b);
  for (auto algorithm : {CollectiveAlgorithm::Ring, CollectiveAlgorithm::Hierarchical})
    CHECK(simulate_data_parallel_call_on_star(16, a, b, algorithm, 4, reduce) == doctest::Approx(expected).epsilon(0.01));
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

TEST_CASE("PAT: ceil(log2 N) steps whose shards sum to N-1, for any N") {
  // N = 6: offsets 1..5; dimension 2 carries offset 4, dimension 1 offset 2 (6 does not exist),
  // dimension 0 the odd offsets 1, 3, 5.
  CHECK(pat_all_gather_shards_per_step(6) == std::vector<int>{1, 1, 3});
  CHECK(pat_all_gather_shards_per_step(8) == std::vector<int>{1, 2, 4});
  CHECK(pat_all_gather_shards_per_step(5) == std::vector<int>{1, 1, 2});
  CHECK(pat_all_gather_shards_per_step(2) == std::vector<int>{1});
  CHECK(pat_all_gather_shards_per_step(1).empty());
  for (int n = 2; n <= 300; ++n) {
    CAPTURE(n);
    auto shards = pat_all_gather_shards_per_step(n);
    CHECK(static_cast<int>(shards.size()) == static_cast<int>(std::ceil(std::log2(n) - 1e-12)));
    CHECK(std::accumulate(shards.begin(), shards.end(), 0) == n - 1);
  }
}

TEST_CASE("PAT all-gather and reduce-scatter match ceil(log2 N) a + (N-1) S/(N B) on a star, N a power of two or not") {
  const double a = 5e-6, b = 12.5e9;
  for (int n : {2, 3, 5, 6, 8, 13, 16, 64}) {
    for (double s : {1e6, 256e6}) {
      CAPTURE(n);
      CAPTURE(s);
      const double steps = std::ceil(std::log2(n) - 1e-12);
      const double expected = steps * a + (n - 1) * s / (n * b);
      CHECK(pat_all_gather_closed_form_s(n, s, a, b) == doctest::Approx(expected).epsilon(1e-12));
      CHECK(simulate_on_star(n, s, a, b, CollectiveMode::Detailed, pat_all_gather) ==
            doctest::Approx(expected).epsilon(1e-4).scale(0));
      CHECK(simulate_on_star(n, s, a, b, CollectiveMode::Detailed, pat_reduce_scatter) ==
            doctest::Approx(expected).epsilon(1e-4).scale(0));
      CHECK(simulate_on_star(n, s, a, b, CollectiveMode::Coarse, pat_all_gather) ==
            doctest::Approx(expected).epsilon(1e-4).scale(0));
      CHECK(simulate_on_star(n, s, a, b, CollectiveMode::Coarse, pat_reduce_scatter) ==
            doctest::Approx(expected).epsilon(1e-4).scale(0));
    }
  }
}

TEST_CASE("PAT saves the ring's N-1 - ceil(log2 N) step latencies and moves its bytes") {
  // 64 ranks, 1 MB: the ring pays 63 latencies, PAT 6; both move 63/64 of the buffer per rank.
  const double a = 5e-6, b = 12.5e9, s = 1e6;
  const double ring = simulate_on_star(64, s, a, b, CollectiveMode::Detailed, ring_all_gather);
  const double pat = simulate_on_star(64, s, a, b, CollectiveMode::Detailed, pat_all_gather);
  CHECK(ring - pat == doctest::Approx((63 - 6) * a).epsilon(0.01));
}

TEST_CASE("data-parallel collectives: pat and auto run PAT or the ring as chosen") {
  // One GPU per server on a star: "pat" runs PAT for reduce-scatter and all-gather, a ring for
  // all-reduce; "auto" runs PAT for a small buffer at 64 ranks and a ring for a large one
  // (collective_tuning_test.cpp derives where it switches).
  const double a = 5e-6, b = 12.5e9;
  const int n = 64;
  CHECK(simulate_data_parallel_on_star(n, 1e6, a, b, CollectiveAlgorithm::Pat, CollectiveKind::AllGather) ==
        doctest::Approx(pat_all_gather_closed_form_s(n, 1e6, a, b)).epsilon(0.01));
  CHECK(simulate_data_parallel_on_star(n, 1e6, a, b, CollectiveAlgorithm::Pat, CollectiveKind::ReduceScatter) ==
        doctest::Approx(pat_reduce_scatter_closed_form_s(n, 1e6, a, b)).epsilon(0.01));
  CHECK(simulate_data_parallel_on_star(n, 1e6, a, b, CollectiveAlgorithm::Pat, CollectiveKind::AllReduce) ==
        doctest::Approx(ring_all_reduce_closed_form_s(n, 1e6, a, b)).epsilon(0.01));
  CHECK(simulate_data_parallel_on_star(n, 1e6, a, b, CollectiveAlgorithm::Auto, CollectiveKind::AllGather) ==
        doctest::Approx(pat_all_gather_closed_form_s(n, 1e6, a, b)).epsilon(0.01));
  CHECK(simulate_data_parallel_on_star(n, 4e9, a, b, CollectiveAlgorithm::Auto, CollectiveKind::ReduceScatter) ==
        doctest::Approx(ring_all_gather_closed_form_s(n, 4e9, a, b)).epsilon(0.01));
}

TEST_CASE("data-parallel collectives: pat with several GPUs per server runs rings inside and PAT across") {
  // 16 ranks in 4 servers of 4 on one star (inside and across alike): all-gather = PAT over the 4
  // servers of S/4 (the 4 cross groups at once, each rank on its own link), then a ring of 4 of S;
  // reduce-scatter the reverse.  2 a + 3/4 S/(4 b) + 3 (a + S/(4 b)).
  const double a = 5e-6, b = 12.5e9, s = 64e6;
  const double expected = 2 * a + 0.75 * s / (4 * b) + 3 * (a + s / (4 * b));
  CHECK(simulate_data_parallel_on_star(16, s, a, b, CollectiveAlgorithm::Pat, CollectiveKind::AllGather, 4) ==
        doctest::Approx(expected).epsilon(0.01));
  CHECK(simulate_data_parallel_on_star(16, s, a, b, CollectiveAlgorithm::Pat, CollectiveKind::ReduceScatter, 4) ==
        doctest::Approx(expected).epsilon(0.01));
}
