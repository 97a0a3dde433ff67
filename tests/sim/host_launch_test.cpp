// The host thread that launches a GPU's kernels (sim/engine/gpu_device.hpp) against hand-derived
// timelines: it spends L per launch and runs ahead of the GPU, so a kernel starts at
// max(GPU free, host done launching it); a hook's host time is hidden while the host is ahead; a
// wait of the host itself (host_wait) brings it back to the GPU's time, a stream's wait does not.
#include <doctest/doctest.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "sim/engine/completion.hpp"
#include "sim/engine/engine_config.hpp"
#include "sim/engine/gpu_device.hpp"
#include "sim/experiment/isolated_run.hpp"

namespace sg = simgrid::s4u;
using namespace luwu::sim;

namespace {

struct Outcome {
  double end_s = 0, compute_s = 0, host_wait_s = 0, communication_wait_s = 0;
};

// One GPU whose rank runs `body` (given its device and a completion set at `ready_s`).
Outcome run_rank(double launch_s, double ready_s, const std::function<void(GpuDevice&, const CompletionPtr&)>& body) {
  auto result = run_isolated([=]() -> std::string {
    auto engine = make_engine();
    auto* zone = sg::create_star_zone("star");
    auto* host = zone->create_host("gpu0", 1e12);
    luwu::models::GpuSpec spec;
    spec.hbm_Bps = 1e13;
    spec.sm_count = 108;
    auto* timeline = new Timeline(false);
    auto* gpu = new GpuDevice(0, host, spec, timeline);
    gpu->set_kernel_launch_host_time(launch_s);
    zone->seal();
    auto* out = new Outcome;
    sg::Actor::create("rank0", host, [=] {
      auto ready = make_completion();
      sg::Actor::create("dependency", host, [ready, ready_s] {
        sg::this_actor::sleep_for(ready_s);
        ready->set();
      });
      body(*gpu, ready);
      out->end_s = sg::Engine::get_clock();
    });
    engine->run();
    const RankTimes& t = gpu->times();
    char text[160];
    std::snprintf(text, sizeof text, "%.17g %.17g %.17g %.17g", out->end_s, t.compute_s, t.host_launch_wait_s,
                  t.communication_wait_s);
    return text;
  });
  CAPTURE(result.output);
  REQUIRE(result.ok);
  Outcome o;
  REQUIRE(std::sscanf(result.output.c_str(), "%lf %lf %lf %lf", &o.end_s, &o.compute_s, &o.host_wait_s,
                      &o.communication_wait_s) == 4);
  return o;
}

const luwu::workloads::Kernel kAdd{.name = "add", .kind = luwu::workloads::KernelKind::Elementwise};

void kernels(GpuDevice& gpu, int n, double seconds) {
  const std::vector<KernelRun> runs(static_cast<std::size_t>(n), KernelRun{&kAdd, seconds, 1.0, false});
  gpu.run_kernels("op", runs);
}

}  // namespace

TEST_CASE("kernels shorter than a launch: the GPU runs at the host's launch rate") {
  // 10 kernels of 1 ms, 3 ms per launch: kernel k starts at 3(k + 1) ms, the last ends at 31 ms.
  const auto o = run_rank(3e-3, 0, [](GpuDevice& gpu, const CompletionPtr&) { kernels(gpu, 10, 1e-3); });
  CHECK(o.end_s == doctest::Approx(31e-3).epsilon(1e-12));
  CHECK(o.compute_s == doctest::Approx(10e-3).epsilon(1e-12));
  CHECK(o.host_wait_s == doctest::Approx(21e-3).epsilon(1e-12));
}

TEST_CASE("kernels longer than a launch: only the first launch shows") {
  // 10 kernels of 3 ms, 1 ms per launch: the host stays ahead after the first, L + 10 x 3 ms.
  const auto o = run_rank(1e-3, 0, [](GpuDevice& gpu, const CompletionPtr&) { kernels(gpu, 10, 3e-3); });
  CHECK(o.end_s == doctest::Approx(31e-3).epsilon(1e-12));
  CHECK(o.host_wait_s == doctest::Approx(1e-3).epsilon(1e-12));
}

TEST_CASE("no launch time: the model before the host clock, bit for bit") {
  const auto o = run_rank(0, 0, [](GpuDevice& gpu, const CompletionPtr&) { kernels(gpu, 10, 1e-3); });
  CHECK(o.end_s == doctest::Approx(10e-3).epsilon(1e-12));
  CHECK(o.host_wait_s == 0);
}

TEST_CASE("a hook's host time hides behind the kernels the host launched before it") {
  // L = 1 ms.  Kernel 1 (10 ms) runs 1..11 ms; the host, done launching at 1 ms, spends 5 ms in a
  // hook (until 6 ms) and launches kernel 2 at 7 ms, before the GPU is free: 11..12 ms.
  const auto o = run_rank(1e-3, 0, [](GpuDevice& gpu, const CompletionPtr&) {
    kernels(gpu, 1, 10e-3);
    gpu.host_work(5e-3, "hook");
    kernels(gpu, 1, 1e-3);
  });
  CHECK(o.end_s == doctest::Approx(12e-3).epsilon(1e-12));
  CHECK(o.host_wait_s == doctest::Approx(1e-3).epsilon(1e-12));
}

// Kernel 1 (10 ms, launched at 1 ms), then a wait for a completion set at 20 ms, a 5 ms hook and
// kernel 2 (1 ms); `host_blocks`: the host thread itself waits, or only the compute stream.
static Outcome after_a_wait(bool host_blocks) {
  return run_rank(1e-3, 20e-3, [host_blocks](GpuDevice& gpu, const CompletionPtr& ready) {
    kernels(gpu, 1, 10e-3);
    if (host_blocks) gpu.host_wait(ready, WaitCause::Communication, "a synchronous copy");
    else gpu.wait(ready, WaitCause::Communication, "an event on another stream");
    gpu.host_work(5e-3, "hook");
    kernels(gpu, 1, 1e-3);
  });
}

TEST_CASE("after the host itself waited, its hook and the next launch are exposed") {
  // Kernel 1 runs 1..11 ms; the host blocks until 20 ms (the stream waits 9 ms), spends 5 ms in
  // the hook and 1 ms launching: kernel 2 runs 26..27 ms.  Host waits: 1 ms + 6 ms.
  const auto o = after_a_wait(true);
  CHECK(o.end_s == doctest::Approx(27e-3).epsilon(1e-12));
  CHECK(o.communication_wait_s == doctest::Approx(9e-3).epsilon(1e-12));
  CHECK(o.host_wait_s == doctest::Approx(7e-3).epsilon(1e-12));
}

TEST_CASE("a stream's wait leaves the host ahead: the hook and the launch hide behind it") {
  // Only the stream waits: the host launched kernel 2 at 7 ms, it runs 20..21 ms.
  const auto o = after_a_wait(false);
  CHECK(o.end_s == doctest::Approx(21e-3).epsilon(1e-12));
  CHECK(o.host_wait_s == doctest::Approx(1e-3).epsilon(1e-12));
}
