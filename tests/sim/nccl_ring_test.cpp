// NCCL's ring on an A100 server's NVLink, as the nvlink3-a100 profile measures it (nccl_ring_*):
// an 8-GPU ring all-reduce reproduces the published nccl-tests run on one A100 node
// (stas00/ml-engineering, network/README.md) from 4 MiB to 16 GiB; groups inside one server get
// the cost, groups across servers do not.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "models/nvlink.hpp"
#include "models/profile.hpp"
#include "sim/engine/collectives.hpp"
#include "sim/engine/data_parallel_collectives.hpp"
#include "sim/engine/engine_config.hpp"
#include "sim/experiment/isolated_run.hpp"

namespace sg = simgrid::s4u;
using namespace luwu::sim;

namespace {

NcclRingCost a100_nvlink_ring() {
  return NcclRingCost::on(luwu::models::nvlink_from_profile(luwu::models::find_profile("nvlink3-a100")));
}

// n GPUs on a star of the profile's wire (300 GB/s a direction, 1 us between two GPUs), ranks in
// servers of `per_server`, one all-reduce of `bytes` through DataParallelCollectives (ring or
// hierarchical) with the context's intra-server ring cost; the finish time.
double all_reduce_s(int n, int per_server, double bytes, CollectiveAlgorithm algorithm, CollectiveMode mode,
                    NcclRingCost intra_server) {
  auto result = run_isolated([=]() -> std::string {
    auto engine = make_engine();
    auto* zone = sg::create_star_zone("server");
    std::vector<sg::Host*> hosts;
    for (int i = 0; i < n; ++i) {
      auto* h = zone->create_host("gpu" + std::to_string(i), 1e12);
      auto* l = zone->create_split_duplex_link("nvlink" + std::to_string(i), 300e9)->set_latency(0.5e-6);
      zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, {{l, sg::LinkInRoute::Direction::UP}}, true);
      hosts.push_back(h);
    }
    zone->seal();
    std::vector<int> servers;
    for (int i = 0; i < n; ++i) servers.push_back(i / per_server);
    auto* collectives =
        new DataParallelCollectives(hosts, servers, algorithm, CollectiveContext{mode, new TrafficMeter(), intra_server});
    for (int i = 0; i < n; ++i)
      sg::Actor::create("rank" + std::to_string(i), hosts[i], [=] { collectives->all_reduce("t", i, bytes); });
    engine->run();
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", sg::Engine::get_clock());
    return std::string(text);
  });
  REQUIRE(result.ok);
  return std::stod(result.output);
}

}  // namespace

TEST_CASE("an 8-GPU NCCL ring all-reduce on A100 NVLink takes what nccl-tests measured, 4 MiB to 16 GiB") {
  // all_reduce_perf -g 8 on one A100 node: buffer (MiB), time (us); the fit's deviation is up to
  // 11% (128 and 256 MiB), 1% at the points the overheads come from (8 and 32 MiB).
  const std::vector<std::pair<double, double>> measured = {
      {4, 101.5}, {8, 133.5}, {16, 276.6}, {32, 424.0}, {64, 684.6}, {128, 1327.6},
      {256, 2420.6}, {512, 4218.4}, {1024, 8203.9}, {16384, 127997}};
  const NcclRingCost ring = a100_nvlink_ring();
  for (auto mode : {CollectiveMode::Detailed, CollectiveMode::Coarse})
    for (const auto& [mib, us] : measured) {
      CAPTURE(mib);
      const double simulated = all_reduce_s(8, 8, mib * 1024 * 1024, CollectiveAlgorithm::Ring, mode, ring);
      CHECK(simulated == doctest::Approx(us * 1e-6).epsilon(0.12));
    }
  // The wire alone is 1.6-2.1x faster than NCCL at 32 MiB: 14 x (1 us + 4 MiB / 300 GB/s).
  const double wire = all_reduce_s(8, 8, 32.0 * 1024 * 1024, CollectiveAlgorithm::Ring, CollectiveMode::Detailed, {});
  CHECK(wire == doctest::Approx(14 * (1e-6 + 4.0 * 1024 * 1024 / 300e9)).epsilon(1e-6));
}

TEST_CASE("NCCL's NVLink ring cost goes to groups inside one server only") {
  const NcclRingCost ring = a100_nvlink_ring();
  const double bytes = 64.0 * 1024 * 1024;
  // 8 GPUs in two servers of 4 (one star stands in for both: the wire is the same): the flat ring
  // crosses servers and runs at the wire; hierarchically, the inside passes pay NCCL's cost.
  const double flat = all_reduce_s(8, 4, bytes, CollectiveAlgorithm::Ring, CollectiveMode::Detailed, ring);
  CHECK(flat == doctest::Approx(14 * (1e-6 + bytes / 8 / 300e9)).epsilon(1e-6));
  const double hierarchical = all_reduce_s(8, 4, bytes, CollectiveAlgorithm::Hierarchical, CollectiveMode::Detailed, ring);
  const double hierarchical_wire = all_reduce_s(8, 4, bytes, CollectiveAlgorithm::Hierarchical, CollectiveMode::Detailed, {});
  // Inside: a reduce-scatter and an all-gather of the 64 MiB over 4 GPUs, 3 steps each of 16 MiB,
  // each step the large overhead more and at 234.89 instead of 300 GB/s.
  const double step = bytes / 4;
  const double inside_extra = 6 * (ring.step_overhead_s + step / ring.bus_Bps - step / 300e9);
  CHECK(hierarchical - hierarchical_wire == doctest::Approx(inside_extra).epsilon(1e-6));
}
