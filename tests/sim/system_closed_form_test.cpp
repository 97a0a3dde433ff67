// DDP and ZeRO-3 schedules against closed forms derived here from the topology's links and the
// GPU model, on synthetic traces (so each case isolates compute, communication or overlap).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "models/optimizer_cost.hpp"
#include "sim/engine/collectives.hpp"
#include "sim/engine/op_timing.hpp"
#include "sim/experiment/simulate.hpp"
#include "sim/systems/param_fetch_plan.hpp"
#include "topologies/builders.hpp"
#include "topologies/routes.hpp"
#include "tests/sim/sim_test_support.hpp"
#include "workloads/model_catalog.hpp"

using namespace luwu;
using namespace sim_test;
using workloads::OpKind;

namespace {
// ZeRO-3 gathering whole layers (FSDP-style), the schedule of the ZeRO paper's closed forms.
const luwu::Json kPerLayer{{"param_fetch", "layer"}, {"gradient_passes", false}};
// These tests hold collectives, compute and the optimizer against their closed forms: ZeRO-3
// without DeepSpeed's own passes over the gradients, which stage3_gradient_passes_test.cpp checks.
const luwu::Json kNoGradientPasses{{"gradient_passes", false}};
// ZeRO-3's host thread starts with the GPU in its first module's hook (ParamFetchSettings::
// forward_hook_host_s); the later hooks hide behind these tests' long kernels.
double first_hook_s(const std::string& system) {
  return system == "zero3" ? sim::ParamFetchSettings{}.forward_hook_host_s : 0;
}
}  // namespace

TEST_CASE("compute only: one worker's iteration is the sum of its kernels plus the optimizer step") {
  auto topo = star(1);
  auto hw = quiet_hardware(topo);
  auto trace = synthetic_trace(6, 10'000'000, 3e12);
  for (const char* name : {"ddp", "zero3"}) {
    auto r = sim::simulate_system(trace, topo, hw, *make_system(name, std::string(name) == "zero3" ? kNoGradientPasses : luwu::Json::object()), {});
    double expected = first_hook_s(name) + compute_s(trace, hw) + gpu_optimizer_s(hw, 6 * 10e6);
    CHECK(r.iteration_time_s == doctest::Approx(expected).epsilon(1e-9).scale(0));
    CHECK(r.breakdown.host_launch_s == doctest::Approx(first_hook_s(name)).epsilon(1e-12));
    CHECK(r.sent_bytes_per_worker == 0);
  }
}

TEST_CASE("communication only: DDP all-reduces each bucket in turn, ZeRO-3 gathers twice and reduce-scatters") {
  const int n = 4;
  auto topo = star(n);
  auto hw = quiet_hardware(topo);
  sim_test::Path hop = gpu_to_gpu(topo, 0, 1);
  const std::uint64_t params = 50'000'000;  // 100 MB of fp16 gradient: one 25 MB-bucket per layer

  auto ddp_trace = synthetic_trace(3, params, 0);
  auto ddp = sim::simulate_system(ddp_trace, topo, hw, *make_system("ddp"), {});
  double ddp_expected = 3 * sim::ring_all_reduce_closed_form_s(n, 2.0 * params, hop.latency_s, hop.bandwidth_Bps) +
                        gpu_optimizer_s(hw, 3.0 * params);
  CHECK(ddp.iteration_time_s == doctest::Approx(ddp_expected).epsilon(1e-3).scale(0));

  auto z3_trace = synthetic_trace(1, params, 0);
  auto z3 = sim::simulate_system(z3_trace, topo, hw, *make_system("zero3", kPerLayer), {});
  double gather = sim::ring_all_gather_closed_form_s(n, 2.0 * params, hop.latency_s, hop.bandwidth_Bps);
  double z3_expected = 3 * gather + gpu_optimizer_s(hw, params / double(n));
  CHECK(z3.iteration_time_s == doctest::Approx(z3_expected).epsilon(1e-3).scale(0));
}

TEST_CASE("perfect overlap: only the first layer's gather and the last gradient collective are exposed") {
  const int n = 4;
  auto topo = star(n);
  auto hw = quiet_hardware(topo);
  sim_test::Path hop = gpu_to_gpu(topo, 0, 1);
  const std::uint64_t params = 20'000'000;  // 40 MB per layer: a few ms on the wire
  auto trace = synthetic_trace(8, params, 40e12);  // ~0.25 s of compute per op

  auto ddp = sim::simulate_system(trace, topo, hw, *make_system("ddp"), {});
  double ddp_expected = compute_s(trace, hw) +
                        sim::ring_all_reduce_closed_form_s(n, 2.0 * params, hop.latency_s, hop.bandwidth_Bps) +
                        gpu_optimizer_s(hw, 8.0 * params);
  CHECK(ddp.iteration_time_s == doctest::Approx(ddp_expected).epsilon(1e-3).scale(0));

  auto z3 = sim::simulate_system(trace, topo, hw, *make_system("zero3", kNoGradientPasses), {});
  double collective = sim::ring_all_gather_closed_form_s(n, 2.0 * params, hop.latency_s, hop.bandwidth_Bps);
  double z3_expected = collective + compute_s(trace, hw) + collective + gpu_optimizer_s(hw, 8.0 * params / n);
  CHECK(z3.iteration_time_s == doctest::Approx(z3_expected).epsilon(1e-3).scale(0));
  CHECK(z3.breakdown.exposed_communication_s == doctest::Approx(2 * collective).epsilon(1e-3).scale(0));
}

TEST_CASE("ZeRO-3 sends 1.5x the bytes per worker of DDP per step (ZeRO paper, section 7)") {
  auto topo = star(8);
  auto hw = quiet_hardware(topo);
  auto trace = synthetic_trace(4, 30'000'000, 1e12);
  auto ddp = sim::simulate_system(trace, topo, hw, *make_system("ddp"), {});
  // The paper's schedule: parameters gathered in forward and again in backward.
  auto z3 = sim::simulate_system(trace, topo, hw, *make_system("zero3", kPerLayer), {});
  // DDP: ring all-reduce sends 2 (N-1)/N x 2P bytes per worker.
  CHECK(ddp.sent_bytes_per_worker == doctest::Approx(2.0 * 7 / 8 * 2 * 4 * 30e6).epsilon(1e-9).scale(0));
  CHECK(z3.sent_bytes_per_worker / ddp.sent_bytes_per_worker == doctest::Approx(1.5).epsilon(1e-9).scale(0));
}

TEST_CASE("a collective kernel slows the compute it overlaps by the GPU's interference share") {
  const int n = 4;
  auto topo = star(n);
  auto hw = quiet_hardware(topo);
  hw.gpu.collective_interference = 0.2;
  auto quiet = quiet_hardware(topo);
  auto trace = synthetic_trace(8, 20'000'000, 40e12);
  auto noisy = sim::simulate_system(trace, topo, hw, *make_system("zero3", kPerLayer), {});
  auto calm = sim::simulate_system(trace, topo, quiet, *make_system("zero3", kPerLayer), {});
  // A collective of t seconds that runs entirely under compute leaves the compute (1 - share) t of
  // progress instead of t: the compute finishes share x t later.
  CHECK(noisy.breakdown.compute_s > calm.breakdown.compute_s);
  sim_test::Path hop = gpu_to_gpu(topo, 0, 1);
  double gather = sim::ring_all_gather_closed_form_s(n, 4e7, hop.latency_s, hop.bandwidth_Bps);
  // Hidden collectives: 15 gathers (all but the first) and 7 reduce-scatters (all but the last).
  double expected_extra = 22 * gather * 0.2;
  CHECK(noisy.breakdown.compute_s - calm.breakdown.compute_s == doctest::Approx(expected_extra).epsilon(0.01).scale(0));
}

TEST_CASE("the same scenario twice gives identical output") {
  auto topo = star(4);
  auto hw = sim::hardware_of(topo);
  auto trace = synthetic_trace(5, 25'000'000, 5e12);
  auto a = sim::simulate_system(trace, topo, hw, *make_system("zero3"), {});
  auto b = sim::simulate_system(trace, topo, hw, *make_system("zero3"), {});
  CHECK(sim::result_to_json(a).dump() == sim::result_to_json(b).dump());
}

TEST_CASE("one worker with interference on: every system runs, DDP and ZeRO-3 are compute plus the optimizer step") {
  // A collective over one rank moves nothing and takes no time, so its interference scope opens
  // and closes in one instant (this crashed SimGrid: issue "Nothing accepted crashes").
  // With one dedicated parameter-server machine, for the systems that use one.
  topologies::LuwuStarParams p;
  p.workers = 1;
  p.parameter_servers = 1;
  auto topo = topologies::build_luwu_star(p);
  auto hw = sim::hardware_of(topo);
  REQUIRE(hw.gpu.collective_interference > 0);
  auto trace = synthetic_trace(6, 10'000'000, 3e12);
  for (const auto& name : sim::system_names()) {
    CAPTURE(name);
    // ZeRO-Infinity keeps the 6 layers gathered for their backward, each holding one of its
    // parameter swapper's buffers: 6, where DeepSpeed's default of 5 would assert.
    const luwu::Json settings = name == "zero-infinity" ? luwu::Json{{"param_buffer_count", 6}} : luwu::Json::object();
    auto r = sim::simulate_system(trace, topo, hw, *make_system(name, settings), {});
    REQUIRE(r.feasible);
    CHECK(r.iteration_time_s > 0);
  }
  for (const char* name : {"ddp", "zero3"}) {
    auto r = sim::simulate_system(trace, topo, hw, *make_system(name, std::string(name) == "zero3" ? kNoGradientPasses : luwu::Json::object()), {});
    CHECK(r.iteration_time_s ==
          doctest::Approx(first_hook_s(name) + compute_s(trace, hw) + gpu_optimizer_s(hw, 6 * 10e6)).epsilon(1e-9).scale(0));
  }
}

TEST_CASE("an op's time is its kernels': GEMMs by shape, attention by the roofline, elementwise by HBM bandwidth") {
  const auto hw = quiet_hardware(star(1));
  const auto trace = workloads::generate_trace(*workloads::find_catalog_model("gpt3-125m"), [] {
    workloads::TrainingConfig t;
    t.micro_batch = 1;
    t.seq_len = 256;
    t.memory_efficient_attention = true;
    return t;
  }());
  const workloads::TraceOp block = trace.ops.at(1);  // forward of the first transformer block
  // GPT-3 125M: h = 768, 12 heads, FFN 3072; T = 256 tokens of 2 bytes (fp16).
  const double T = 256, h = 768, f = 3072, e = 2;
  const auto& g = hw.gpu;
  const double P = g.peak_fp16_flops, W = g.hbm_Bps * g.hbm_efficiency;
  // models/gpu.hpp: the measured ceiling or the HBM roofline, over the wave's busy SMs.
  auto gemm = [&](double m, double n, double k) {
    const double tiles = std::ceil(m / 128) * std::ceil(n / 128);
    const double waves = std::ceil(tiles / 108);
    return std::max(2 * m * n * k / (P * g.gemm_efficiency_max), e * (m * k + k * n + m * n) / W) /
           (tiles / (waves * 108));
  };
  // Fused attention moves Q, K, V and its output (4 T h elements) for 4 s^2 h FLOPs, no waves.
  const double attention_flops = 4 * 256.0 * 256.0 * h;
  const double attention = std::max(attention_flops / (P * g.gemm_efficiency_max), e * 4 * T * h / W);
  const double elementwise = e * (2 * T * h + 5 * T * h + 2 * T * f + 3 * T * h) / W;
  const double expected = gemm(T, 3 * h, h) + attention + gemm(T, h, h) + gemm(T, f, h) + gemm(T, h, f) + elementwise;
  CHECK(sim::op_time_s(trace, block, g) == doctest::Approx(expected).epsilon(1e-12));
  // The embedding's forward is a gather: 3 T h elements through HBM, no FLOPs.
  CHECK(sim::op_time_s(trace, trace.ops.front(), g) == doctest::Approx(e * 3 * T * h / W).epsilon(1e-12));
  // Every kernel of a 256-token micro-batch leaves SMs free on a 108-SM A100 (128 x 128 tiles):
  // qkv writes 256 x 2304 elements = 2 x 18 tiles = 36 of 108 SMs.
  const auto runs = sim::kernel_runs(trace, block, g);
  CHECK(runs.at(1).sm_share == doctest::Approx(36.0 / 108));
}

TEST_CASE("in-network collectives (SHARP): each rank sends its contribution to the switch and gets the result back") {
  const int n = 4;
  auto topo = star(n);
  auto hw = quiet_hardware(topo);
  sim_test::Path up = gpu_to_switch(topo, 0);
  const std::uint64_t params = 50'000'000;  // 100 MB of fp16 gradient per layer: one DDP bucket each
  auto trace = synthetic_trace(3, params, 0);
  const Json sharp{{"collective_algorithm", "in-network"}};
  // DDP: per bucket, 2P bytes up and 2P down at once (full duplex): one path time, not a ring's
  // 2 (N-1)/N; each rank sends 2P per bucket.
  auto ddp = sim::simulate_system(trace, topo, hw, *make_system("ddp", sharp), {});
  REQUIRE(ddp.feasible);
  CHECK(ddp.iteration_time_s ==
        doctest::Approx(3 * up.time_s(2.0 * params) + gpu_optimizer_s(hw, 3.0 * params)).epsilon(1e-3).scale(0));
  CHECK(ddp.sent_bytes_per_worker == doctest::Approx(3 * 2.0 * params).epsilon(1e-9).scale(0));
  // ZeRO-3 per layer (no recompute): 6 all-gathers of 2P (each sends 2P/N, receives 2P) and 3
  // reduce-scatters of 2P (each sends 2P, receives 2P/N).
  auto z3 = sim::simulate_system(trace, topo, hw, *make_system("zero3", {{"collective_algorithm", "in-network"},
                                                                         {"param_fetch", "layer"}}), {});
  REQUIRE(z3.feasible);
  const double b = 2.0 * params;
  CHECK(z3.sent_bytes_per_worker == doctest::Approx(6 * b / n + 3 * b).epsilon(1e-9).scale(0));
  CHECK(z3.received_bytes_per_worker == doctest::Approx(6 * b + 3 * b / n).epsilon(1e-9).scale(0));
  // Without a switch that reduces, the system does not run, and says why.
  auto no_switch = hw;
  no_switch.network_switch.reset();
  auto none = sim::simulate_system(trace, topo, no_switch, *make_system("ddp", sharp), {});
  CHECK_FALSE(none.feasible);
  CHECK(none.reason.find("in-network") != std::string::npos);
}

TEST_CASE("NCCL through host memory (GPUDirect RDMA off): every ring step runs at the host's staged rate") {
  // DDP, communication only, on a star of 4: each bucket's ring all-reduce takes 2 (N - 1) steps
  // of B / N; a step ends when its flow has crossed the route and the GPU's collective kernel has
  // moved it through the bounce buffer at the staged rate, max(a + s / b, s / staged).
  const int n = 4;
  auto topo = star(n);
  auto hw = quiet_hardware(topo);
  const double staged = 4e9;  // below the 100 Gb/s NIC's goodput
  hw.worker_host.nccl_host_staged_Bps = staged;
  sim_test::Path hop = gpu_to_gpu(topo, 0, 1);
  const std::uint64_t params = 50'000'000;
  auto trace = synthetic_trace(3, params, 0);
  const double step = 2.0 * params / n;
  const double expected = 3 * 2 * (n - 1) * std::max(hop.latency_s + step / hop.bandwidth_Bps, step / staged) +
                          gpu_optimizer_s(hw, 3.0 * params);
  auto off = sim::simulate_system(trace, topo, hw, *make_system("ddp", {{"gpu_direct_rdma", "off"}}), {});
  CHECK(off.iteration_time_s == doctest::Approx(expected).epsilon(1e-3).scale(0));
  // On this star each GPU shares a PCIe switch with its NIC: "auto" is GPUDirect, as "on" is.
  auto on = sim::simulate_system(trace, topo, hw, *make_system("ddp", {{"gpu_direct_rdma", "on"}}), {});
  auto automatic = sim::simulate_system(trace, topo, hw, *make_system("ddp"), {});
  const double direct = 3 * sim::ring_all_reduce_closed_form_s(n, 2.0 * params, hop.latency_s, hop.bandwidth_Bps) +
                        gpu_optimizer_s(hw, 3.0 * params);
  CHECK(on.iteration_time_s == doctest::Approx(direct).epsilon(1e-3).scale(0));
  CHECK(automatic.iteration_time_s == on.iteration_time_s);
  // "off" on a host whose profile gives no staged rate is refused with the reason.
  hw.worker_host.nccl_host_staged_Bps = 0;
  CHECK_THROWS_WITH_AS(sim::simulate_system(trace, topo, hw, *make_system("ddp", {{"gpu_direct_rdma", "off"}}), {}),
                       doctest::Contains("nccl_host_staged_bandwidth"), std::runtime_error);
}
