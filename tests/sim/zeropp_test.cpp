// ZeRO++ (sim/systems/zeropp) against ZeRO-3 in closed form: qgZ sends 0.5 B per gradient element
// plus a 4 B scale per 2048-element block where ZeRO-3 sends 2 B, qwZ 1 B plus the scale per
// parameter gathered; hpZ's secondary partition costs P x 2 B / (GPUs per server) and keeps the
// backward gathers off the network.
#include <doctest/doctest.h>

#include "sim/experiment/simulate.hpp"
#include "tests/sim/sim_test_support.hpp"
#include "topologies/builders.hpp"
#include "workloads/model_catalog.hpp"

using namespace luwu;
using namespace sim_test;

namespace {

double sent(const workloads::Trace& trace, const topologies::Topology& topo, const std::string& system, Json settings) {
  auto r = sim::simulate_system(trace, topo, quiet_hardware(topo), *make_system(system, settings), {});
  REQUIRE(r.feasible);
  return r.sent_bytes_per_worker;
}

}  // namespace

TEST_CASE("zero++ qgZ and qwZ: the gradient and weight bytes each rank sends shrink by the wire formats' ratio") {
  const auto trace = gpt3_125m_trace();
  const auto topo = star(4);
  const double n = 4;
  // Reduce-scatters: each rank sends (N - 1) / N of every backward op's gradient (fp16) in a ring.
  double gradients = 0;
  for (const auto& op : trace.ops)
    if (op.kind == workloads::OpKind::Backward) gradients += static_cast<double>(op.grad_bytes);
  const double reduce_scatter = (n - 1) / n * gradients;
  const double zero3 = sent(trace, topo, "zero3", Json::object());
  const double all_gather = zero3 - reduce_scatter;  // the rest of ZeRO-3's traffic
  REQUIRE(all_gather > 0);
  const double scale = 4.0 / 2048;
  const double qgz = sent(trace, topo, "zero++", {{"zero_quantized_weights", false}});
  CHECK(qgz == doctest::Approx(all_gather + reduce_scatter * (0.5 + scale) / 2).epsilon(1e-9));
  const double qwz = sent(trace, topo, "zero++", {{"zero_quantized_gradients", false}});
  CHECK(qwz == doctest::Approx(all_gather * (1 + scale) / 2 + reduce_scatter).epsilon(1e-9));
  const double both = sent(trace, topo, "zero++", Json::object());
  CHECK(both == doctest::Approx(all_gather * (1 + scale) / 2 + reduce_scatter * (0.5 + scale) / 2).epsilon(1e-9));
  // Without either, ZeRO++ is ZeRO-3.
  CHECK(sent(trace, topo, "zero++", {{"zero_quantized_weights", false}, {"zero_quantized_gradients", false}}) == zero3);
}

TEST_CASE("zero++ hpZ: a secondary partition per server, and the backward gathers stay inside it") {
  const auto trace = gpt3_125m_trace();
  topologies::DgxParams d;
  d.servers = 2;
  d.gpus_per_server = 4;
  const auto topo = topologies::build_dgx(d);
  // Parameters released after each use (no reuse window, and no hooks of modules without
  // parameters, whose prefetches would pass the backward uses of a model this small and keep every
  // parameter), so the backward pass gathers again.
  const Json hpz = {{"zero_hpz_partition_size", 4}, {"zero_quantized_weights", false}, {"zero_quantized_gradients", false},
                    {"max_reuse_distance", 0}, {"module_hooks", "with-parameters"}};
  const double zero3 = sent(trace, topo, "zero3", {{"max_reuse_distance", 0}, {"module_hooks", "with-parameters"}});
  const double with_hpz = sent(trace, topo, "zero++", hpz);
  CHECK(with_hpz < zero3);
  // Without the backward gathers ZeRO-3 sends what hpZ does: with a reuse window that keeps every
  // parameter from forward to backward (125M < 1e9 live), neither gathers in backward.
  CHECK(sent(trace, topo, "zero++", {{"zero_hpz_partition_size", 4}, {"zero_quantized_weights", false},
                                     {"zero_quantized_gradients", false}}) == sent(trace, topo, "zero3", Json::object()));
  // Memory: the secondary partition, P / 4 parameters of 2 B on each GPU, on top of ZeRO-3's shards.
  const auto base =
      make_system("zero3", {{"max_reuse_distance", 0}, {"module_hooks", "with-parameters"}})->memory_footprint(trace, 8, 40e9);
  const auto more = make_system("zero++", hpz)->memory_footprint(trace, 8, 40e9);
  const double p = static_cast<double>(trace.total_params());
  CHECK(static_cast<double>(more.gpu_params_bytes - base.gpu_params_bytes) == doctest::Approx(2 * p / 4).epsilon(1e-6));
  // A partition size other than the servers' GPUs does not run, and says why.
  auto wrong = sim::simulate_system(trace, topo, quiet_hardware(topo),
                                    *make_system("zero++", {{"zero_hpz_partition_size", 8}}), {});
  CHECK_FALSE(wrong.feasible);
  CHECK(wrong.reason.find("GPUs per server (4)") != std::string::npos);
}
