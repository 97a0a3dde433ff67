// Deep Optimizer States (arXiv 2410.21316): the interleaving policy's closed forms, the PCIe bytes
// its subgroups move, and timelines a hand calculation predicts.
#include <doctest/doctest.h>

#include "tests/sim/sim_test_support.hpp"

#include <cmath>
#include <string>

#include "sim/experiment/simulate.hpp"
#include "sim/systems/deep_optimizer_states/deep_optimizer_states.hpp"
#include "sim/systems/registry.hpp"
#include "topologies/builders.hpp"
#include "topologies/routes.hpp"

using namespace luwu;
using namespace sim_test;

namespace {

// Bytes both ways on the last link of rank `rank`'s GPU-to-CPU route (the CPU's PCIe link).
double cpu_pcie_bytes(const sim::SystemResult& r, const topologies::Topology& topo, int rank) {
  auto gpu = topo.gpus()[rank];
  auto route = topologies::shortest_route(topo, gpu, topo.cpu_of(gpu));
  const std::string edge = topo[route.back()].name;
  return link_bytes(r, edge + "_UP") + link_bytes(r, edge + "_DOWN");
}

sim::InterleavePlan rates(double c, double g, double B) {
  sim::InterleavePlan r;
  r.a_bytes = 2;   // fp16 parameter up
  r.u_bytes = 16;  // fp32 master, m, v and gradient up
  r.d_bytes = 12;  // master, m, v down
  r.cpu_s_per_param = c;
  r.gpu_s_per_param = g;
  r.pcie_Bps = B;
  return r;
}

}  // namespace

TEST_CASE("Deep Optimizer States: the policy's share is where the CPU lane meets the first rising term") {
  sim::DeepOptimizerStatesSettings s;  // auto, subgroups of 1e8
  // c = 4 ns, g = 0.1 ns per parameter, B = 16 GB/s:
  //   c / (c + g)                    = 4 / 4.1           = 0.97561
  //   (c - a/B) / (c + (u - a)/B)    = 3.875 / 4.875     = 0.794872  <- the smallest
  //   c / (c + d/B)                  = 4 / 4.75          = 0.842105
  const double P = 1e9;
  auto plan = sim::plan_interleaving(s, rates(4e-9, 1e-10, 16e9), P, 1e12);
  CHECK(plan.share == doctest::Approx(3.875 / 4.875).epsilon(1e-12));
  CHECK(plan.predicted_s == doctest::Approx(P * (1 - 3.875 / 4.875) * 4e-9).epsilon(1e-12));
  // 10 subgroups; GPU when round((i + 1) f) > round(i f): round(10 f) = 8 of them, subgroups 2 and 7 on the CPU.
  REQUIRE(plan.subgroups == 10);
  CHECK(plan.gpu_subgroups == 8);
  const std::vector<bool> expected = {true, true, false, true, true, true, true, false, true, true};
  CHECK(plan.on_gpu == expected);

  // A GPU slower than the PCIe terms: the GPU lane binds, f = c / (c + g) = 4 / 8.
  auto slow_gpu = sim::plan_interleaving(s, rates(4e-9, 4e-9, 16e9), P, 1e12);
  CHECK(slow_gpu.share == doctest::Approx(0.5).epsilon(1e-12));
  CHECK(slow_gpu.gpu_subgroups == 5);

  // A CPU faster than its own subgroups' 16-bit upload (c < a / B): nothing to gain, f = 0.
  auto fast_cpu = sim::plan_interleaving(s, rates(1e-10, 1e-10, 16e9), P, 1e12);
  CHECK(fast_cpu.share == 0);
  CHECK(fast_cpu.gpu_subgroups == 0);
  CHECK(fast_cpu.predicted_s == doctest::Approx(P * 2 / 16e9).epsilon(1e-12));

  // Two subgroups' state (2 x 16 B x 1e8 = 3.2 GB) must fit the allowed free memory.
  auto no_room = sim::plan_interleaving(s, rates(4e-9, 1e-10, 16e9), P, 3.2e9 - 1);
  CHECK(no_room.share == 0);
  CHECK(no_room.gpu_subgroups == 0);
  CHECK(no_room.note.find("do not fit") != std::string::npos);
  CHECK(sim::plan_interleaving(s, rates(4e-9, 1e-10, 16e9), P, 3.2e9).gpu_subgroups == 8);

  // A fixed share is taken as given.
  s.gpu_share = 0.25;
  auto fixed = sim::plan_interleaving(s, rates(4e-9, 1e-10, 16e9), P, 1e12);
  CHECK(fixed.share == 0.25);
  CHECK(fixed.gpu_subgroups == 3);  // round(2.5) = 3 (half away from zero)
}

TEST_CASE("Deep Optimizer States moves 4 + 2 B per CPU-updated and 4 + 16 + 12 B per GPU-updated parameter over PCIe") {
  // Per GPU, shard S = P / N: the fp32 gradient down in backward (4 S); a CPU subgroup's fp16
  // parameters up (2 B each); a GPU subgroup's master, m, v and gradient up (16 B) and master, m, v
  // back (12 B).  With 4 subgroups and gpu_share 0.5, round((i + 1) / 2) > round(i / 2) (halves
  // away from zero) puts subgroups 0 and 2 on the GPU: half the shard.
  const int n = 2;
  auto topo = star(n);
  auto hw = quiet_hardware(topo);
  const std::uint64_t layer_params = 20'000'000;
  auto trace = synthetic_trace(4, layer_params, 1e12);
  const double S = 4.0 * layer_params / n;  // 4e7 parameters per rank: 4 subgroups of 1e7
  for (double share : {0.0, 0.5, 1.0}) {
    auto system = make_system("deep-optimizer-states", {{"sub_group_size", 1e7}, {"gpu_share", share}});
    auto r = sim::simulate_system(trace, topo, hw, *system, {});
    REQUIRE(r.feasible);
    const double on_gpu = share * S;  // round(4 x share) of 4 subgroups of S / 4
    const double expected = 4 * S + 2 * (S - on_gpu) + (16 + 12) * on_gpu;
    for (int w = 0; w < n; ++w) CHECK(cpu_pcie_bytes(r, topo, w) == doctest::Approx(expected).epsilon(1e-9));
  }
  // Share 0 moves what ZeRO-Offload moves.
  auto zoff = sim::simulate_system(trace, topo, hw, *make_system("zero-offload"), {});
  CHECK(cpu_pcie_bytes(zoff, topo, 0) == doctest::Approx(6 * S).epsilon(1e-9));
}

TEST_CASE("Deep Optimizer States with tensor parallelism: a rank's shard is its stage trace's parameters over the "
          "data-parallel group, not over the cluster's GPUs") {
  // Tensor 2 x data 2 on one server of 4 GPUs, each on its own PCIe switch: the trace is one
  // tensor rank's share, partitioned over the 2 ranks of its data-parallel group, S = P / 2 each.
  // All on the GPU, subgroups of 1e7: 4 S down in backward, 16 + 12 B per parameter of S up and
  // back in the update.
  topologies::DgxParams p;
  p.servers = 1;
  p.gpus_per_server = 4;
  p.gpus_per_pcie_switch = 1;
  const auto topo = topologies::build_dgx(p);
  const std::uint64_t layer_params = 20'000'000;
  const auto trace = synthetic_trace(4, layer_params, 1e12);
  sim::ParallelWorkload workload;
  workload.layout.tensor = 2;
  workload.layout.data = 2;
  workload.stages = {&trace};
  auto system = make_system("deep-optimizer-states", {{"sub_group_size", 1e7}, {"gpu_share", 1.0}});
  const auto r = sim::simulate_parallel_system(workload, topo, quiet_hardware(topo), *system, {});
  REQUIRE(r.feasible);
  const double S = 4.0 * layer_params / 2;
  for (int w = 0; w < 4; ++w) CHECK(cpu_pcie_bytes(r, topo, w) == doctest::Approx(4 * S + (16 + 12) * S).epsilon(1e-9));
}

TEST_CASE("Deep Optimizer States timelines: all on the GPU, all on the CPU in subgroups") {
  // One worker (no collectives), one layer of P parameters, compute only in the kernels.
  auto topo = star(1);
  auto hw = quiet_hardware(topo);
  const std::uint64_t params = 40'000'000;
  auto trace = synthetic_trace(1, params, 1e12);
  const double P = params;
  Path pcie = gpu_to_cpu(topo, 0);
  const double backward = compute_s(trace, hw) + pcie.time_s(4 * P);  // the fp32 gradient down

  SUBCASE("one subgroup on the GPU: state up, Adam on the GPU, state down") {
    auto r = sim::simulate_system(
        trace, topo, hw, *make_system("deep-optimizer-states", {{"sub_group_size", 1e8}, {"gpu_share", 1.0}}), {});
    REQUIRE(r.feasible);
    const double expected = backward + pcie.time_s(16 * P) + gpu_optimizer_s(hw, P) + pcie.time_s(12 * P);
    CHECK(r.iteration_time_s == doctest::Approx(expected).epsilon(1e-9));
  }
  SUBCASE("four subgroups on the CPU: steps back to back, each upload under the next step") {
    auto r = sim::simulate_system(
        trace, topo, hw, *make_system("deep-optimizer-states", {{"sub_group_size", 1e7}, {"gpu_share", 0}}), {});
    REQUIRE(r.feasible);
    REQUIRE(pcie.time_s(2 * P / 4) < cpu_optimizer_s(hw, P / 4));
    const double expected = backward + 4 * cpu_optimizer_s(hw, P / 4) + pcie.time_s(2 * P / 4);
    CHECK(r.iteration_time_s == doctest::Approx(expected).epsilon(1e-9));
  }
  SUBCASE("two subgroups on the GPU, double-buffered: the second's state comes up while the first updates") {
    auto r = sim::simulate_system(
        trace, topo, hw, *make_system("deep-optimizer-states", {{"sub_group_size", 2e7}, {"gpu_share", 1.0}}), {});
    REQUIRE(r.feasible);
    const double half = P / 2;
    // Up(1) runs from the end of up(0) alongside the first update; PCIe is full duplex, so down(0)
    // does not slow it.  Then update(1) and down(1).
    const double up = pcie.time_s(16 * half), adam = gpu_optimizer_s(hw, half);
    REQUIRE(up > adam);  // the second update waits for its state
    const double expected = backward + up + up + adam + pcie.time_s(12 * half);
    CHECK(r.iteration_time_s == doctest::Approx(expected).epsilon(1e-9));
  }
}

TEST_CASE("Deep Optimizer States on a DGX server: the policy sends part of the update to the GPU, and it is faster") {
  topologies::DgxParams p;
  p.servers = 1;
  p.nvme_per_server = 0;
  auto topo = topologies::build_dgx(p);
  auto hw = quiet_hardware(topo);
  // Each GPU's share of its PCIe path: its PCIe switch's uplink serves 2 GPUs.
  const auto pcie = models::pcie_from_profile(models::find_profile(p.pcie_profile));
  CHECK(hw.gpu_host_Bps == doctest::Approx(pcie.achieved_Bps_per_direction() / 2).epsilon(1e-12));
  auto trace = synthetic_trace(8, 50'000'000, 1e12);
  auto dos = sim::simulate_system(trace, topo, hw, *make_system("deep-optimizer-states", {{"sub_group_size", 1e7}}), {});
  auto zoff = sim::simulate_system(trace, topo, hw, *make_system("zero-offload"), {});
  REQUIRE(dos.feasible);
  REQUIRE(zoff.feasible);
  CHECK(dos.iteration_time_s < zoff.iteration_time_s);
  // The PCIe switch's uplink carries 2 GPUs' bytes: ZeRO-Offload's 6 B per parameter of each shard,
  // and more with subgroups updated on the GPU (16 + 12 B instead of 2).
  const double S = 8 * 50e6 / 8;
  CHECK(cpu_pcie_bytes(zoff, topo, 0) == doctest::Approx(2 * 6 * S).epsilon(1e-9));
  CHECK(cpu_pcie_bytes(dos, topo, 0) > 2 * 6 * S * 1.01);
}

TEST_CASE("Deep Optimizer States settings") {
  CHECK(system_settings_error("deep-optimizer-states", {{"gpu_share", "auto"}}) == "");
  CHECK(system_settings_error("deep-optimizer-states", {{"gpu_share", 1.5}}).find("[0, 1]") != std::string::npos);
  CHECK(system_settings_error("deep-optimizer-states", {{"gpu_share", "some"}}).find("\"auto\"") != std::string::npos);
  CHECK(system_settings_error("deep-optimizer-states", {{"sub_group_size", 10}}).find("at least 1e5") != std::string::npos);
  CHECK(system_settings_error("deep-optimizer-states", {{"gpu_memory_fraction", 2}}).find("fraction") != std::string::npos);
  CHECK(system_settings_error("deep-optimizer-states", {{"delayed_param_update", true}})
            .find("is not a setting of deep-optimizer-states") != std::string::npos);
  CHECK(system_settings_error("deep-optimizer-states", {{"state_placement", "interleave"}}) == "");
}
