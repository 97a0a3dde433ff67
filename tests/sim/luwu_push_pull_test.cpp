// LuWu's ablation "push/pull issued by a GPU kernel" (push_pull: gpu-kernel) against closed forms:
// a gradient pushed by a kernel while a GEMM runs moves at (1 - drop) x the NIC's goodput, the
// GPU model's bandwidth drop (sim/engine/gpu_device.hpp); pushed by the SmartNIC's DMA it is not
// slowed; a kernel pull posted while a GEMM fills the SMs waits for a kernel boundary.
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

// Durations (s) of the spans on one track of gpu0's timeline, in order.
std::vector<double> gpu0_spans(const Json& trace, const std::string& track) {
  int pid = -1, tid = -1;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "gpu0") pid = e["pid"];
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == pid && e["args"]["name"] == track) tid = e["tid"];
  std::vector<double> out;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == pid && e["tid"] == tid) out.push_back(e["dur"].get<double>() * 1e-6);
  return out;
}

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
  return {r, gpu0_spans(r.timeline, track)};
}

}  // namespace

TEST_CASE("luwu push_pull gpu-kernel: a push beside a GEMM moves at (1 - drop) x the NIC's goodput") {
  auto topo = star(2);
  const auto hw = sim::hardware_of(topo);
  auto kernel = run_luwu("gpu-kernel");
  REQUIRE(kernel.pushes.size() == 4);
  // A layer's gradient crosses as 4 B integers per 2 B element: 4 x params bytes.  The first three
  // pushes run while the next layer's backward GEMM runs: the kernel's pace, (1 - drop) x goodput,
  // binds, since it is below the aggregation's rate.
  const double paced_s = 4.0 * kParams / ((1 - kDrop) * hw.worker_nic.goodput_Bps());
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
