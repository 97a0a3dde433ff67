// LuWu's colocated parameter-server ablation (optimizer_placement "colocated") against the
// optimizer node's run on the same cluster: what each worker's NIC carries changes by closed forms
// (its server sends 1/N of every layer's parameters into the switch and takes 1/N of every
// aggregated gradient), and the capacity and settings judgements.
#include <doctest/doctest.h>

#include "tests/sim/sim_test_support.hpp"

#include <string>

#include "sim/experiment/simulate.hpp"
#include "sim/systems/model_state.hpp"

using namespace luwu;
using namespace sim_test;

TEST_CASE("LuWu colocated: each worker server sends 1/N of the parameters and takes 1/N of the aggregated "
          "gradients, beside what a worker moves with the optimizer node") {
  const int n = 4;
  auto topo = star(n);
  auto hw = quiet_hardware(topo);
  const std::uint64_t params = 8'000'000;
  const int layers = 3;
  auto trace = synthetic_trace(layers, params, 1e12);
  // Per worker: the parameters of every layer in forward and in backward; the fp16 gradient as
  // LuWu's 2-byte integers on the wire.
  const double parameter_bytes = 2.0 * layers * 2 * params;
  const double wire_gradient = 2.0 * layers * params;
  auto node = sim::simulate_system(trace, topo, hw, *make_system("luwu"), {});
  auto colocated = sim::simulate_system(trace, topo, hw, *make_system("luwu", {{"optimizer_placement", "colocated"}}), {});
  REQUIRE(node.feasible);
  REQUIRE(colocated.feasible);
  // The premises, from the node's run: a worker sends its gradient and receives the parameters.
  CHECK(node.sent_bytes_per_worker == doctest::Approx(wire_gradient).epsilon(1e-9).scale(0));
  CHECK(node.received_bytes_per_worker == doctest::Approx(parameter_bytes).epsilon(1e-9).scale(0));
  CHECK(colocated.sent_bytes_per_worker == doctest::Approx(wire_gradient + parameter_bytes / n).epsilon(1e-9).scale(0));
  CHECK(colocated.received_bytes_per_worker == doctest::Approx(parameter_bytes + wire_gradient / n).epsilon(1e-9).scale(0));
}

TEST_CASE("LuWu colocated: no optimizer node needed or priced, a server's share must fit its DRAM and NVMe, "
          "the node's own settings are errors") {
  auto plain = make_system("luwu");
  auto colocated = make_system("luwu", {{"optimizer_placement", "colocated"}});
  CHECK(plain->uses_optimizer_node());
  CHECK_FALSE(colocated->uses_optimizer_node());
  CHECK(colocated->uses_worker_ssds());
  // A DGX cluster has no optimizer node: LuWu says so, its colocated ablation runs.
  topologies::DgxParams d;
  d.servers = 2;
  const auto dgx = sim::hardware_of(topologies::build_dgx(d));
  auto trace = synthetic_trace(2, 1'000'000, 0);
  CHECK(plain->capacity_problem(trace, dgx).find("needs an in-network optimizer node") != std::string::npos);
  CHECK(colocated->capacity_problem(trace, dgx) == "");
  // Too large for one server's DRAM share and NVMe: 14 B per parameter over 2 servers.
  const double room = 0.9 * dgx.worker_host.dram.capacity_bytes + (dgx.worker_host.ssds ? dgx.worker_host.ssds->capacity_bytes() : 0);
  auto huge = synthetic_trace(1, static_cast<std::uint64_t>(1.2 * room * 2 / 14), 0);
  CHECK(colocated->capacity_problem(huge, dgx).find("does not fit: a worker server's share of the optimizer") == 0);
  // The footprint puts the model on the workers' hosts.
  auto f = colocated->memory_footprint(trace, 4, 40e9);
  CHECK(f.optimizer_node_bytes == 0);
  CHECK(f.host_bytes_per_worker >= 14 * trace.total_params() / 4);
  CHECK(system_settings_error("luwu", {{"optimizer_placement", "colocated"}, {"reliability", "per-packet-ack"}}).find("reliability") != std::string::npos);
  CHECK(system_settings_error("luwu", {{"optimizer_placement", "rack"}}).find("optimizer_placement") != std::string::npos);
}
