// The GPU at kernel granularity (sim/engine/gpu_device.hpp) on a two-kernel toy against
// hand-derived timelines: a collective launched while a GEMM fills every SM starts at the next
// kernel boundary; beside a GEMM its bandwidth drops by the profile's share; MPS and preemption
// let it start at once; compute beside it is slowed by the interference share.
//
// The toy: two GPUs on a star (link bandwidth B = 10 GB/s, 1 us per hop), each running GEMM K1
// (1 s) then GEMM K2 (5 s), both filling the GPU; an all-gather of S = 2 GB (one ring step of
// S/2 = 1 GB per rank) becomes ready at t = 0.5 s, while K1 runs.  The GPU: 10% of the SMs for a
// collective, a 30% bandwidth drop beside a GEMM, so the collective moves at most
// 0.7 x B = 7 GB/s while a GEMM runs.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "sim/engine/collectives.hpp"
#include "sim/engine/engine_config.hpp"
#include "sim/engine/gpu_device.hpp"
#include "sim/engine/stream.hpp"
#include "sim/experiment/isolated_run.hpp"

namespace sg = simgrid::s4u;
using namespace luwu::sim;

namespace {

constexpr double kB = 10e9, kLatency = 2e-6, kS = 2e9, kReady = 0.5, kK1 = 1.0, kK2 = 5.0;

struct Toy {
  double drop = 0.3;
  double interference = 0;
  SmSharing sharing = SmSharing::NonPreemptive;
  double ready_s = kReady;  // when the collective's dependency completes
};

struct Timeline2 {
  double collective_start = 0, collective_end = 0, compute_end = 0, launch_wait = 0;
};

// Rank 0's collective start and end, its compute end and launch wait.
Timeline2 run_toy(const Toy& toy) {
  auto result = run_isolated([=]() -> std::string {
    auto engine = make_engine();
    auto* zone = sg::create_star_zone("star");
    std::vector<sg::Host*> hosts;
    for (int i = 0; i < 2; ++i) {
      auto* h = zone->create_host("gpu" + std::to_string(i), 1e12);
      auto* l = zone->create_split_duplex_link("link" + std::to_string(i), kB)->set_latency(kLatency / 2);
      zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, {{l, sg::LinkInRoute::Direction::UP}}, true);
      hosts.push_back(h);
    }
    luwu::models::GpuSpec spec;
    spec.hbm_Bps = 1e13;
    spec.sm_count = 108;
    spec.collective_sm_share = 0.1;
    spec.collective_bandwidth_drop = toy.drop;
    spec.collective_interference = toy.interference;
    auto* timeline = new Timeline(false);
    auto* meter = new TrafficMeter();
    std::vector<GpuDevice*> gpus;
    CommGroup group{"world", hosts, {}};
    for (int i = 0; i < 2; ++i) {
      gpus.push_back(new GpuDevice(i, hosts[i], spec, timeline, toy.sharing, kB));
      group.engines.push_back(gpus.back()->collective_engine());
    }
    zone->seal();  // after the GPUs: their collective engines are a zone inside this root
    auto* out = new Timeline2;
    for (int i = 0; i < 2; ++i) {
      sg::Actor::create("rank" + std::to_string(i), hosts[i], [=] {
        GpuDevice& gpu = *gpus[i];
        auto* stream = new Stream(gpu.name(), "collectives", "communication", gpu.host(), timeline);
        auto ready = make_completion();
        sg::Actor::create("dependency", hosts[i], [ready, toy] {
          sg::this_actor::sleep_for(toy.ready_s);
          ready->set();
        });
        const auto issued = gpu.kernels_launched();
        stream->enqueue("all-gather", [=, &gpu] {
          gpu.await_collective_launch(issued);
          GpuDevice::LoadScope kernel(gpu, GpuDevice::LoadKind::CollectiveKernel);
          if (i == 0) out->collective_start = sg::Engine::get_clock();
          ring_all_gather(group, i, kS, CollectiveContext{CollectiveMode::Detailed, meter});
          if (i == 0) out->collective_end = sg::Engine::get_clock();
        }, {ready});
        static const luwu::workloads::Kernel gemm{.name = "gemm", .kind = luwu::workloads::KernelKind::Gemm, .flops = 1};
        const std::vector<KernelRun> kernels{KernelRun{&gemm, kK1, 1.0, true}, KernelRun{&gemm, kK2, 1.0, true}};
        gpu.run_kernels("op", kernels);
        if (i == 0) {
          out->compute_end = sg::Engine::get_clock();
          out->launch_wait = gpu.times().collective_launch_wait_s;
        }
      });
    }
    engine->run();
    char text[128];
    std::snprintf(text, sizeof text, "%.17g %.17g %.17g %.17g", out->collective_start, out->collective_end,
                  out->compute_end, out->launch_wait);
    return text;
  });
  CAPTURE(result.output);
  REQUIRE(result.ok);
  Timeline2 t;
  REQUIRE(std::sscanf(result.output.c_str(), "%lf %lf %lf %lf", &t.collective_start, &t.collective_end,
                      &t.compute_end, &t.launch_wait) == 4);
  return t;
}

// One ring step of S/2 bytes: the flow (latency + S/2 / B) and the paced kernel (S/2 / rate) at once.
double step_s(double rate_Bps) { return std::max(kLatency + kS / 2 / kB, kS / 2 / rate_Bps); }

}  // namespace

TEST_CASE("non-preemptive: a collective ready while a GEMM fills the GPU launches at the kernel boundary") {
  const auto t = run_toy({});
  CHECK(t.collective_start == doctest::Approx(kK1).epsilon(1e-9));
  CHECK(t.launch_wait == doctest::Approx(kK1 - kReady).epsilon(1e-9));
  // Beside K2 (a GEMM) it moves at 0.7 x B: 1 GB / 7 GB/s.
  CHECK(t.collective_end == doctest::Approx(kK1 + step_s(0.7 * kB)).epsilon(1e-9));
  CHECK(t.compute_end == doctest::Approx(kK1 + kK2).epsilon(1e-12));  // no interference share
}

TEST_CASE("without the bandwidth drop the same collective runs at the link's rate") {
  const auto t = run_toy({.drop = 0});
  CHECK(t.collective_start == doctest::Approx(kK1).epsilon(1e-9));
  CHECK(t.collective_end == doctest::Approx(kK1 + kLatency + kS / 2 / kB).epsilon(1e-9));
}

TEST_CASE("MPS and preemption let the collective start as soon as it is ready") {
  for (SmSharing sharing : {SmSharing::Mps, SmSharing::Preemptive}) {
    const auto t = run_toy({.sharing = sharing});
    CHECK(t.collective_start == doctest::Approx(kReady).epsilon(1e-9));
    CHECK(t.launch_wait == 0);
    CHECK(t.collective_end == doctest::Approx(kReady + step_s(0.7 * kB)).epsilon(1e-9));
    // MPS keeps 10% of the SMs for collectives all the time: the kernels run on 90%.
    const double compute = sharing == SmSharing::Mps ? (kK1 + kK2) / 0.9 : kK1 + kK2;
    CHECK(t.compute_end == doctest::Approx(compute).epsilon(1e-9));
  }
}

TEST_CASE("a collective issued before the kernel, and ready, takes its SMs first") {
  const auto t = run_toy({.ready_s = 0});
  CHECK(t.collective_start == 0);
  CHECK(t.collective_end == doctest::Approx(step_s(0.7 * kB)).epsilon(1e-9));
}

TEST_CASE("the kernel beside a running collective is slowed by the interference share") {
  // K2 runs at 0.8 of its speed while the collective runs (1 GB / 7 GB/s), so it loses 0.2 of that time.
  const auto t = run_toy({.interference = 0.2});
  const double beside = step_s(0.7 * kB);
  CHECK(t.collective_end == doctest::Approx(kK1 + beside).epsilon(1e-9));
  CHECK(t.compute_end == doctest::Approx(kK1 + kK2 + 0.2 * beside).epsilon(1e-9));
}
