// LuWu with SmartNIC kinds and the optimizer node's thread organisation: the gradient push of a
// BlueField-2 worker runs at the SoC limit derived by hand; layer-centric pipelining is slower than
// step-centric; the setting is parsed strictly.
#include <doctest/doctest.h>

#include <string>

#include "sim/experiment/simulate.hpp"
#include "tests/sim/sim_test_support.hpp"
#include "topologies/builders.hpp"

using namespace luwu;
using namespace sim_test;

namespace {

topologies::Topology bluefield_cluster(int workers) {
  topologies::LuwuStarParams p;
  p.workers = workers;
  p.nic_profile = "bluefield2-200g";
  p.switch_profile = "tofino2";
  return topologies::build_luwu_star(p);
}

}  // namespace

TEST_CASE("luwu on BlueField-2 at 200 Gb/s: each gradient push runs at the Arm-memory bound") {
  auto topo = bluefield_cluster(2);
  auto hw = quiet_hardware(topo);
  const std::uint64_t params = 50'000'000;
  auto trace = synthetic_trace(4, params, 1e9);
  sim::SimulationOptions options;
  options.record_timeline = true;
  auto r = sim::simulate_system(trace, topo, hw, *make_system("luwu"), options);
  REQUIRE(r.feasible);
  // By hand from the datasheet numbers: one DDR4-3200 channel (25.6 GB/s) at 0.75 efficiency,
  // crossed twice by each of push and pull: 25.6e9 x 0.75 / 4 = 4.8e9 B/s each (19.2% of 200 Gb/s).
  const double rate_Bps = 25.6e9 * 0.75 / 4;
  // A layer's gradient crosses as LuWu's 2 B integers per 2 B gradient: 2 x params bytes, in 16
  // pieces, each paying the route's latency once.
  const double wire_bytes = 2.0 * params;
  const double latency_s = gpu_to_switch(topo, 0).latency_s;
  const auto pushes = span_durations(r.timeline, "gpu0", "gradient to switch (smartnic dma)");
  REQUIRE(pushes.size() == 4);
  for (double d : pushes) {
    CHECK(d >= wire_bytes / rate_Bps);
    CHECK(d == doctest::Approx(wire_bytes / rate_Bps + 16 * latency_s).epsilon(1e-6));
  }
  // The optimizer node's BlueField-2 sends each layer's fp16 parameters (2 x params bytes, 16
  // pieces) alone in forward: Arm DRAM crossed twice by one stream, 25.6e9 x 0.75 / 2 = 9.6e9 B/s;
  // in backward while the aggregated gradients come in, at the 4.8e9 B/s of both streams.
  const auto node = path(topo, topo.vertex("optnode"), topo.vertex("switch"));
  const auto sends = span_durations(r.timeline, "optnode", "parameter send");
  REQUIRE(sends.size() == 8);
  for (int k = 0; k < 4; ++k)
    CHECK(sends[k] == doctest::Approx(2.0 * params / (25.6e9 * 0.75 / 2) + 16 * node.latency_s).epsilon(1e-6));
  for (int k = 4; k < 8; ++k) CHECK(sends[k] >= 2.0 * params / rate_Bps);
}

TEST_CASE("luwu on the FPGA SmartNIC: the SmartNIC model caps nothing, so the iteration is the plain links'") {
  topologies::LuwuStarParams p;
  p.workers = 2;
  auto topo = topologies::build_luwu_star(p);  // alveo-u50 workers and node
  auto hw = quiet_hardware(topo);
  REQUIRE(hw.worker_smartnic);
  REQUIRE(hw.optimizer_smartnic);
  auto plain = hw;
  plain.worker_smartnic.reset();
  plain.optimizer_smartnic.reset();
  auto trace = synthetic_trace(4, 50'000'000, 1e9);
  auto with_model = sim::simulate_system(trace, topo, hw, *make_system("luwu"), {});
  auto without = sim::simulate_system(trace, topo, plain, *make_system("luwu"), {});
  CHECK(with_model.iteration_time_s == without.iteration_time_s);
}

TEST_CASE("luwu: layer-centric node pipelining is slower than step-centric on the Xeon 5320 node") {
  topologies::LuwuStarParams p;
  p.workers = 2;
  p.optimizer_host_profile = "xeon-gold-5320-node";
  auto topo = topologies::build_luwu_star(p);
  auto hw = quiet_hardware(topo);
  REQUIRE(hw.optimizer_node->thread_rates);
  auto trace = synthetic_trace(6, 200'000'000, 1e12);
  // The state lives on the node's SSDs (out of core, the default), so reading and writing it back
  // take long enough for the pipelining to matter.
  auto step = sim::simulate_system(trace, topo, hw, *make_system("luwu"), {});
  sim::SimulationOptions timeline;
  timeline.record_timeline = true;
  auto layer = sim::simulate_system(trace, topo, hw, *make_system("luwu", {{"node_pipelining", "layer-centric"}}), timeline);
  REQUIRE(step.feasible);
  REQUIRE(layer.feasible);
  // 32 + 5 x 1 = 37 threads at 100 Gb/s, a group of 32 per layer: floor(37 / 32) = 1 lane, which
  // carries all 6 layers' state read, update and write-back.
  CHECK(span_durations(layer.timeline, "optnode", "layer lane 0 (cpu)").size() == 6);
  CHECK(span_durations(layer.timeline, "optnode", "layer lane 1 (cpu)").empty());
  CHECK(layer.iteration_time_s > step.iteration_time_s);
  // The node is the only difference: compute is the same.
  CHECK(layer.breakdown.compute_s == doctest::Approx(step.breakdown.compute_s));
}

TEST_CASE("luwu's node_pipelining: a bad value is an error at its path, and layer-centric needs thread rates") {
  CHECK_THROWS_WITH_AS(make_system("luwu", {{"node_pipelining", "pipelined"}}),
                       doctest::Contains("$.systems[0].node_pipelining"), InputError);
  auto topo = star(2);  // the default host profile gives no per-thread rates
  auto hw = quiet_hardware(topo);
  auto r = sim::simulate_system(synthetic_trace(2, 1'000'000, 1e9), topo, hw,
                                *make_system("luwu", {{"node_pipelining", "layer-centric"}}), {});
  CHECK_FALSE(r.feasible);
  CHECK(r.reason.find("adam_thread_update_rate") != std::string::npos);
}

TEST_CASE("luwu-star: the optimizer node may have its own host and SSD profiles") {
  topologies::LuwuStarParams p;
  p.workers = 2;
  p.optimizer_host_profile = "xeon-gold-5320-node";
  p.optimizer_ssd_profile = "intel-optane-p5800x";
  p.optimizer_ssds = 12;
  auto topo = topologies::build_luwu_star(p);
  CHECK(topo[topo.vertex("optnode")].profile == "xeon-gold-5320-node");
  CHECK(topo[topo.vertex("optnode-ssd11")].profile == "intel-optane-p5800x");
  CHECK(topo[topo.vertex("cpu0")].profile == "dual-socket-server-2021");
  CHECK(topo[topo.vertex("nvme0-0")].profile == "samsung-pm1733");
  auto hw = sim::hardware_of(topo);
  CHECK(hw.optimizer_node->cpu.cores == 52);
  CHECK(hw.worker_host.cpu.cores == 64);
}
