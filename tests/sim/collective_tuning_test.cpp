// The "auto" rule (sim/engine/collective_tuning.hpp) against its crossover derived by hand from
// NCCL's tuning model (src/graph/tuning.cc), and the "collective_algorithm" setting.
#include <doctest/doctest.h>

#include <cmath>

#include "sim/engine/collective_tuning.hpp"
#include "sim_test_support.hpp"

using namespace luwu;
using namespace luwu::sim;
using sim_test::make_system;
using sim_test::system_settings_error;

namespace {

// N single-GPU servers behind one switch: every route has latency a and bottleneck bandwidth b.
CollectiveShape single_gpu_servers(int n, double a, double b) {
  CollectiveShape s;
  s.world = n;
  s.servers = n;
  s.per_server = 1;
  s.world_ring = s.world_pat = s.cross = GroupRoutes{a, b, n};
  s.local = GroupRoutes{0, b, 1};
  return s;
}

}  // namespace

TEST_CASE("auto: PAT below the closed-form crossover, the ring above it (N 16..1024)") {
  // Written out from NCCL's model (Simple protocol, one GPU per node):
  //   ring: 8.4 us + (N-1)(14 us + a) + (N-1)/N S/b
  //   PAT:  8.0 us + ceil(log2 N)(14/3.5 us + a) + 2.8 us N + S/(0.75 b)
  // PAT's latency is lower from N = 4 on and its bandwidth term higher, so the ring wins above
  //   S* = (L_ring - L_pat) / ((1/0.75 - (N-1)/N) / b).
  const double a = 2e-6, b = 12.5e9;
  for (int n : {16, 100, 256, 1024}) {
    CAPTURE(n);
    const double log_steps = std::ceil(std::log2(n) - 1e-12);
    const double ring_latency = 8.4e-6 + (n - 1) * (14e-6 + a);
    const double pat_latency = 8.0e-6 + log_steps * (14e-6 / 3.5 + a) + 2.8e-6 * n;
    const double crossover = (ring_latency - pat_latency) / ((1 / 0.75 - (n - 1.0) / n) / b);
    CAPTURE(crossover);
    const auto shape = single_gpu_servers(n, a, b);
    for (auto kind : {CollectiveKind::AllGather, CollectiveKind::ReduceScatter}) {
      CHECK(choose_collective_algorithm(kind, 1e3, shape) == CollectiveAlgorithm::Pat);
      CHECK(choose_collective_algorithm(kind, 0.99 * crossover, shape) == CollectiveAlgorithm::Pat);
      CHECK(choose_collective_algorithm(kind, 1.01 * crossover, shape) == CollectiveAlgorithm::Ring);
      CHECK(choose_collective_algorithm(kind, 100 * crossover, shape) == CollectiveAlgorithm::Ring);
    }
    // NCCL has no PAT all-reduce.
    CHECK(choose_collective_algorithm(CollectiveKind::AllReduce, 1e3, shape) == CollectiveAlgorithm::Ring);
  }
}

TEST_CASE("auto: the crossover grows with the rank count and the route latency") {
  // At 256 ranks and 2 us the ring pays 255 x 16 us = 4.08 ms of latency, PAT 8 x 6 us + 717 us:
  // PAT carries every buffer up to 3.316 ms / ((1/0.75 - 255/256) / 12.5 GB/s) = 122.9 MB; a 10 us
  // fabric moves the crossover up.
  auto crossover_of = [](int n, double a) {
    const auto shape = single_gpu_servers(n, a, 12.5e9);
    double lo = 1, hi = 1e12;  // bisect on the rule itself
    for (int i = 0; i < 200; ++i) {
      const double mid = std::sqrt(lo * hi);
      (choose_collective_algorithm(CollectiveKind::AllGather, mid, shape) == CollectiveAlgorithm::Pat ? lo : hi) = mid;
    }
    return lo;
  };
  CHECK(crossover_of(256, 2e-6) == doctest::Approx(122.9e6).epsilon(0.001));
  CHECK(crossover_of(64, 2e-6) < crossover_of(256, 2e-6));
  CHECK(crossover_of(256, 2e-6) < crossover_of(256, 10e-6));
}

TEST_CASE("auto: PAT only with one GPU per server, as NCCL enables it") {
  // 8 servers of 8 GPUs: the candidates are the ring and hierarchical.
  CollectiveShape s;
  s.world = 64;
  s.servers = 8;
  s.per_server = 8;
  s.world_ring = s.world_pat = GroupRoutes{2e-6, 12.5e9, 8};
  s.cross = GroupRoutes{2e-6, 12.5e9, 8};
  s.local = GroupRoutes{0.5e-6, 150e9, 1};
  for (double bytes : {1e3, 1e6, 1e9}) {
    CAPTURE(bytes);
    CHECK(choose_collective_algorithm(CollectiveKind::AllGather, bytes, s) != CollectiveAlgorithm::Pat);
  }
  // Small: hierarchical's 7 NVLink and 7 network steps, two kernels (8.4 + 7 x 3.9 + 8.4 + 7 x 16
  // = 156 us), against the flat ring's 56 NVLink-priced and 7 network steps, all on the ring's
  // longest route (8.4 + 56 x 3.4 + 7 x 14 + 63 x 2 = 423 us).  Large: the flat ring moves 63/64
  // of S through every NIC, hierarchical 7/8 of S/8 across: hierarchical again.
  CHECK(choose_collective_algorithm(CollectiveKind::ReduceScatter, 1e3, s) == CollectiveAlgorithm::Hierarchical);
  CHECK(choose_collective_algorithm(CollectiveKind::ReduceScatter, 1e9, s) == CollectiveAlgorithm::Hierarchical);
}

TEST_CASE("collective_algorithm setting: ring, hierarchical, pat, auto, and a bad value named with its path") {
  CHECK(make_system("zero-infinity", {{"collective_algorithm", "pat"}})->collectives().algorithm == CollectiveAlgorithm::Pat);
  CHECK(make_system("zero3", {{"collective_algorithm", "auto"}})->collectives().algorithm == CollectiveAlgorithm::Auto);
  CHECK(make_system("zero3", {{"collective_algorithm", "ring"}})->collectives().algorithm == CollectiveAlgorithm::Ring);
  CHECK(make_system("ddp", {{"collective_algorithm", "pat"}})->collectives().algorithm == CollectiveAlgorithm::Pat);
  // The default is today's: hierarchical (a ring with one GPU per server).
  CHECK(make_system("zero-infinity")->collectives().algorithm == CollectiveAlgorithm::Hierarchical);
  const std::string error = system_settings_error("zero-infinity", {{"collective_algorithm", "pats"}});
  CHECK(error.find("$.systems[0].collective_algorithm") != std::string::npos);
  CHECK(error.find("did you mean \"pat\"") != std::string::npos);
}
