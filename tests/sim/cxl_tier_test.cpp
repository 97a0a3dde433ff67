// CXL-attached memory as a tier of the worker servers: the cluster's expanders as a striped tier
// (hardware_of), the optimizer state's placement between DRAM and CXL against closed forms, the
// capacity verdicts, and the CPU optimizer's time over both tiers in a simulated iteration.
#include <doctest/doctest.h>

#include "tests/sim/sim_test_support.hpp"

#include <string>

#include "models/memory.hpp"
#include "sim/experiment/simulate.hpp"
#include "sim/systems/host_state_placement.hpp"
#include "topologies/builders.hpp"

using namespace luwu;
using namespace sim_test;

namespace {

// One DGX-like server with one GPU and `cxl` Samsung CMM-D expanders.
topologies::Topology one_gpu_server(int cxl) {
  topologies::DgxParams p;
  p.servers = 1;
  p.gpus_per_server = 1;
  p.gpus_per_nic = 1;
  p.gpus_per_pcie_switch = 1;
  p.nvme_per_server = 0;
  p.cxl_per_server = cxl;
  return topologies::build_dgx(p);
}

models::HostSpec two_tier_host(double dram_capacity, double dram_Bps, double cxl_capacity, double cxl_Bps) {
  models::HostSpec h;
  h.name = "test";
  h.cpu.flops = 1e15;
  h.cpu.sockets = 1;
  h.cpu.memory_Bps = dram_Bps;
  h.dram = {dram_capacity, dram_Bps, 1, 0};
  if (cxl_capacity > 0) h.cxl = models::MemorySpec{cxl_capacity, cxl_Bps, 1, 0};
  return h;
}

}  // namespace

TEST_CASE("CXL expanders of a server are one tier striped over them") {
  auto topo = one_gpu_server(2);
  auto hw = sim::hardware_of(topo);
  REQUIRE(hw.worker_host.cxl);
  // Samsung CMM-D: 128 GB, 32 GB/s theoretical at 0.75 of it streamed; two of them.
  CHECK(hw.worker_host.cxl_devices == 2);
  CHECK(hw.worker_host.cxl->capacity_bytes == doctest::Approx(2 * 128e9));
  CHECK(hw.worker_host.cxl->achieved_Bps() == doctest::Approx(2 * 32e9 * 0.75));
  CHECK(hw.worker_host.cxl->latency_s == doctest::Approx(250e-9));
  // The DRAM stays the host's own.
  CHECK(hw.worker_host.dram.capacity_bytes == sim::hardware_of(one_gpu_server(0)).worker_host.dram.capacity_bytes);
  CHECK(!sim::hardware_of(one_gpu_server(0)).worker_host.cxl);
  // A GPU alone on its PCIe switch has its link to itself.
  const auto pcie = models::pcie_from_profile(models::find_profile("pcie-gen4-x16"));
  CHECK(hw.gpu_host_Bps == doctest::Approx(pcie.achieved_Bps_per_direction()));
}

TEST_CASE("state placement: dram-first, interleave and cxl-only against closed forms") {
  using sim::StatePlacementPolicy;
  // DRAM 100 GB at 100 GB/s, CXL 200 GB at 50 GB/s; the state X = 150 GB, the rest R = 20 GB.
  auto host = two_tier_host(100e9, 100e9, 200e9, 50e9);
  REQUIRE(host.cpu.optimizer_memory_Bps() == doctest::Approx(100e9));
  sim::StatePlacementSettings s;

  s.policy = StatePlacementPolicy::DramFirst;  // DRAM min(X, C_d - R) = 80 GB, CXL the other 70 GB
  auto first = sim::place_host_state(s, host, 150e9, 20e9);
  CHECK(first.problem == "");
  CHECK(first.dram_bytes == doctest::Approx(80e9));
  CHECK(first.cxl_bytes == doctest::Approx(70e9));
  CHECK(first.shares.cxl_share == doctest::Approx(70.0 / 150));
  CHECK(first.shares.dram_share == doctest::Approx(80.0 / 150));
  // All of it fits DRAM: nothing in CXL.
  CHECK(sim::place_host_state(s, host, 50e9, 20e9).cxl_bytes == 0);

  s.policy = StatePlacementPolicy::Interleave;  // X B_c / (B_d + B_c) = 150 x 50 / 150 = 50 GB in CXL
  auto inter = sim::place_host_state(s, host, 150e9, 20e9);
  CHECK(inter.cxl_bytes == doctest::Approx(50e9));
  CHECK(inter.dram_bytes == doctest::Approx(100e9));
  // 100 GB of state + 20 GB of the rest do not fit 100 GB of DRAM: a verdict, not an error.
  CHECK(inter.problem.find("does not fit: a worker server's DRAM") == 0);
  CHECK(sim::place_host_state(s, host, 60e9, 20e9).problem == "");

  s.policy = StatePlacementPolicy::CxlOnly;
  auto only = sim::place_host_state(s, host, 150e9, 20e9);
  CHECK(only.cxl_bytes == doctest::Approx(150e9));
  CHECK(only.shares.cxl_share == 1);
  CHECK(only.problem == "");
  CHECK(sim::place_host_state(s, host, 250e9, 20e9).problem.find("CXL memory") != std::string::npos);

  // Without CXL: cxl-only says what is missing, interleave keeps it all in DRAM, dram-first is the
  // DRAM verdict.
  auto no_cxl = two_tier_host(100e9, 100e9, 0, 0);
  CHECK(sim::place_host_state(s, no_cxl, 10e9, 0).problem.find("needs CXL memory") != std::string::npos);
  s.policy = StatePlacementPolicy::Interleave;
  CHECK(sim::place_host_state(s, no_cxl, 10e9, 0).cxl_bytes == 0);
  CHECK(sim::place_host_state(s, no_cxl, 10e9, 0).problem == "");
  s.policy = StatePlacementPolicy::DramFirst;
  CHECK(sim::place_host_state(s, no_cxl, 10e9, 20e9).problem == "");
  CHECK(sim::place_host_state(s, no_cxl, 90e9, 20e9).problem ==
        sim::does_not_fit("a worker server's DRAM", 110e9, 100e9));
}

TEST_CASE("ZeRO-Offload with its optimizer state in CXL: the CPU step streams the state at CXL's bandwidth") {
  // One GPU, one layer: backward's fp32 gradient down (4P), the CPU step, the fp16 parameters up (2P).
  // cxl-only: the state (12 B per parameter, read and written) crosses CXL, 24 P / B_cxl; the DRAM
  // keeps the gradient read and the 16-bit copy-out (and its read for ownership): 32 - 24 = 8 B.
  auto topo = one_gpu_server(1);
  auto hw = quiet_hardware(topo);
  const std::uint64_t params = 40'000'000;
  auto trace = synthetic_trace(1, params, 1e12);
  const double P = params;
  Path pcie = gpu_to_cpu(topo, 0);
  const double b_cxl = 32e9 * 0.75;
  const auto cost = deepspeed_adam_cost();
  REQUIRE(cost.state_bytes_per_param == 12);
  const auto t = models::cpu_optimizer_step_times(hw.worker_host, P, cost, {0, 1, 0});
  CHECK(t.cxl_s == doctest::Approx(24 * P / b_cxl));
  CHECK(t.dram_s == doctest::Approx(8 * P / hw.worker_host.cpu.optimizer_memory_Bps()));
  REQUIRE(t.total_s == t.cxl_s);

  auto dram = sim::simulate_system(trace, topo, hw, *make_system("zero-offload"), {});
  auto cxl = sim::simulate_system(trace, topo, hw, *make_system("zero-offload", {{"state_placement", "cxl-only"}}), {});
  REQUIRE(dram.feasible);
  REQUIRE(cxl.feasible);
  const double rest = compute_s(trace, hw) + pcie.time_s(4 * P) + pcie.time_s(2 * P);
  CHECK(dram.iteration_time_s == doctest::Approx(rest + cpu_optimizer_s(hw, P)).epsilon(1e-9));
  CHECK(cxl.iteration_time_s == doctest::Approx(rest + 24 * P / b_cxl).epsilon(1e-9));
  // dram-first with room in DRAM is the DRAM-only step.
  auto first = sim::simulate_system(trace, topo, hw, *make_system("zero-offload", {{"state_placement", "dram-first"}}), {});
  CHECK(first.iteration_time_s == dram.iteration_time_s);
}

TEST_CASE("a placement that does not fit is an infeasible result saying why") {
  auto topo = one_gpu_server(0);
  auto hw = quiet_hardware(topo);
  auto trace = synthetic_trace(1, 1'000'000, 1e12);
  auto r = sim::simulate_system(trace, topo, hw, *make_system("zero-offload", {{"state_placement", "cxl-only"}}), {});
  CHECK(!r.feasible);
  CHECK(r.reason.find("needs CXL memory") != std::string::npos);
  CHECK(system_settings_error("zero-offload", {{"state_placement", "cxl-first"}}).find("state placement") !=
        std::string::npos);
}

TEST_CASE("ZeRO-Infinity with offload dram places its optimizer state too, with nvme the setting is refused") {
  // The CPU step ends the iteration after backward, so moving the state to CXL changes the
  // iteration by exactly the step's difference: 24 P / B_cxl against the DRAM-only step.
  auto topo = one_gpu_server(1);
  auto hw = quiet_hardware(topo);
  const std::uint64_t params = 40'000'000;
  auto trace = synthetic_trace(2, params, 1e12);
  const double P = 2.0 * params;
  auto dram = sim::simulate_system(trace, topo, hw, *make_system("zero-infinity", {{"offload", "dram"}}), {});
  auto cxl = sim::simulate_system(
      trace, topo, hw, *make_system("zero-infinity", {{"offload", "dram"}, {"state_placement", "cxl-only"}}), {});
  REQUIRE(dram.feasible);
  REQUIRE(cxl.feasible);
  const auto in_dram = models::cpu_optimizer_step_times(hw.worker_host, P, deepspeed_offloaded_step_cost(), {1, 0, 0});
  const double dram_step = std::max(in_dram.dram_s, in_dram.compute_s);
  CHECK(cxl.iteration_time_s - dram.iteration_time_s ==
        doctest::Approx(24 * P / (32e9 * 0.75) - dram_step).epsilon(1e-6));
  CHECK(system_settings_error("zero-infinity", {{"state_placement", "interleave"}}).find("applies to offload") !=
        std::string::npos);
}
