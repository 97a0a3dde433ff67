// LuWu's optimizer node (models/optimizer_node.hpp): per-step bytes, the paper's requirement
// table, thread counts per step, and layer-centric bubbles, against hand arithmetic.
#include <doctest/doctest.h>

#include <numeric>

#include "models/models.hpp"

using namespace luwu::models;

namespace {
// bf16 parameters and gradients, fp32 master + m + v, AdamW (17 FLOPs: optimizer_cost.hpp).
NodeSizes bf16_adamw() { return {2, 2, adam_mixed_precision_cost({}, /*decoupled_weight_decay*/ true)}; }
constexpr double kGi = 1024.0 * 1024 * 1024;  // the paper's "G" in its requirement table
}  // namespace

TEST_CASE("per-parameter work of the six backward steps, from the sizes") {
  const auto steps = backward_steps(bf16_adamw());
  REQUIRE(steps.size() == 6);
  // (1) SSD -> DRAM 2 B; (2) DRAM -> NIC 2 B; (3) NIC -> DRAM 2 B; (4) SSD -> DRAM 12 B;
  // (5) reads 2 + 12, writes 12 + 2, 17 FLOPs; (6) DRAM -> SSD 14 B.
  CHECK(steps[0].ssd_read_bytes == 2);
  CHECK(steps[0].dram_write_bytes == 2);
  CHECK(steps[1].dram_read_bytes == 2);
  CHECK(steps[2].dram_write_bytes == 2);
  CHECK(steps[3].ssd_read_bytes == 12);
  CHECK(steps[3].dram_write_bytes == 12);
  CHECK(steps[4].dram_read_bytes == 14);
  CHECK(steps[4].dram_write_bytes == 14);
  CHECK(steps[4].flops == 17);
  CHECK(steps[5].dram_read_bytes == 14);
  CHECK(steps[5].ssd_write_bytes == 14);
  const NodeStepWork t = total(steps);
  CHECK(t.ssd_read_bytes == 14);
  CHECK(t.ssd_write_bytes == 14);
  CHECK(t.dram_read_bytes == 30);  // 2 + 14 + 14
  CHECK(t.dram_write_bytes == 30); // 2 + 2 + 12 + 14
  const NodeStepWork f = total(forward_steps(bf16_adamw()));
  CHECK(f.ssd_read_bytes == 2);
  CHECK(f.dram_read_bytes + f.dram_write_bytes == 4);
}

TEST_CASE("the requirement table at 100 Gb/s matches the paper's (binary G), and doubles at 200 Gb/s") {
  // 100 Gb/s = 12.5e9 B/s of bf16 gradients = 6.25e9 params/s.
  const auto r = node_requirements(bf16_adamw(), 12.5e9);
  CHECK(r.params_per_s == doctest::Approx(6.25e9));
  // Forward: SSD 2 B x 6.25e9 = 12.5e9 B/s = 11.64 GiB/s; memory 4 B -> 23.28 GiB/s.
  CHECK(r.forward.ssd_read_Bps == doctest::Approx(12.5e9));
  CHECK(r.forward.ssd_read_Bps / kGi == doctest::Approx(11.6).epsilon(0.005));
  CHECK(r.forward.dram_Bps == doctest::Approx(25e9));
  CHECK(r.forward.dram_Bps / kGi == doctest::Approx(23.3).epsilon(0.005));
  // Backward: SSD 14 B each way = 87.5e9 B/s = 81.49 GiB/s (paper: 81.4); memory 60 B = 375e9 B/s =
  // 349.2 GiB/s (349); 17 FLOPs = 106.25e9 FLOP/s = 98.95 binary G (99).
  CHECK(r.backward.ssd_read_Bps == doctest::Approx(87.5e9));
  CHECK(r.backward.ssd_write_Bps == doctest::Approx(87.5e9));
  CHECK(r.backward.ssd_read_Bps / kGi == doctest::Approx(81.4).epsilon(0.005));
  CHECK(r.backward.dram_Bps == doctest::Approx(375e9));
  CHECK(r.backward.dram_Bps / kGi == doctest::Approx(349).epsilon(0.005));
  CHECK(r.backward.flops == doctest::Approx(106.25e9));
  CHECK(r.backward.flops / kGi == doctest::Approx(99).epsilon(0.005));

  const auto r2 = node_requirements(bf16_adamw(), 25e9);
  CHECK(r2.backward.dram_Bps == doctest::Approx(2 * r.backward.dram_Bps));
  CHECK(r2.backward.ssd_write_Bps == doctest::Approx(2 * r.backward.ssd_write_Bps));
  CHECK(r2.backward.flops == doctest::Approx(2 * r.backward.flops));
  CHECK(r2.forward.dram_Bps == doctest::Approx(2 * r.forward.dram_Bps));
}

TEST_CASE("step-centric threads on 2 x Xeon Gold 5320: 32 for Adam + 5 x 1 at 100 Gb/s, Adam 64 at 200 Gb/s") {
  const NodeThreadRates rates = node_thread_rates_from_profile(find_profile("xeon-gold-5320-node"));
  CHECK(rates.adam_params_per_s == doctest::Approx(6.25e9 / 32));
  const auto t100 = step_threads(bf16_adamw(), rates, 12.5e9);
  CHECK(t100 == std::vector<int>{1, 1, 1, 1, 32, 1});
  CHECK(std::accumulate(t100.begin(), t100.end(), 0) == 37);
  const auto t200 = step_threads(bf16_adamw(), rates, 25e9);
  CHECK(t200[static_cast<std::size_t>(NodeStep::Update)] == 64);
  // So sized, the node keeps up with the line rate.
  CHECK(step_centric_params_per_s(bf16_adamw(), rates, t100, {}) >= 6.25e9);
  // A host profile without the rates cannot size threads; the error names the field.
  CHECK_THROWS_AS(node_thread_rates_from_profile(find_profile("dual-socket-server-2021")), luwu::InputError);
}

TEST_CASE("layer-centric pipelining bubbles: a toy case by hand") {
  // Toy node: Adam 2.5e5 params/s per thread, 1e9 B/s per I/O thread; gradients arrive at 1e6
  // params/s (the pull step's device bound).  Per thread, in params/s: read param 1e9/2 = 5e8,
  // push 5e8, pull 5e8, read state 1e9/12, update 2.5e5, write back 1e9/14.
  const NodeThreadRates rates{2.5e5, 1e9};
  const std::vector<double> devices = {0, 0, 1e6, 0, 0, 0};
  const auto threads = step_threads(bf16_adamw(), rates, 2e6);  // 2e6 B/s = 1e6 params/s
  CHECK(threads == std::vector<int>{1, 1, 1, 1, 4, 1});
  // Step-centric: every step keeps up, min(4 x 2.5e5, 1e6, ...) = 1e6 params/s.
  CHECK(step_centric_params_per_s(bf16_adamw(), rates, threads, devices) == doctest::Approx(1e6));
  // Layer-centric, the same 9 threads, a group of 4 (Adam's need) per layer: 2 layers in flight.
  // One layer, per parameter: 1/(4 x 5e8) x 2 + 1/min(4 x 5e8, 1e6) + 1/(4 x 1e9/12) + 1/(4 x 2.5e5)
  //   + 1/(4 x 1e9/14) = 1e-9 + 1e-6 + 3e-9 + 1e-6 + 3.5e-9 = 2.0075e-6 s.
  const double per_param_s = 1e-9 + 1e-6 + 3e-9 + 1e-6 + 3.5e-9;
  auto two = layer_centric_params_per_s(bf16_adamw(), rates, 9, 4, devices);
  CHECK(two.layers_in_flight == 2);
  CHECK(two.params_per_s == doctest::Approx(2 / per_param_s));  // 9.963e5: just below line rate
  // With 5 threads (4 + 1) only one layer is in flight: the gradient's arrival and the update no
  // longer overlap, and the node runs at half the line rate.
  auto one = layer_centric_params_per_s(bf16_adamw(), rates, 5, 4, devices);
  CHECK(one.layers_in_flight == 1);
  CHECK(one.params_per_s == doctest::Approx(1 / per_param_s));
  CHECK(one.params_per_s < 0.5 * 1e6);
}
