// LuWu at scale-out (luwu.hpp's parameter_residency; luwu-star's optimizer_nodes): what each
// optimizer node's link carries follows from the byte counts of the stages it serves.
// - With one optimizer node per pipeline stage, each node's link carries its stage's fp16
//   parameters (2 uses per layer per micro-batch) and its stage's aggregated gradients, and
//   nothing of the other stage's.
// - With the parameters resident for the iteration, the node sends each parameter once and
//   receives each aggregated gradient once, whatever the micro-batches; per use, m times.
// - A stage's share of a node it shares with other stages (Hardware::optimizer_node_share).
// - Resident parameters and their gradient accumulator count in the GPU's footprint.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/experiment/simulate.hpp"
#include "tests/sim/sim_test_support.hpp"
#include "topologies/builders.hpp"

using namespace luwu;
using namespace sim_test;

namespace {

topologies::Topology star_with_nodes(int workers, int optimizer_nodes) {
  topologies::LuwuStarParams p;
  p.workers = workers;
  p.optimizer_nodes = optimizer_nodes;
  return topologies::build_luwu_star(p);
}

sim::SystemResult run_pipeline(const std::vector<workloads::Trace>& stages, const topologies::Topology& topo,
                               luwu::Json settings = luwu::Json::object()) {
  sim::ParallelWorkload workload;
  workload.layout.tensor = 1;
  workload.layout.pipeline = static_cast<int>(stages.size());
  workload.layout.data = static_cast<int>(topo.gpus().size()) / workload.layout.pipeline;
  for (const auto& s : stages) workload.stages.push_back(&s);
  return sim::simulate_parallel_system(workload, topo, sim::hardware_of(topo), *make_system("luwu", std::move(settings)),
                                       {});
}

}  // namespace

TEST_CASE("luwu with an optimizer node per pipeline stage: each node's link carries its own stage's parameters and "
          "gradients, nothing of the other's") {
  // Two stages of different sizes (so that a byte of one cannot pass for the other's), 2 micro-batches,
  // data 2: ranks 0 and 1 run stage 0, ranks 2 and 3 stage 1 (Megatron-LM's rank order).
  const int m = 2;
  const int layers0 = 3, layers1 = 2;
  const double params0 = 8e6, params1 = 5e6;
  const std::vector<workloads::Trace> stages{synthetic_trace(layers0, 8'000'000, 1e12, m),
                                             synthetic_trace(layers1, 5'000'000, 1e12, m)};
  // Per use: each layer's fp16 parameters in forward and in backward, every micro-batch; the
  // gradient aggregated once per micro-batch, LuWu's 2-byte integers on the wire.
  const double down0 = m * 2.0 * layers0 * params0 * 2, down1 = m * 2.0 * layers1 * params1 * 2;
  const double up0 = m * layers0 * params0 * 2, up1 = m * layers1 * params1 * 2;

  const auto two_topo = star_with_nodes(4, 2);
  const auto two = run_pipeline(stages, two_topo);
  REQUIRE(two.feasible);
  CHECK(link_bytes(two, "optnode-nic0--switch_UP") == doctest::Approx(down0).scale(0));
  CHECK(link_bytes(two, "optnode1-nic0--switch_UP") == doctest::Approx(down1).scale(0));
  CHECK(link_bytes(two, "optnode-nic0--switch_DOWN") == doctest::Approx(up0).scale(0));
  CHECK(link_bytes(two, "optnode1-nic0--switch_DOWN") == doctest::Approx(up1).scale(0));

  // One node serves both stages: its link carries the sum.
  const auto one_topo = star_with_nodes(4, 1);
  const auto one = run_pipeline(stages, one_topo);
  REQUIRE(one.feasible);
  CHECK(link_bytes(one, "optnode-nic0--switch_UP") == doctest::Approx(down0 + down1).scale(0));
  CHECK(link_bytes(one, "optnode-nic0--switch_DOWN") == doctest::Approx(up0 + up1).scale(0));
  // Halving the node's load over a link of the same rate cannot make the iteration longer.
  CHECK(two.iteration_time_s <= one.iteration_time_s * (1 + 1e-12));
}

TEST_CASE("luwu's optimizer node share: a stage's parameters over all the stages (x tensor groups) its node serves") {
  const std::vector<workloads::Trace> stages{synthetic_trace(3, 8'000'000, 1e12), synthetic_trace(2, 5'000'000, 1e12),
                                             synthetic_trace(1, 6'000'000, 1e12)};
  sim::ParallelWorkload workload;
  workload.layout.tensor = 2;
  workload.layout.pipeline = 3;
  workload.layout.data = 1;
  for (const auto& s : stages) workload.stages.push_back(&s);
  const sim::Hardware hw = sim::hardware_of(star_with_nodes(6, 1));
  // One node: every group's share is its stage's parameters over 2 x all stages'.
  const auto shared = sim::stage_hardware(workload, hw, 1);
  const double all = 2 * (24e6 + 10e6 + 6e6);
  CHECK(shared[0].optimizer_node_share == doctest::Approx(24e6 / all).epsilon(1e-15));
  CHECK(shared[1].optimizer_node_share == doctest::Approx(10e6 / all).epsilon(1e-15));
  CHECK(shared[2].optimizer_node_share == doctest::Approx(6e6 / all).epsilon(1e-15));
  // Two nodes: node 0 serves stages 0 and 2, node 1 stage 1 alone (its 2 tensor groups).
  const auto split = sim::stage_hardware(workload, hw, 2);
  CHECK(split[0].optimizer_node_share == doctest::Approx(24e6 / (2 * (24e6 + 6e6))).epsilon(1e-15));
  CHECK(split[1].optimizer_node_share == doctest::Approx(0.5).epsilon(1e-15));
  CHECK(split[2].optimizer_node_share == doctest::Approx(6e6 / (2 * (24e6 + 6e6))).epsilon(1e-15));
  // A node per group: the whole node.
  workload.layout.tensor = 1;
  for (const auto& h : sim::stage_hardware(workload, hw, 3)) CHECK(h.optimizer_node_share == 1);
}

TEST_CASE("luwu parameter_residency per-iteration: the node sends each parameter once and receives each aggregated "
          "gradient once per iteration, per-use m times") {
  const int n = 4, layers = 3, m = 3;
  const double p = 8e6;
  const auto topo = star(n);
  // 1e11 FLOPs per op: a layer's compute (under 1 ms) shorter than its 16 MB of parameters on the
  // wire, so what the node sends per micro-batch is exposed.
  const auto trace = synthetic_trace(layers, 8'000'000, 1e11, m);
  const auto hw = sim::hardware_of(topo);
  const auto per_use = sim::simulate_system(trace, topo, hw, *make_system("luwu"), {});
  const auto resident =
      sim::simulate_system(trace, topo, hw, *make_system("luwu", {{"parameter_residency", "per-iteration"}}), {});
  REQUIRE((per_use.feasible && resident.feasible));
  const double params = layers * p;
  // Per use (the default, unchanged): forward and backward of every micro-batch down, a gradient
  // per micro-batch up.
  CHECK(link_bytes(per_use, "optnode-nic0--switch_UP") == doctest::Approx(m * 2 * params * 2).scale(0));
  CHECK(link_bytes(per_use, "optnode-nic0--switch_DOWN") == doctest::Approx(m * params * 2).scale(0));
  // Per iteration: the fp16 parameters once, the accumulated gradient once (2-byte elements).
  CHECK(link_bytes(resident, "optnode-nic0--switch_UP") == doctest::Approx(params * 2).scale(0));
  CHECK(link_bytes(resident, "optnode-nic0--switch_DOWN") == doctest::Approx(params * 2).scale(0));
  CHECK(resident.received_bytes_per_worker == doctest::Approx(params * 2).scale(0));
  CHECK(resident.sent_bytes_per_worker == doctest::Approx(params * 2).scale(0));
  // The same compute with less to wait for.
  CHECK(resident.breakdown.compute_s == doctest::Approx(per_use.breakdown.compute_s).epsilon(1e-9));
  CHECK(resident.iteration_time_s < per_use.iteration_time_s);
}

TEST_CASE("luwu parameter_residency per-iteration: the GPU holds the fp16 parameters and their gradient "
          "accumulator, and a model whose parameters do not fit says so") {
  const auto topo = star(4);
  const auto hw = sim::hardware_of(topo);
  const auto resident = make_system("luwu", {{"parameter_residency", "per-iteration"}});
  const auto per_use = make_system("luwu");
  const auto small = synthetic_trace(4, 10'000'000, 1e12, 2);
  const sim::Fit fit = resident->fit(small, hw);
  CHECK(fit.runs());
  CHECK(fit.footprint.gpu_params_bytes == 2 * small.total_params());
  CHECK(fit.footprint.gpu_grads_bytes == 2 * small.total_params());
  CHECK(fit.footprint.gpu_buffer_bytes == 0);
  // 40 layers of 500M: 20B parameters, 40 GB of fp16 parameters and as much gradient on a 40 GB
  // GPU; streamed per use, two layers (4 GB with their gradients) at a time.
  const auto large = synthetic_trace(40, 500'000'000, 1e12, 2);
  CHECK_FALSE(resident->fit(large, hw).runs());
  CHECK_FALSE(resident->fit(large, hw).footprint.fits);
  CHECK(per_use->fit(large, hw).footprint.fits);
}
