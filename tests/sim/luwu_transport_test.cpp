// LuWu's transport options against closed forms.
// - The ablation "push/pull issued by a GPU kernel" (push_pull: gpu-kernel): a gradient pushed by a
//   kernel while a GEMM runs moves at (1 - drop) x the NIC's goodput, the GPU model's bandwidth
//   drop (sim/engine/gpu_device.hpp); pushed by the SmartNIC's DMA it is not slowed; a kernel pull
//   posted while a GEMM fills the SMs waits for a kernel boundary.
// - The reliable transport (reliability: per-packet-ack): the workers' ACK frames cut the node's
//   parameter sends to the share models/reliable_transport.hpp leaves.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/experiment/simulate.hpp"
#include "tests/sim/sim_test_support.hpp"

using namespace luwu;
using namespace sim_test;

namespace {

constexpr double kDrop = 0.3;
constexpr std::uint64_t kParams = 50'000'000;

struct Run {
  sim::SystemResult result;
  std::vector<double> pushes;  // gpu0's gradient pushes, in backward order
};

// Two workers, four layers; every op a GEMM long enough (1e14 FLOP) to hide a push.
Run run_luwu(const std::string& push_pull, double sm_share = 0) {
  auto topo = star(2);
  auto hw = quiet_hardware(topo);
  hw.gpu.collective_bandwidth_drop = kDrop;
  hw.gpu.collective_sm_share = sm_share;
  auto trace = synthetic_trace(4, kParams, 1e14);
  sim::SimulationOptions options;
  options.record_timeline = true;
  auto r = sim::simulate_system(trace, topo, hw, *make_system("luwu", {{"push_pull", push_pull}}), options);
  REQUIRE(r.feasible);
  const std::string track = push_pull == "gpu-kernel" ? "gradient to switch (gpu kernel)" : "gradient to switch (smartnic dma)";
  return {r, span_durations(r.timeline, "gpu0", track)};
}

}  // namespace

TEST_CASE("luwu push_pull gpu-kernel: a push beside a GEMM moves at (1 - drop) x the NIC's goodput") {
  auto topo = star(2);
  const auto hw = sim::hardware_of(topo);
  auto kernel = run_luwu("gpu-kernel");
  REQUIRE(kernel.pushes.size() == 4);
  // A layer's gradient crosses as LuWu's 2 B integers per 2 B element: 2 x params bytes.  The first
  // three pushes run while the next layer's backward GEMM runs: the kernel's pace, (1 - drop) x
  // goodput, binds, since it is below the aggregation's rate.
  const double paced_s = 2.0 * kParams / ((1 - kDrop) * hw.worker_nic.goodput_Bps());
  for (int i = 0; i < 3; ++i) CHECK(kernel.pushes[i] == doctest::Approx(paced_s).epsilon(1e-6));
  // The last push runs after the last kernel, at the aggregation's own rate: faster.
  CHECK(kernel.pushes[3] < paced_s * (1 - 1e-3));

  // Pushed by the SmartNIC's DMA, a gradient is not slowed by the GEMM: every push takes as long
  // as the last one, which has no GEMM beside it.
  auto dma = run_luwu("smartnic-dma");
  REQUIRE(dma.pushes.size() == 4);
  for (int i = 0; i < 3; ++i) CHECK(dma.pushes[i] == doctest::Approx(dma.pushes[3]).epsilon(1e-9));
  CHECK(dma.pushes[3] == doctest::Approx(kernel.pushes[3]).epsilon(1e-9));
}

TEST_CASE("luwu push_pull gpu-kernel: a pull posted while a GEMM fills the SMs waits for the kernel boundary") {
  // 10% of the SMs for a collective kernel; the synthetic GEMM fills them all.
  auto kernel = run_luwu("gpu-kernel", 0.1);
  auto dma = run_luwu("smartnic-dma", 0.1);
  CHECK(kernel.result.contention.collective_launch_wait_s > 0);
  CHECK(dma.result.contention.collective_launch_wait_s == 0);
}

TEST_CASE("luwu push_pull: a bad value is an error at its JSON path") {
  try {
    make_system("luwu", {{"push_pull", "nccl"}});
    FAIL("expected an error");
  } catch (const std::exception& e) {
    const std::string what = e.what();
    CHECK(what.find("$.systems[0].push_pull") != std::string::npos);
    CHECK(what.find("gpu-kernel") != std::string::npos);
  }
}

TEST_CASE("luwu reliability per-packet-ack: the node's parameter sends in forward run at the share the ACKs leave") {
  auto topo = star(4);
  auto hw = quiet_hardware(topo);
  REQUIRE(hw.optimizer_smartnic);
  // A node NIC that handles 10 M frames/s: 4 workers ACK each 4096 B frame of a stream at the
  // NIC's goodput x0, 4 x0 / 4096 = 12.0 M/s, so the share is 10e6 / (4 x0 / 4096) = 0.84.
  hw.optimizer_smartnic->packets_per_s = 10e6;
  const auto& nic = hw.optimizer_smartnic->nic;
  const double x0 = nic.goodput_Bps();
  const double share = 10e6 / (4 * x0 / nic.mtu_bytes);
  REQUIRE(share < 1);
  auto trace = synthetic_trace(4, kParams, 1e9);
  sim::SimulationOptions options;
  options.record_timeline = true;
  auto r = sim::simulate_system(trace, topo, hw, *make_system("luwu", {{"reliability", "per-packet-ack"}}), options);
  REQUIRE(r.feasible);
  const auto sends = span_durations(r.timeline, "optnode", "parameter send");
  REQUIRE(sends.size() == 8);
  // Forward: each layer's 2 x params bytes in 16 pieces at share x x0, each piece paying the route's latency.
  const auto node = path(topo, topo.vertex("optnode"), topo.vertex("switch"));
  for (int k = 0; k < 4; ++k) CHECK(sends[k] == doctest::Approx(2.0 * kParams / (share * x0) + 16 * node.latency_s).epsilon(1e-6));
  // With heartbeats (the default) the same sends lose only 84 B per 10 us of the line.
  auto hb = sim::simulate_system(trace, topo, hw, *make_system("luwu"), {});
  CHECK(hb.iteration_time_s < r.iteration_time_s);
}

TEST_CASE("luwu reliability settings: names and durations are checked at their JSON paths") {
  auto fails_at = [](Json settings, const std::string& path) {
    try {
      make_system("luwu", settings);
      FAIL("expected an error");
    } catch (const std::exception& e) {
      CHECK_MESSAGE(std::string(e.what()).find(path) != std::string::npos, e.what());
    }
  };
  fails_at({{"reliability", "acks"}}, "$.systems[0].reliability");
  fails_at({{"heartbeat_interval", "10 parsecs"}}, "$.systems[0].heartbeat_interval");
  fails_at({{"heartbeat_interval", 30}}, "$.systems[0].heartbeat_interval");
  CHECK_NOTHROW(make_system("luwu", {{"reliability", "heartbeats"}, {"heartbeat_interval", "50us"}}));
}
