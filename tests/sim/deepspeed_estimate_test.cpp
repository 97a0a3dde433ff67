// DeepSpeed 0.9.3's model-state estimators (sim/systems/deepspeed_estimate.hpp) against their
// formulas worked by hand, and the systems that report them.
#include <doctest/doctest.h>

#include <cmath>

#include "sim/systems/registry.hpp"
#include "tests/sim/sim_test_support.hpp"

using namespace luwu;
using namespace sim_test;

TEST_CASE("estimate_zero3_model_states_mem_needs: DeepSpeed's three offload cases, 1e9 parameters, 16 GPUs in 2 nodes") {
  // P = 1e9, L = 1e8 (the largest module), G = 16, g = 8, n = 2, f = 1.5.
  const auto none = sim::estimate_zero3_model_states(1e9, 1e8, 8, 2, false, false);
  CHECK(none.gpu_bytes == 4e8 + 18e9 / 16);         // 4 L + int(18 P / G) = 1.525e9
  CHECK(none.cpu_bytes_per_node == 1e8 * 4 * 8 * 1.5);  // L x 4 x g x f (zero_init)
  const auto optimizer = sim::estimate_zero3_model_states(1e9, 1e8, 8, 2, true, false);
  CHECK(optimizer.gpu_bytes == 4e8 + 2e9 / 16);     // 4 L + int(2 P / G)
  CHECK(optimizer.cpu_bytes_per_node == 1e9 * 16 / 2 * 1.5);
  const auto both = sim::estimate_zero3_model_states(1e9, 1e8, 8, 2, true, true);
  CHECK(both.gpu_bytes == 4e8);                     // 4 L: the largest module's fp16 parameters and gradients
  CHECK(both.cpu_bytes_per_node == 1e9 * 18 / 2 * 1.5);
  // DeepSpeed truncates with int(): 18 x 1000 / 3 GPUs = 6000 exactly, 18 x 1001 / 3 = 6006, 2 x 1001 / 3 -> 667.
  CHECK(sim::estimate_zero3_model_states(1001, 0, 3, 1, true, false).gpu_bytes == 667);
}

TEST_CASE("estimate_zero2_model_states_mem_needs: with and without optimizer offload") {
  const auto offload = sim::estimate_zero2_model_states(1e9, 8, 2, true);
  CHECK(offload.gpu_bytes == 2e9);                          // 2 P: the fp16 parameters, replicated
  CHECK(offload.cpu_bytes_per_node == 1e9 * (4 * 16) * 1.5);  // P max(4 G, 16) f
  CHECK(sim::estimate_zero2_model_states(1e9, 1, 2, true).cpu_bytes_per_node == 1e9 * 16 * 1.5);
  const auto none = sim::estimate_zero2_model_states(1e9, 8, 2, false);
  CHECK(none.gpu_bytes == 4e9 + 16e9 / 16);
  CHECK(none.cpu_bytes_per_node == 1e9 * 4 * 8 * 1.5);
}

TEST_CASE("the DeepSpeed systems report DeepSpeed's estimate for their configuration, the others none") {
  // GPT-3 125M: its largest module is the token embedding (50257 x 768, with the learned positions
  // 2048 x 768 that luwusim keeps in the same layer), 8 single-GPU workers.
  workloads::TrainingConfig t;
  t.micro_batch = 1;
  t.seq_len = 256;
  const auto trace = workloads::generate_trace(*workloads::find_catalog_model("gpt3-125m"), t);
  auto hw = sim::hardware_of(star(8));
  const double P = static_cast<double>(trace.total_params()), L = (50257.0 + 2048) * 768;
  CHECK(sim::largest_submodule_params(trace) == L);
  const auto z3 = make_system("zero3")->deepspeed_estimate(trace, hw);
  REQUIRE(z3);
  CHECK(z3->gpu_bytes == std::floor(4 * L + std::floor(18 * P / 8)));
  const auto dram = make_system("zero-infinity", {{"offload", "dram"}})->deepspeed_estimate(trace, hw);
  REQUIRE(dram);
  CHECK(dram->gpu_bytes == 4 * L);
  CHECK(dram->cpu_bytes_per_node == std::floor(P * 18 / 8 * 1.5));
  const auto nvme = make_system("zero-infinity")->deepspeed_estimate(trace, hw);
  REQUIRE(nvme);
  CHECK(nvme->cpu_bytes_per_node == 0);  // the estimator has no NVMe case
  const auto offload = make_system("zero-offload")->deepspeed_estimate(trace, hw);
  REQUIRE(offload);
  CHECK(offload->gpu_bytes == 2 * P);
  CHECK_FALSE(make_system("luwu")->deepspeed_estimate(trace, hw));
  CHECK_FALSE(make_system("ddp")->deepspeed_estimate(trace, hw));
}
