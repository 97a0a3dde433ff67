// ZeRO-3 with hierarchical partitioning (sim/systems/zero_hierarchical) in closed form: every
// gather stays inside the server, so the only bytes a GPU's NIC sends are the ring all-reduce of
// its 1/G shard of each gradient across the S servers, 2 (S-1)/S x (gradient bytes) / G; each GPU
// holds 1/G of the model state whatever the number of servers.
#include <doctest/doctest.h>

#include "sim/experiment/simulate.hpp"
#include "tests/sim/sim_test_support.hpp"
#include "topologies/builders.hpp"

using namespace luwu;
using namespace sim_test;

namespace {

topologies::Topology dgx(int servers, int gpus) {
  topologies::DgxParams d;
  d.servers = servers;
  d.gpus_per_server = gpus;
  return topologies::build_dgx(d);
}

}  // namespace

TEST_CASE("zero-hierarchical: a GPU's NIC carries only the cross-server all-reduce of its 1/G gradient shard") {
  const auto trace = gpt3_125m_trace();
  double gradients = 0;
  for (const auto& op : trace.ops)
    if (op.kind == workloads::OpKind::Backward) gradients += static_cast<double>(op.grad_bytes);
  for (int servers : {2, 3}) {
    CAPTURE(servers);
    const int g = 4;
    const auto topo = dgx(servers, g);
    auto r = sim::simulate_system(trace, topo, quiet_hardware(topo), *make_system("zero-hierarchical", {{"partition_size", g}}), {});
    REQUIRE(r.feasible);
    const double s = servers;
    CHECK(r.sent_bytes_per_worker == doctest::Approx(2 * (s - 1) / s * gradients / g).epsilon(1e-9));
    CHECK(r.received_bytes_per_worker == doctest::Approx(2 * (s - 1) / s * gradients / g).epsilon(1e-9));
    // ZeRO-3 on the same cluster gathers across the servers too: more bytes leave each GPU.
    auto zero3 = sim::simulate_system(trace, topo, quiet_hardware(topo), *make_system("zero3"), {});
    CHECK(zero3.sent_bytes_per_worker > r.sent_bytes_per_worker);
  }
}

TEST_CASE("zero-hierarchical: 1/G of the model state per GPU whatever the servers, the partition is the server") {
  const auto trace = gpt3_125m_trace();
  const auto p = trace.total_params();
  auto system = make_system("zero-hierarchical", {{"partition_size", 4}});
  for (int workers : {8, 64}) {
    const auto f = system->memory_footprint(trace, workers, 40e9);
    CHECK(f.gpu_params_bytes == 2 * ((p + 3) / 4));
    CHECK(f.gpu_grads_bytes == 2 * ((p + 3) / 4));
    CHECK(f.gpu_optimizer_bytes == 12 * ((p + 3) / 4));
  }
  // ZeRO-3 shards over all N instead.
  CHECK(make_system("zero3")->memory_footprint(trace, 64, 40e9).gpu_optimizer_bytes == 12 * ((p + 63) / 64));
  const auto topo = dgx(2, 4);
  CHECK(system->capacity_problem(trace, sim::hardware_of(topo)) == "");
  CHECK(make_system("zero-hierarchical")->capacity_problem(trace, sim::hardware_of(topo)).find(
            "partition_size 8 must be the cluster's GPUs per server (4)") != std::string::npos);
}
