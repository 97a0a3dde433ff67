// ZeRO-Offload and SwitchML schedules against closed forms derived here from the topology's links,
// the switch and NIC profiles and the GPU/CPU models, on synthetic traces (each case isolates
// compute, communication, PCIe or overlap), and their traffic against the papers' volumes.
#include <doctest/doctest.h>

#include "tests/sim/sim_test_support.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "models/host.hpp"
#include "models/optimizer_cost.hpp"
#include "sim/engine/collectives.hpp"
#include "sim/experiment/simulate.hpp"
#include "sim/systems/registry.hpp"
#include "topologies/builders.hpp"
#include "topologies/routes.hpp"
#include "workloads/model_catalog.hpp"

using namespace luwu;
using namespace sim_test;
using workloads::OpKind;

namespace {

// The PCIe link between a worker's CPU and the PCIe switch its GPU hangs off: the last edge of the
// GPU-to-CPU route (luwu-star names it pcie<w>-0--cpu<w>).
std::string cpu_pcie_link(const topologies::Topology& topo, int rank) {
  auto gpu = topo.gpus()[rank];
  auto route = topologies::shortest_route(topo, gpu, topo.cpu_of(gpu));
  REQUIRE(route.size() == 2);  // gpu - pcie switch - cpu
  return topo[route.back()].name;
}

// Bytes on one link of the result, both directions (SimGrid names them <edge>_UP / <edge>_DOWN).
double link_bytes_both_ways(const sim::SystemResult& r, const std::string& edge) {
  double sum = 0;
  for (const auto& l : r.links)
    if (l.link == edge + "_UP" || l.link == edge + "_DOWN") sum += l.bytes;
  return sum;
}

}  // namespace

TEST_CASE("ZeRO-Offload moves 4 bytes per parameter over PCIe per step as the paper counts, 6 as DeepSpeed copies") {
  // The paper's volume (arXiv 2101.06840): fp16 gradients to the CPU, fp16 parameters back, 2P/N
  // bytes each way per GPU; over N GPUs, 4P.  DeepSpeed converts the gradient to fp32 on the GPU
  // before the copy: 4P/N down.  The network traffic takes the GPU-NIC PCIe path and never
  // crosses the CPU's PCIe link.
  const int n = 4;
  auto topo = star(n);
  auto hw = quiet_hardware(topo);
  const std::uint64_t params = 30'000'000;
  auto trace = synthetic_trace(4, params, 1e12);
  for (bool fp32 : {false, true}) {
    const double per_param = fp32 ? 6 : 4;
    for (bool delayed : {false, true}) {
      // Several buckets, each copied as soon as it is reduced.
      auto settings = make_system("zero-offload", {{"reduce_bucket_bytes", 50e6},
                                                   {"delayed_param_update", delayed},
                                                   {"fp32_gradient_copy", fp32}});
      auto r = sim::simulate_system(trace, topo, hw, *settings, {});
      REQUIRE(r.feasible);
      double total = 0;
      for (int w = 0; w < n; ++w) {
        double per_gpu = link_bytes_both_ways(r, cpu_pcie_link(topo, w));
        CHECK(per_gpu == doctest::Approx(per_param * 4 * params / n).epsilon(1e-9).scale(0));
        total += per_gpu;
      }
      CHECK(total == doctest::Approx(per_param * 4 * params).epsilon(1e-9).scale(0));
    }
  }
}

TEST_CASE("ZeRO-Offload accumulates gradients in host memory through the GPU") {
  // DeepSpeed's async_accumulate_grad_in_cpu_via_gpu, per micro-step and GPU, on the shard of each
  // bucket: micro-step 0 sends its sum down (2P/N); micro-step 1 brings it up (2P/N), adds and
  // sends it down (2P/N); the last brings it up (2P/N) and sends it down as fp32 (4P/N); then the
  // fp16 parameters come up (2P/N): 14P/N in all, over 3 micro-steps.
  const int n = 2;
  auto topo = star(n);
  auto hw = quiet_hardware(topo);
  const std::uint64_t params = 20'000'000;
  auto trace = synthetic_trace(3, params, 1e12, 3);
  auto r = sim::simulate_system(trace, topo, hw, *make_system("zero-offload", {{"reduce_bucket_bytes", 40e6}}), {});
  REQUIRE(r.feasible);
  for (int w = 0; w < n; ++w)
    CHECK(link_bytes_both_ways(r, cpu_pcie_link(topo, w)) == doctest::Approx(14.0 * 3 * params / n).epsilon(1e-9).scale(0));
}

TEST_CASE("ZeRO-Offload compute only: kernels, then the gradient down, the CPU step and the parameters up") {
  // One worker: the reduce-scatter and the all-gather are empty, what is left is the offload path.
  auto topo = star(1);
  auto hw = quiet_hardware(topo);
  const std::uint64_t params = 10'000'000;
  auto trace = synthetic_trace(6, params, 3e12);
  auto r = sim::simulate_system(trace, topo, hw, *make_system("zero-offload"), {});
  const double P = 6.0 * params;
  Path pcie = gpu_to_cpu(topo, 0);
  // The gradient goes down as fp32 (4P), the fp16 parameters come up (2P).
  double expected = compute_s(trace, hw) + pcie.time_s(4 * P) + cpu_optimizer_s(hw, P) + pcie.time_s(2 * P);
  CHECK(r.iteration_time_s == doctest::Approx(expected).epsilon(1e-9).scale(0));
  CHECK(r.sent_bytes_per_worker == 0);  // network bytes: none with one worker
  CHECK(link_bytes_both_ways(r, cpu_pcie_link(topo, 0)) == doctest::Approx(6 * P).epsilon(1e-12).scale(0));
  CHECK(r.breakdown.exposed_optimizer_s == doctest::Approx(cpu_optimizer_s(hw, P)).epsilon(1e-9).scale(0));
  CHECK(r.breakdown.io_stall_s == doctest::Approx(pcie.time_s(4 * P) + pcie.time_s(2 * P)).epsilon(1e-9).scale(0));
}

TEST_CASE("ZeRO-Offload communication only: the gradient reduction, shard down, CPU step, shard up, all-gather") {
  const int n = 4;
  auto topo = star(n);
  auto hw = quiet_hardware(topo);
  Path hop = gpu_to_gpu(topo, 0, 1);
  Path pcie = gpu_to_cpu(topo, 0);
  const double P = 50e6;  // one layer, one bucket: nothing overlaps
  auto trace = synthetic_trace(1, static_cast<std::uint64_t>(P), 0);
  const double a = hop.latency_s, b = hop.bandwidth_Bps;
  const double gather = sim::ring_all_gather_closed_form_s(n, 2 * P, a, b);
  const double rest = pcie.time_s(4 * P / n) + cpu_optimizer_s(hw, P / n) + pcie.time_s(2 * P / n);
  // The 2P-byte bucket reduced as DeepSpeed 0.9.3 does by default (one reduce per owner), as one
  // reduce-scatter, or all-reduced (its reduce_scatter false).
  struct Case {
    const char* reduction;
    double seconds, sent_bytes;
  };
  for (const Case& c : {Case{nullptr, sim::ring_reduce_to_owners_closed_form_s(n, 2 * P, a, b), (n - 1.0) / n * 2 * P},
                        Case{"reduce-scatter", sim::ring_all_gather_closed_form_s(n, 2 * P, a, b), (n - 1.0) / n * 2 * P},
                        Case{"all-reduce", sim::ring_all_reduce_closed_form_s(n, 2 * P, a, b), 2 * (n - 1.0) / n * 2 * P}}) {
    CAPTURE(c.reduction ? c.reduction : "(default)");
    luwu::Json settings = luwu::Json::object();
    if (c.reduction) settings["gradient_reduction"] = c.reduction;
    auto r = sim::simulate_system(trace, topo, hw, *make_system("zero-offload", settings), {});
    CHECK(r.iteration_time_s == doctest::Approx(c.seconds + rest + gather).epsilon(1e-3).scale(0));
    CHECK(r.breakdown.exposed_communication_s == doctest::Approx(c.seconds + gather).epsilon(1e-3).scale(0));
    // Network: the reduction, then an all-gather that sends (N-1)/N x 2P per worker; reduced to
    // the owners or reduce-scattered, ZeRO-2 moves as much as DDP (ZeRO paper, section 7).
    CHECK(r.sent_bytes_per_worker == doctest::Approx(c.sent_bytes + (n - 1.0) / n * 2 * P).epsilon(1e-9).scale(0));
  }
  CHECK(system_settings_error("zero-offload", {{"gradient_reduction", "broadcast"}})
            .find("$.systems[0].gradient_reduction") != std::string::npos);
}

TEST_CASE("ZeRO-Offload delayed parameter update hides the CPU step when compute is longer") {
  auto topo = star(1);
  auto hw = quiet_hardware(topo);
  const std::uint64_t params = 10'000'000;
  auto trace = synthetic_trace(6, params, 3e12);
  const double P = 6.0 * params;
  Path pcie = gpu_to_cpu(topo, 0);
  const double compute = compute_s(trace, hw);
  REQUIRE(cpu_optimizer_s(hw, P) + pcie.time_s(2 * P) < compute);  // the premise: the update fits under compute

  auto plain = sim::simulate_system(trace, topo, hw, *make_system("zero-offload"), {});
  auto delayed = sim::simulate_system(trace, topo, hw, *make_system("zero-offload", {{"delayed_param_update", true}}), {});
  // The previous step's CPU update and copy back run under the kernels; only this step's
  // gradient copy to the CPU (fp32) is left after backward.
  CHECK(delayed.iteration_time_s == doctest::Approx(compute + pcie.time_s(4 * P)).epsilon(1e-9).scale(0));
  CHECK(delayed.breakdown.exposed_optimizer_s == 0.0);
  CHECK(plain.iteration_time_s - delayed.iteration_time_s ==
        doctest::Approx(cpu_optimizer_s(hw, P) + pcie.time_s(2 * P)).epsilon(1e-9).scale(0));
}

TEST_CASE("ZeRO-Offload delayed parameter update: the iteration waits for the longer of compute and the update") {
  // Communication only (no compute): the update pipeline of the previous step runs from t = 0
  // beside this step's reduce-scatter and copy down, on other links (the all-gather and the
  // reduce-scatter share the ring, so both take their max-min share): the iteration cannot be
  // shorter than the update path alone, and is shorter than the undelayed step.
  const int n = 4;
  auto topo = star(n);
  auto hw = quiet_hardware(topo);
  const double P = 50e6;
  auto trace = synthetic_trace(1, static_cast<std::uint64_t>(P), 0);
  Path hop = gpu_to_gpu(topo, 0, 1);
  Path pcie = gpu_to_cpu(topo, 0);
  const double collective = sim::ring_all_gather_closed_form_s(n, 2 * P, hop.latency_s, hop.bandwidth_Bps);
  const double update_path = cpu_optimizer_s(hw, P / n) + pcie.time_s(2 * P / n) + collective;
  auto plain = sim::simulate_system(trace, topo, hw, *make_system("zero-offload"), {});
  auto delayed = sim::simulate_system(trace, topo, hw, *make_system("zero-offload", {{"delayed_param_update", true}}), {});
  CHECK(delayed.iteration_time_s >= update_path * (1 - 1e-9));
  CHECK(delayed.iteration_time_s < plain.iteration_time_s);
}

namespace {

// The per-worker aggregation throughput, from the profiles: payload goodput at the packet size,
// bounded by the window (slots x payload per round trip) and by the switch's packet rate.
double switchml_rate_Bps(const sim::Hardware& hw, double rtt_s, int workers) {
  const auto& sw = *hw.network_switch;
  const auto& nic = hw.worker_nic;
  const double payload = sw.elements_per_packet * sw.element_bytes;  // 64 x 4 B = 256 B for Tofino
  const double line = nic.line_rate_Bps * payload / (payload + nic.header_bytes);
  const double window = sw.aggregation_slots * payload / rtt_s;
  return std::min({line, window, sw.aggregation_packets_per_s * payload / workers});
}

// A communication-only SwitchML step of one bucket in `chunks` pieces: each piece is uploaded in
// turn (latency + piece / rate), the last one's sum comes back (latency + piece / rate), then the
// optimizer steps on the GPU.
double switchml_step_s(const sim::Hardware& hw, const Path& to_switch, double gradient_bytes, int chunks,
                       double wire_bytes_per_grad_byte, double rate_Bps, double params) {
  const double piece = gradient_bytes * wire_bytes_per_grad_byte / chunks;
  return (chunks + 1) * to_switch.time_s(piece, rate_Bps) + gpu_optimizer_s(hw, params);
}

}  // namespace

TEST_CASE("SwitchML aggregates at min(line rate, window / RTT): few slots are window-bound, many line-bound") {
  const int n = 4;
  auto topo = star(n);
  const double P = 5e6;  // one 10 MB fp16 gradient bucket
  auto trace = synthetic_trace(1, static_cast<std::uint64_t>(P), 0);
  auto settings = make_system("switchml", {{"bucket_bytes", 2 * P}});
  const int chunks = 16;  // the default pipeline_chunks
  Path to_switch = gpu_to_switch(topo, 0);
  const double rtt = 2 * to_switch.latency_s;

  auto with_slots = [&](double slots) {
    auto hw = quiet_hardware(topo);
    REQUIRE(hw.network_switch.has_value());
    hw.network_switch->aggregation_slots = slots;
    return hw;
  };
  auto few = with_slots(8);
  auto many = with_slots(1e6);
  const auto& sw = *few.network_switch;
  const double payload = sw.elements_per_packet * sw.element_bytes;
  const double line = few.worker_nic.line_rate_Bps * payload / (payload + few.worker_nic.header_bytes);
  // The premises: 8 slots cannot fill the line in a round trip, a million can.
  REQUIRE(8 * payload / rtt < line);
  REQUIRE(1e6 * payload / rtt > line);
  REQUIRE(sw.aggregation_packets_per_s * payload / n > line);

  const double window_rate = 8 * payload / rtt;
  CHECK(switchml_rate_Bps(few, rtt, n) == doctest::Approx(window_rate).scale(0));
  CHECK(switchml_rate_Bps(many, rtt, n) == doctest::Approx(line).scale(0));

  auto r_few = sim::simulate_system(trace, topo, few, *settings, {});
  auto r_many = sim::simulate_system(trace, topo, many, *settings, {});
  CHECK(r_few.iteration_time_s == doctest::Approx(switchml_step_s(few, to_switch, 2 * P, chunks, 2, window_rate, P)).epsilon(1e-6).scale(0));
  CHECK(r_many.iteration_time_s == doctest::Approx(switchml_step_s(many, to_switch, 2 * P, chunks, 2, line, P)).epsilon(1e-6).scale(0));

  // Window-bound: twice the slots, half the wire time; line-bound: more slots change nothing.
  auto r_16 = sim::simulate_system(trace, topo, with_slots(16), *settings, {});
  auto r_2m = sim::simulate_system(trace, topo, with_slots(2e6), *settings, {});
  const double fixed = (chunks + 1) * to_switch.latency_s + gpu_optimizer_s(few, P);
  CHECK((r_16.iteration_time_s - fixed) / (r_few.iteration_time_s - fixed) == doctest::Approx(0.5).epsilon(1e-6).scale(0));
  CHECK(r_2m.iteration_time_s == doctest::Approx(r_many.iteration_time_s).epsilon(1e-12).scale(0));
}

TEST_CASE("SwitchML with the Tofino profile: throughput from its own slots, payload and the NIC") {
  const int n = 8;
  auto topo = star(n);
  auto hw = quiet_hardware(topo);
  const double P = 20e6;
  auto trace = synthetic_trace(1, static_cast<std::uint64_t>(P), 0);
  auto settings = make_system("switchml", {{"bucket_bytes", 2 * P}});
  const int chunks = 16;  // the default pipeline_chunks
  Path to_switch = gpu_to_switch(topo, 0);
  const double rate = switchml_rate_Bps(hw, 2 * to_switch.latency_s, n);
  auto r = sim::simulate_system(trace, topo, hw, *settings, {});
  CHECK(r.iteration_time_s ==
        doctest::Approx(switchml_step_s(hw, to_switch, 2 * P, chunks, 2, rate, P)).epsilon(1e-6).scale(0));
}

TEST_CASE("SwitchML: each worker sends one gradient up and receives one aggregate, at the wire element size") {
  const int n = 8;
  auto topo = star(n);
  auto hw = quiet_hardware(topo);
  const std::uint64_t params = 30'000'000;
  auto trace = synthetic_trace(4, params, 1e12);
  const double gradient = 4.0 * 2 * params;  // fp16
  for (double element_bytes : {4.0, 2.0}) {
    auto r = sim::simulate_system(trace, topo, hw, *make_system("switchml", {{"aggregation_element_bytes", element_bytes}}), {});
    CHECK(r.sent_bytes_per_worker == doctest::Approx(gradient * element_bytes / 2).epsilon(1e-9).scale(0));
    CHECK(r.received_bytes_per_worker == doctest::Approx(gradient * element_bytes / 2).epsilon(1e-9).scale(0));
  }
  // Against DDP's ring, 2 (N-1)/N x 2P per worker: SwitchML's 32-bit wire carries 8/7 of it at N = 8.
  auto ddp = sim::simulate_system(trace, topo, hw, *make_system("ddp"), {});
  auto switchml = sim::simulate_system(trace, topo, hw, *make_system("switchml"), {});
  CHECK(switchml.sent_bytes_per_worker / ddp.sent_bytes_per_worker == doctest::Approx(8.0 / 7).epsilon(1e-9).scale(0));
}

TEST_CASE("SwitchML of GPT-3 175B on 8 x A100-40GB is infeasible, with a reason, not a crash") {
  auto topo = star(8);
  auto hw = sim::hardware_of(topo);
  workloads::TrainingConfig training;
  training.micro_batch = 16;
  training.recompute = true;
  auto trace = workloads::generate_trace(*workloads::find_catalog_model("gpt3-175b"), training);
  auto r = sim::simulate_system(trace, topo, hw, *make_system("switchml"), {});
  CHECK_FALSE(r.feasible);
  CHECK(r.reason.find("replica") != std::string::npos);
  // A replica's fp16 parameters alone (2 B x 175e9 = 350 GB) exceed 40 GB many times over.
  CHECK(r.memory.at("gpu_params_bytes").get<double>() > 300e9);
}

TEST_CASE("a scenario's system entry sets the ZeRO-Offload bucket and the delayed update, strictly") {
  auto json = luwu::Json::parse(R"({"name": "zero-offload", "reduce_bucket_bytes": 2e8, "delayed_param_update": true})");
  auto s = sim::system_from_json(luwu::JsonNode(json, "scenario.json", "$.systems[0]"));
  CHECK(s->name() == "zero-offload");
  CHECK(s->label() == "zero-offload");
  auto bad = luwu::Json::parse(R"({"name": "zero-offload", "reduce_bucket_bytes": -1})");
  CHECK_THROWS_WITH_AS(sim::system_from_json(luwu::JsonNode(bad, "scenario.json", "$.systems[0]")),
                       doctest::Contains("$.systems[0].reduce_bucket_bytes"), luwu::InputError);
  // A setting of another system is an error that names the system's own settings.
  auto foreign = luwu::Json::parse(R"({"name": "zero-offload", "prefetch_layers": 2})");
  CHECK_THROWS_WITH_AS(sim::system_from_json(luwu::JsonNode(foreign, "scenario.json", "$.systems[0]")),
                       doctest::Contains("\"prefetch_layers\" is not a setting of zero-offload"), luwu::InputError);
}

TEST_CASE("ZeRO-Offload: the host's overflow check waits for each bucket's reduction at the boundary, as DeepSpeed 0.9.3's does") {
  // stage_1_and_2.py with the optimizer offloaded: at the accumulation boundary each gradient of the
  // rank's partition goes through _has_inf_or_nan, float(x.float().sum()), in the backward hook, so
  // the host launches no backward kernel until the bucket is reduced. One bucket per layer here.
  const int n = 4;
  auto topo = star(n);
  auto hw = quiet_hardware(topo);
  const std::uint64_t params = 20'000'000;
  auto trace = synthetic_trace(6, params, 4e12, 2);  // two micro-steps: only the last one waits
  sim::SimulationOptions options;
  options.record_timeline = true;
  auto run = [&](const char* mode) {
    luwu::Json settings{{"reduce_bucket_bytes", 2.0 * params}};
    if (mode) settings["overflow_check"] = mode;
    auto r = sim::simulate_system(trace, topo, hw, *make_system("zero-offload", settings), options);
    REQUIRE(r.feasible);
    return r;
  };
  // Backward kernels that run while a bucket is reduced, per micro-step (the kernels come in op
  // order: each micro-step's 6 forward, then its 6 backward).
  auto overlapping = [](const sim::SystemResult& r) {
    std::vector<TrackSpan> kernels;
    for (const auto& k : track_spans(r.timeline, "gpu0", "compute"))
      if (k.category == "compute") kernels.push_back(k);
    const auto reductions = track_spans(r.timeline, "gpu0", "gradient reduction");
    REQUIRE(kernels.size() == 24);   // 2 micro-steps x (6 forward + 6 backward)
    REQUIRE(reductions.size() == 12);  // a bucket per layer and micro-step
    std::array<int, 2> count{0, 0};
    for (std::size_t k = 0; k < kernels.size(); ++k)
      for (const auto& rs : reductions)
        if (k % 12 >= 6)
          if (std::min(kernels[k].end_s, rs.end_s) - std::max(kernels[k].start_s, rs.start_s) > 1e-6) ++count[k / 12];
    return count;
  };
  const auto blocking = run(nullptr);  // the default
  const auto async = run("async");
  CHECK(overlapping(async)[1] > 0);     // without the wait the reductions run beside backward
  CHECK(overlapping(blocking)[1] == 0);  // with it, none in the last micro-step
  CHECK(overlapping(blocking)[0] == overlapping(async)[0]);
  CHECK(blocking.iteration_time_s > async.iteration_time_s);
  CHECK(system_settings_error("zero-offload", {{"overflow_check", "later"}}).find("$.systems[0].overflow_check") !=
        std::string::npos);
}
