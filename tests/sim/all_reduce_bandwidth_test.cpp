// The all-reduce microbenchmark (sim/experiment/all_reduce_bandwidth.hpp) against closed forms:
// beside a GEMM, NCCL's algorithm bandwidth is (1 - drop) of its bandwidth alone (the GPU model's
// bandwidth drop, the paper's 30% on A100) while LuWu's push/pull by SmartNIC DMA keeps all of
// it; push/pull's time is its pieces' pipeline through the switch.
#include <doctest/doctest.h>

#include "sim/experiment/all_reduce_bandwidth.hpp"
#include "tests/sim/sim_test_support.hpp"

using namespace luwu;
using namespace sim_test;

namespace {

constexpr double kDrop = 0.3;
constexpr double kBuffer = 1e9;

sim::Hardware hardware(const topologies::Topology& topo) {
  auto hw = quiet_hardware(topo);
  hw.gpu.collective_bandwidth_drop = kDrop;
  return hw;
}

sim::AllReduceBandwidth measure(int workers, sim::AllReduceMechanism m, bool gemm) {
  auto topo = star(workers);
  auto p = sim::measure_all_reduce_bandwidth(topo, hardware(topo), workloads::TrainingConfig{}, m, kBuffer, gemm);
  REQUIRE(p.problem.empty());
  return p;
}

}  // namespace

TEST_CASE("all-reduce bandwidth: beside a GEMM NCCL keeps (1 - drop) of its bandwidth, push/pull all of it") {
  for (int workers : {2, 4, 8}) {
    CAPTURE(workers);
    const auto alone = measure(workers, sim::AllReduceMechanism::NcclKernels, false);
    const auto gemm = measure(workers, sim::AllReduceMechanism::NcclKernels, true);
    // A 1 GB ring: latency is under 1e-4 of the time, so the ratio is the drop's to that precision.
    CHECK(gemm.algbw_Bps / alone.algbw_Bps == doctest::Approx(1 - kDrop).epsilon(1e-3));
    const auto push_alone = measure(workers, sim::AllReduceMechanism::PushPullDma, false);
    const auto push_gemm = measure(workers, sim::AllReduceMechanism::PushPullDma, true);
    CHECK(push_gemm.time_s == push_alone.time_s);
  }
}

TEST_CASE("all-reduce bandwidth: a ring all-reduce alone takes 2 (N - 1) steps of B / N at the NIC's goodput") {
  auto topo = star(4);
  const auto hw = hardware(topo);
  const auto p = measure(4, sim::AllReduceMechanism::NcclKernels, false);
  const double step_s = gpu_to_gpu(topo, 0, 1).time_s(kBuffer / 4, hw.worker_nic.goodput_Bps());
  CHECK(p.time_s == doctest::Approx(6 * step_s).epsilon(1e-6));
  CHECK(p.algbw_Bps == doctest::Approx(kBuffer / p.time_s));
}

TEST_CASE("all-reduce bandwidth: push/pull is the pieces' pipeline, (P + 1) pieces' time at the aggregation rate") {
  auto topo = star(4);
  const auto hw = hardware(topo);
  const auto p = measure(4, sim::AllReduceMechanism::PushPullDma, false);
  // 2 B elements go as LuWu's 16-bit integers (the paper's requirement table: 6.25e9 gradients/s
  // at 100 Gb/s): 1 GB on the wire, in P = 16 pieces.  Each worker sends its
  // pieces back to back, each paying the route's latency; the switch multicasts piece c once every
  // worker's copy is in, at the same rate: the last piece is back after P + 1 piece times.
  const double latency_s = gpu_to_switch(topo, 0).latency_s;
  const double payload = hw.network_switch->payload_bytes();
  const double rate_Bps =
      hw.network_switch->aggregation_throughput_Bps(2 * latency_s, hw.worker_nic.goodput_Bps(payload), 4);
  const double piece_s = latency_s + kBuffer / 16 / rate_Bps;
  CHECK(p.time_s == doctest::Approx(17 * piece_s).epsilon(1e-6));
}

TEST_CASE("all-reduce bandwidth: push/pull needs a programmable switch, and says so") {
  auto topo = star(2);
  auto hw = hardware(topo);
  hw.network_switch.reset();  // a switch that only forwards
  auto p = sim::measure_all_reduce_bandwidth(topo, hw, workloads::TrainingConfig{}, sim::AllReduceMechanism::PushPullDma,
                                             kBuffer, false);
  CHECK(p.problem.find("programmable switch") != std::string::npos);
}

TEST_CASE("all-reduce bandwidth: NCCL through host memory moves each ring step at the host's staged rate") {
  // The paper's testbed: GPUDirect RDMA off, NCCL's kernels at the host's 6 GB/s (below the NIC's
  // goodput), so each of the 2 (N - 1) steps of B / N takes B / N / 6 GB/s; beside a GEMM the drop
  // takes its share of that.
  auto topo = star(4);
  auto hw = hardware(topo);
  hw.worker_host.nccl_host_staged_Bps = 6e9;
  REQUIRE(hw.worker_nic.goodput_Bps() > 6e9);
  auto run = [&](bool gemm) {
    auto p = sim::measure_all_reduce_bandwidth(topo, hw, workloads::TrainingConfig{}, sim::AllReduceMechanism::NcclKernels,
                                               kBuffer, gemm, sim::GpuDirectRdma::Off);
    REQUIRE(p.problem.empty());
    return p;
  };
  const auto alone = run(false), gemm = run(true);
  CHECK(alone.time_s == doctest::Approx(6 * (kBuffer / 4) / 6e9).epsilon(1e-6));
  CHECK(gemm.algbw_Bps / alone.algbw_Bps == doctest::Approx(1 - kDrop).epsilon(1e-3));
  // Auto on the star (each NIC on its GPU's PCIe switch) is GPUDirect: the NIC's goodput.
  const auto direct = sim::measure_all_reduce_bandwidth(topo, hw, workloads::TrainingConfig{},
                                                        sim::AllReduceMechanism::NcclKernels, kBuffer, false);
  CHECK(direct.time_s < alone.time_s / 1.5);
}
