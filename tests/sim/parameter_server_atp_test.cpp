// Plain parameter servers (model-in-server data parallelism) and ATP against closed forms derived
// here: the bytes every worker and server moves (each gradient pushed once, each shard pulled once,
// the colocated form's 2 (N-1)/N), a communication-only iteration's time from the routes and the
// servers' DRAM and CPU, and the topology, cost and capacity judgements around them.
#include <doctest/doctest.h>

#include "tests/sim/sim_test_support.hpp"

#include <algorithm>
#include <string>

#include "models/prices.hpp"
#include "sim/experiment/cluster_cost.hpp"
#include "sim/experiment/simulate.hpp"
#include "sim/systems/model_state.hpp"

using namespace luwu;
using namespace sim_test;

namespace {

topologies::Topology star_with_servers(int workers, int servers) {
  topologies::LuwuStarParams p;
  p.workers = workers;
  p.parameter_servers = servers;
  return topologies::build_luwu_star(p);
}

// Bytes a result counted on the edge between two vertices, both directions.
double edge_bytes(const sim::SystemResult& r, const topologies::Topology& topo, const std::string& a, const std::string& b) {
  auto [edge, found] = boost::edge(*topo.find_vertex(a), *topo.find_vertex(b), topo.graph);
  REQUIRE(found);
  const std::string name = topo[edge].name;
  double sum = 0;
  for (const auto& l : r.links)
    if (l.link == name + "_UP" || l.link == name + "_DOWN") sum += l.bytes;
  return sum;
}

}  // namespace

TEST_CASE("luwu-star parameter servers: CPU machines outside the servers, with DRAM and a NIC on the switch") {
  auto topo = star_with_servers(4, 3);
  for (int k = 0; k < 3; ++k) {
    const std::string id = "ps" + std::to_string(k);
    REQUIRE(topo.find_vertex(id));
    CHECK(topo[*topo.find_vertex(id)].kind == topologies::VertexKind::Cpu);
    CHECK(topo[*topo.find_vertex(id)].server == -1);
    CHECK(topo.find_vertex(id + "-dram"));
    CHECK(boost::edge(*topo.find_vertex(id + "-nic"), *topo.find_vertex("switch"), topo.graph).second);
  }
  auto hw = sim::hardware_of(topo);
  CHECK(hw.parameter_servers == 3);
  REQUIRE(hw.parameter_server);
  CHECK(hw.parameter_server->dram.capacity_bytes == hw.worker_host.dram.capacity_bytes);  // host_profile by default
  // The switch's ports bound them: 64-port Tofino, 8 workers + 1 optimizer NIC + 56 servers is one too many.
  topologies::LuwuStarParams p;
  p.workers = 8;
  p.parameter_servers = 56;
  CHECK_THROWS_WITH_AS(topologies::build_luwu_star(p), doctest::Contains("parameter servers need more than"), std::invalid_argument);
}

TEST_CASE("Parameter servers, dedicated: each worker pushes its gradient once and pulls the parameters once, "
          "each of S servers carries N/S of a gradient each way") {
  const int n = 4, servers = 2;
  auto topo = star_with_servers(n, servers);
  auto hw = quiet_hardware(topo);
  const std::uint64_t params = 10'000'000;
  auto trace = synthetic_trace(4, params, 1e12);
  const double gradient = 4.0 * 2 * params;  // 4 layers, fp16
  auto r = sim::simulate_system(trace, topo, hw, *make_system("parameter-server"), {});
  REQUIRE(r.feasible);
  CHECK(r.sent_bytes_per_worker == doctest::Approx(gradient).epsilon(1e-9).scale(0));
  CHECK(r.received_bytes_per_worker == doctest::Approx(gradient).epsilon(1e-9).scale(0));
  for (int k = 0; k < servers; ++k)
    CHECK(edge_bytes(r, topo, "ps" + std::to_string(k) + "-nic", "switch") ==
          doctest::Approx(2.0 * n * gradient / servers).epsilon(1e-9).scale(0));
  // One server of two named: the second carries nothing.
  auto one = sim::simulate_system(trace, topo, hw, *make_system("parameter-server", {{"parameter_servers", 1}}), {});
  CHECK(edge_bytes(one, topo, "ps0-nic", "switch") == doctest::Approx(2.0 * n * gradient).epsilon(1e-9).scale(0));
  CHECK(edge_bytes(one, topo, "ps1-nic", "switch") == 0);
}

TEST_CASE("Parameter servers, colocated on the N workers: each NIC carries 2 (N-1)/N of a gradient each way, "
          "the all-reduce volume, a worker's own shard stays on its PCIe") {
  const int n = 4;
  auto topo = star(n);
  auto hw = quiet_hardware(topo);
  const std::uint64_t params = 10'000'000;
  auto trace = synthetic_trace(2, params, 1e12);
  const double gradient = 2.0 * 2 * params;
  auto r = sim::simulate_system(trace, topo, hw, *make_system("parameter-server", {{"ps_placement", "colocated"}}), {});
  REQUIRE(r.feasible);
  CHECK(r.sent_bytes_per_worker == doctest::Approx(2.0 * (n - 1) / n * gradient).epsilon(1e-9).scale(0));
  CHECK(r.received_bytes_per_worker == doctest::Approx(2.0 * (n - 1) / n * gradient).epsilon(1e-9).scale(0));
}

TEST_CASE("Parameter servers: a communication-only iteration is push, sum, Adam on the server's CPU, pull") {
  const int n = 4;
  auto topo = star_with_servers(n, 1);
  auto hw = quiet_hardware(topo);
  const double P = 5e6;
  auto trace = synthetic_trace(1, static_cast<std::uint64_t>(P), 0);
  const double B = 2 * P;  // the fp16 gradient, one bucket
  auto r = sim::simulate_system(trace, topo, hw, *make_system("parameter-server", {{"bucket_bytes", B}}), {});
  REQUIRE(r.feasible);
  // Push: N flows share the server's NIC link; pull: the same the other way.
  Path route = path(topo, topo.gpus()[0], *topo.find_vertex("ps0"));
  const double push = route.latency_s + n * B / route.bandwidth_Bps;
  const auto& host = *hw.parameter_server;
  const double dram = host.dram.achieved_Bps();
  const double sum = (n + 1) * B / dram;  // read N copies, write the sum
  const auto cost = sim::adam_cost(workloads::DType::Fp16);
  const double adam = std::max(models::cpu_optimizer_step_times(host, P, cost, {1, 0, 0}).compute_s,
                               P * (cost.bytes_read_per_param + cost.bytes_written_per_param) / dram);
  // Premise: the server's DRAM keeps up with its NIC (else the pacing would bound the transfers).
  REQUIRE(dram > 2 * route.bandwidth_Bps);
  CHECK(r.iteration_time_s == doctest::Approx(push + sum + adam + push).epsilon(1e-6).scale(0));
}

TEST_CASE("Parameter servers: the servers' DRAM must hold 1/S of the optimizer state and of the fp32 sum") {
  auto topo = star_with_servers(8, 2);
  const auto hw = sim::hardware_of(topo);
  const double dram = hw.parameter_server->dram.capacity_bytes;
  // 12 B of fp32 master, m and v plus a 4 B fp32 sum per parameter, split over 2 servers.
  const double fits_params = 0.9 * dram * 2 / 16, too_many = 1.1 * dram * 2 / 16;
  auto small = synthetic_trace(1, static_cast<std::uint64_t>(fits_params), 0);
  auto large = synthetic_trace(1, static_cast<std::uint64_t>(too_many), 0);
  auto ps = make_system("parameter-server");
  CHECK(ps->capacity_problem(small, hw) == "");
  CHECK(ps->capacity_problem(large, hw).find("does not fit: a parameter server's DRAM") == 0);
  // The GPU holds parameters and gradients, not the optimizer state.
  auto f = ps->memory_footprint(small, 8, 1e15);
  CHECK(f.gpu_optimizer_bytes == 0);
  CHECK(f.gpu_params_bytes == 2 * small.total_params());
  // Dedicated servers on a cluster without any: a result that says why.
  const auto plain = sim::hardware_of(star(8));
  CHECK(ps->capacity_problem(small, plain).find("need CPU machines in the topology") != std::string::npos);
  CHECK(make_system("parameter-server", {{"parameter_servers", 3}})->capacity_problem(small, hw).find("3 parameter servers asked for") !=
        std::string::npos);
  CHECK(make_system("parameter-server", {{"ps_placement", "colocated"}})->capacity_problem(small, plain) == "");
}

TEST_CASE("Dedicated parameter servers are priced only for the systems that use them") {
  topologies::LuwuStarParams p;
  p.workers = 4;
  p.parameter_servers = 3;
  p.host_profile = "xeon-silver-4214-gen3";
  p.gpu_profile = "a100-40gb-pcie";
  p.parameter_server_nic_profile = "rdma-nic-100g";
  auto topo = topologies::build_luwu_star(p);
  const auto prices = models::find_price_list(models::kDefaultPriceList);
  const auto without = sim::cluster_cost(topo, prices, {});
  const auto with = sim::cluster_cost(topo, prices, {.parameter_servers = true});
  // Each server: a $10,600 server (CPUs, DRAM, chassis) and a $1,000 conventional 100 Gb/s NIC.
  CHECK(with.usd - without.usd == doctest::Approx(3 * (10600 + 1000)).epsilon(1e-12).scale(0));
  CHECK(with.parts.at("rdma-nic-100g") == 3);
  CHECK(make_system("parameter-server")->uses_parameter_servers());
  CHECK_FALSE(make_system("parameter-server", {{"ps_placement", "colocated"}})->uses_parameter_servers());
  CHECK_FALSE(make_system("atp")->uses_parameter_servers());
}

TEST_CASE("ATP with the switch to itself: every piece summed in the switch, relayed by its colocated server, "
          "a NIC carries the wire gradient plus 1/N of it each way") {
  const int n = 4;
  auto topo = star(n);
  auto hw = quiet_hardware(topo);
  const std::uint64_t params = 8'000'000;
  auto trace = synthetic_trace(2, params, 1e12);
  const double wire = 2.0 * 2 * params * 2;  // fp16 gradient as 4-byte integers
  auto r = sim::simulate_system(trace, topo, hw, *make_system("atp"), {});
  REQUIRE(r.feasible);
  // 16 pieces over 4 servers: each worker's server relays 4 (1/N): in from the switch, back out.
  CHECK(r.sent_bytes_per_worker == doctest::Approx(wire * (1 + 1.0 / n)).epsilon(1e-9).scale(0));
  CHECK(r.received_bytes_per_worker == doctest::Approx(wire * (1 + 1.0 / n)).epsilon(1e-9).scale(0));
}

TEST_CASE("ATP with no free aggregator: everything falls back to the servers, which sum and send through the "
          "switch's multicast") {
  const int n = 4;
  auto topo = star(n);
  auto hw = quiet_hardware(topo);
  const std::uint64_t params = 8'000'000;
  auto trace = synthetic_trace(2, params, 1e12);
  const double wire = 2.0 * 2 * params * 2;
  auto r = sim::simulate_system(trace, topo, hw, *make_system("atp", {{"switch_aggregator_share", 0}}), {});
  REQUIRE(r.feasible);
  // Up: shards to the N-1 other servers, and this server's sum (1/N) to the switch: W.
  // Down: the N-1 others' shards for this server, and every server's sum multicast: W (2N-1)/N.
  CHECK(r.sent_bytes_per_worker == doctest::Approx(wire).epsilon(1e-9).scale(0));
  CHECK(r.received_bytes_per_worker == doctest::Approx(wire * (2.0 * n - 1) / n).epsilon(1e-9).scale(0));
  // Half the aggregators: half of each way, by linearity.
  auto half = sim::simulate_system(trace, topo, hw, *make_system("atp", {{"switch_aggregator_share", 0.5}}), {});
  CHECK(half.received_bytes_per_worker ==
        doctest::Approx(0.5 * wire * (1 + 1.0 / n) + 0.5 * wire * (2.0 * n - 1) / n).epsilon(1e-9).scale(0));
}

TEST_CASE("ATP on dedicated servers: the servers relay the sums, the workers carry the wire gradient alone") {
  const int n = 4, servers = 2;
  auto topo = star_with_servers(n, servers);
  auto hw = quiet_hardware(topo);
  const std::uint64_t params = 8'000'000;
  auto trace = synthetic_trace(2, params, 1e12);
  const double wire = 2.0 * 2 * params * 2;
  auto r = sim::simulate_system(trace, topo, hw, *make_system("atp", {{"ps_placement", "dedicated"}}), {});
  REQUIRE(r.feasible);
  CHECK(r.sent_bytes_per_worker == doctest::Approx(wire).epsilon(1e-9).scale(0));
  CHECK(r.received_bytes_per_worker == doctest::Approx(wire).epsilon(1e-9).scale(0));
  for (int k = 0; k < servers; ++k)
    CHECK(edge_bytes(r, topo, "ps" + std::to_string(k) + "-nic", "switch") == doctest::Approx(2 * wire / servers).epsilon(1e-9).scale(0));
}

TEST_CASE("ATP and parameter-server settings: bad values name their JSON path") {
  CHECK(system_settings_error("atp", {{"switch_aggregator_share", 1.5}}).find("switch_aggregator_share") != std::string::npos);
  CHECK(system_settings_error("atp", {{"ps_placement", "rack"}}).find("ps_placement") != std::string::npos);
  CHECK(system_settings_error("parameter-server", {{"parameter_servers", -1}}).find("parameter_servers") != std::string::npos);
  CHECK(system_settings_error("parameter-server", {{"pipeline_chunks", 4}}).find("pipeline_chunks") != std::string::npos);
  // ATP needs a switch that aggregates.
  auto no_aggregation = sim::hardware_of(star(4));
  no_aggregation.network_switch.reset();
  CHECK(make_system("atp")->capacity_problem(synthetic_trace(1, 1000, 0), no_aggregation).find("programmable switch") !=
        std::string::npos);
}
