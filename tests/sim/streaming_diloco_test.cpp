// Streaming DiLoCo (sim/systems/streaming_diloco/) on the `wan` topology (topologies/builders.hpp).
//
// Closed forms, for M groups of R ranks, a model of N parameters, P fragments, tau overlap steps,
// b bits per outer-gradient element:
// - the simulated step carries 1/tau of one fragment's outer all-reduce: R rings across the M
//   groups each all-reduce N / (P R tau) x b / 8 bytes, so each group's WAN link carries, each way,
//   2 (M-1)/M x N / P x b / 8 / tau bytes (M = 2: N b / (8 P tau)), and nothing else: the inner
//   all-reduces stay inside the groups;
// - details: peak WAN bandwidth = that / step time, average = P x fragment / (H x step time);
//   data parallelism's peak over it = 16 P tau / b (fp16 gradients every step), DiLoCo's = 32 P tau / b
//   (the fp32 outer gradient at once);
// - memory: DDP's replica plus 8 B per parameter (global parameters and outer momentum, fp32) and
//   one fragment's quantized outer gradient.
// The topology: group to group = the WAN latency plus the fabric's, bottleneck the WAN bandwidth.
#include <doctest/doctest.h>

#include <string>

#include "sim/experiment/result.hpp"
#include "sim/experiment/scenario.hpp"
#include "sim/experiment/simulate.hpp"
#include "sim/systems/memory_footprint.hpp"
#include "sim/systems/streaming_diloco/streaming_diloco.hpp"
#include "sim_test_support.hpp"
#include "topologies/builders.hpp"
#include "topologies/dot.hpp"
#include "topologies/routes.hpp"

using namespace luwu;
using namespace sim_test;

namespace {

constexpr double kWanBps = 1.25e9;  // 10 Gb/s
constexpr double kWanLatencyS = 0.01;

topologies::Topology two_datacenters(int servers_per_group = 1, int gpus_per_server = 2) {
  topologies::WanParams p;
  p.groups = 2;
  p.servers_per_group = servers_per_group;
  p.gpus_per_server = gpus_per_server;
  p.gpus_per_pcie_switch = gpus_per_server;
  p.wan_Bps = kWanBps;
  p.wan_latency_s = kWanLatencyS;
  return topologies::build_wan(p);
}

constexpr int kLayers = 4;
constexpr std::uint64_t kParams = 10'000'000;
constexpr double kN = kLayers * static_cast<double>(kParams);

double wan_link_bytes(const sim::SystemResult& r, const std::string& router) {
  // The directed links of "wan-router<g>--wan": _UP leaves the group, _DOWN enters it.
  double up = 0, down = 0;
  for (const auto& l : r.links) {
    if (l.link == router + "--wan_UP") up = l.bytes;
    if (l.link == router + "--wan_DOWN") down = l.bytes;
  }
  CHECK(up == doctest::Approx(down).epsilon(1e-12));
  return up;
}

}  // namespace

TEST_CASE("wan topology: groups of servers, a router each, one wide-area link per group to the core") {
  const auto topo = two_datacenters(2, 2);
  CHECK(topo.gpus().size() == 8);
  for (const char* name : {"switch0", "switch1", "wan-router0", "wan-router1", "wan"}) CHECK(topo.find_vertex(name));
  // gpu0 (group 0) to gpu4 (group 1): NIC, switch0, router0, wan, router1, switch1, NIC.
  const auto route = topologies::shortest_route(topo, topo.gpus()[0], topo.gpus()[4]);
  double latency = 0, bottleneck = 1e300;
  int wan_links = 0;
  for (auto e : route) {
    latency += topo[e].latency_s;
    bottleneck = std::min(bottleneck, topo[e].bandwidth_Bps);
    if (topo[e].name.ends_with("--wan")) ++wan_links;  // wan-router<g>--wan
  }
  CHECK(wan_links == 2);
  CHECK(bottleneck == kWanBps);
  const auto inside = path(topo, topo.nic_of(topo.gpus()[0]), topo.vertex("wan-router0"));
  CHECK(latency == doctest::Approx(kWanLatencyS + 2 * inside.latency_s + (path(topo, topo.gpus()[0], topo.nic_of(topo.gpus()[0])).latency_s) * 2).epsilon(1e-12));
  // Inside a group nothing crosses the WAN.
  for (auto e : topologies::shortest_route(topo, topo.gpus()[0], topo.gpus()[2]))
    CHECK(topo[e].name.find("wan") == std::string::npos);
  CHECK(topologies::to_dot(topo).find("wan-router1") != std::string::npos);
}

TEST_CASE("streaming-diloco: the WAN carries 1/tau of one fragment's quantized outer all-reduce, nothing of the inner one") {
  const auto topo = two_datacenters();
  const auto trace = synthetic_trace(kLayers, kParams, 1e12);
  for (const int tau : {1, 2}) {
    CAPTURE(tau);
    const auto system = make_system("streaming-diloco", {{"fragments", 10}, {"overlap_steps", tau}, {"outer_gradient_bits", 4}});
    const auto r = sim::simulate_system(trace, topo, quiet_hardware(topo), *system, {});
    REQUIRE(r.feasible);
    const double fragment_wan = 2.0 * 1 / 2 * kN / 10 * 4 / 8;  // 2 (M-1)/M x N / P x b / 8
    for (const char* router : {"wan-router0", "wan-router1"}) {
      CAPTURE(router);
      CHECK(wan_link_bytes(r, router) == doctest::Approx(fragment_wan / tau).epsilon(1e-9));
    }
    REQUIRE(r.details.is_object());
    const auto& d = r.details;
    const double t = r.iteration_time_s;
    CHECK(d.at("fragment_wan_bytes").get<double>() == doctest::Approx(fragment_wan).epsilon(1e-12));
    CHECK(d.at("peak_wan_Bps").get<double>() == doctest::Approx(fragment_wan / tau / t).epsilon(1e-12));
    CHECK(d.at("average_wan_Bps").get<double>() == doctest::Approx(10 * fragment_wan / (100 * t)).epsilon(1e-12));
    // Data parallelism's peak over Streaming DiLoCo's: 16 P tau / b; DiLoCo's: 32 P tau / b.
    CHECK(d.at("data_parallel_peak_wan_Bps").get<double>() / d.at("peak_wan_Bps").get<double>() ==
          doctest::Approx(16.0 * 10 * tau / 4).epsilon(1e-12));
    CHECK(d.at("diloco_peak_wan_Bps").get<double>() / d.at("peak_wan_Bps").get<double>() ==
          doctest::Approx(32.0 * 10 * tau / 4).epsilon(1e-12));
    // The step is at least the WAN transfer of its share (one ring over 2 groups: the share crosses
    // once each way, after the latency).
    CHECK(t >= fragment_wan / tau / kWanBps + kWanLatencyS);
  }
  // DDP over both groups puts its every gradient all-reduce on the WAN: far more bytes.
  const auto ddp = sim::simulate_system(trace, topo, quiet_hardware(topo), *make_system("ddp"), {});
  CHECK(wan_link_bytes(ddp, "wan-router0") > 0);
}

TEST_CASE("streaming-diloco: on a slow WAN the step is the share's transfer, 2 (latency + share / 2 / B) for 2 groups") {
  // Two servers of 2 GPUs per group (so the inner all-reduce crosses servers inside each group,
  // and every group's and ring's communicator must be its own), WAN 0.1 Gb/s: the outer share,
  // N / P x b / 8 = 10 MB, takes 0.8 s, far longer than the inner step.  A ring over 2 groups is
  // 2 steps of share / 2 on every one of the R rings at once, which share the WAN link.
  topologies::WanParams p;
  p.groups = 2;
  p.servers_per_group = 2;
  p.gpus_per_server = 2;
  p.gpus_per_pcie_switch = 2;
  p.wan_Bps = 1.25e7;
  p.wan_latency_s = kWanLatencyS;
  const auto topo = topologies::build_wan(p);
  const auto trace = synthetic_trace(kLayers, kParams, 1e12);
  const auto system = make_system("streaming-diloco", {{"fragments", 2}, {"inner_steps", 2}});
  const auto r = sim::simulate_system(trace, topo, quiet_hardware(topo), *system, {});
  REQUIRE(r.feasible);
  const double share = kN / 2 * 4 / 8;
  const double latency = gpu_to_gpu(topo, 0, 4).latency_s;
  CHECK(r.iteration_time_s == doctest::Approx(2 * latency + share / p.wan_Bps).epsilon(1e-6));
  CHECK(wan_link_bytes(r, "wan-router0") == doctest::Approx(share).epsilon(1e-9));
}

TEST_CASE("streaming-diloco: memory is DDP's replica plus the fp32 outer state and one quantized fragment") {
  workloads::TrainingConfig tc;
  tc.seq_len = 512;
  const auto t = workloads::generate_trace(*workloads::find_catalog_model("gpt3-125m"), tc);
  const double gpu = 40e9;
  const auto ddp = make_system("ddp")->memory_footprint(t, 4, gpu);
  const auto sd = make_system("streaming-diloco", {{"fragments", 4}})->memory_footprint(t, 4, gpu);
  const double P = static_cast<double>(t.total_params());
  CHECK(sd.gpu_params_bytes == ddp.gpu_params_bytes);
  CHECK(sd.gpu_optimizer_bytes == ddp.gpu_optimizer_bytes + static_cast<std::uint64_t>(8 * P));
  CHECK(sd.gpu_buffer_bytes == ddp.gpu_buffer_bytes + static_cast<std::uint64_t>(P / 4 * 4 / 8));
}

TEST_CASE("streaming-diloco and wan: bad settings are errors at their paths") {
  CHECK(system_settings_error("streaming-diloco", {{"fragments", 200}}).find("fragments") != std::string::npos);
  CHECK(system_settings_error("streaming-diloco", {{"fragments", 50}, {"overlap_steps", 3}}).find("overlap_steps") !=
        std::string::npos);
  CHECK(system_settings_error("streaming-diloco", {{"outer_gradient_bits", 0}}).find("outer_gradient_bits") !=
        std::string::npos);
  auto scenario = [](Json cluster) {
    Json j = {{"model", "gpt3-125m"},
              {"training", {{"micro_batch", 1}, {"seq_len", 128}}},
              {"cluster", cluster},
              {"systems", {"streaming-diloco"}}};
    return sim::scenario_from_json(JsonNode(j, "s.json"));
  };
  const auto ok = scenario({{"topology", "wan"}, {"groups", 3}, {"gpus_per_server", 2}, {"gpus_per_pcie_switch", 2},
                            {"wan_bandwidth", "1Gb/s"}, {"wan_latency_ms", 20}});
  CHECK(ok.topology.gpus().size() == 6);
  for (const auto& [cluster, path] : {std::pair{Json{{"topology", "wan"}, {"groups", 2}}, std::string("wan_bandwidth")},
                                      {Json{{"topology", "wan"}, {"wan_bandwidth", "1Gb/s"}, {"wan_latency_ms", -1}},
                                       std::string("$.cluster.wan_latency_ms")}}) {
    CAPTURE(path);
    try {
      scenario(cluster);
      FAIL("expected an InputError");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find(path) != std::string::npos);
      CHECK(std::string(e.what()).find("s.json") != std::string::npos);
    }
  }
}
