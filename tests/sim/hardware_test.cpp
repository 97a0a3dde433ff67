// The cluster as the simulator resolves it (sim/engine/hardware.hpp): counts, and the one kind of
// GPU, host and NIC it represents, refused rather than guessed when a topology mixes them.
#include <doctest/doctest.h>

#include "sim/engine/hardware.hpp"
#include "topologies/builders.hpp"

using namespace luwu;

TEST_CASE("hardware_of counts workers and GPUs per server") {
  topologies::DgxParams d;
  d.servers = 3;
  d.gpus_per_server = 4;
  auto hw = sim::hardware_of(topologies::build_dgx(d));
  CHECK(hw.workers == 12);
  CHECK(hw.gpus_per_server == 4);
  topologies::LuwuStarParams s;
  s.workers = 5;
  auto star = sim::hardware_of(topologies::build_luwu_star(s));
  CHECK(star.workers == 5);
  CHECK(star.gpus_per_server == 1);
  CHECK(star.optimizer_node.has_value());
}

TEST_CASE("a topology that mixes GPU kinds is refused, naming the GPU that differs") {
  topologies::DgxParams d;
  d.servers = 2;
  d.gpus_per_server = 2;
  auto topo = topologies::build_dgx(d);
  const auto odd = topo.gpus().back();
  topo.graph[odd].profile = "h100-80gb-sxm";
  CHECK_THROWS_WITH_AS(sim::hardware_of(topo), doctest::Contains(topo[odd].name.c_str()), std::invalid_argument);
  CHECK_THROWS_WITH_AS(sim::hardware_of(topo), doctest::Contains("one kind of GPU"), std::invalid_argument);
}
