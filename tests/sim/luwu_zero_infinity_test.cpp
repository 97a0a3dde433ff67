// LuWu and ZeRO-Infinity against their data-movement closed forms (systems.md): what crosses the
// optimizer node's link, each worker's PCIe and each worker's NVMe in one step.
#include <doctest/doctest.h>

#include <string>

#include "models/gpu_update_engine.hpp"
#include "models/host.hpp"
#include "sim/experiment/simulate.hpp"
#include "tests/sim/sim_test_support.hpp"
#include "topologies/builders.hpp"

using namespace luwu;
using namespace sim_test;

namespace {

double link_bytes(const sim::SystemResult& r, const std::string& name) {
  for (const auto& l : r.links)
    if (l.link == name) return l.bytes;
  return 0;
}

double storage(const sim::SystemResult& r, const std::string& key) {
  auto it = r.storage_bytes.find(key);
  return it == r.storage_bytes.end() ? 0 : it->second;
}

}  // namespace

TEST_CASE("luwu: the optimizer node's link carries 2 x P x 2 B down per micro-batch and one aggregate up") {
  const int n = 4, layers = 6, micro_batches = 2;
  const double p = 20e6;
  auto topo = star(n);
  auto hw = sim::hardware_of(topo);
  auto trace = synthetic_trace(layers, 20'000'000, 1e12, micro_batches);
  auto r = sim::simulate_system(trace, topo, hw, *make_system("luwu"), {});
  REQUIRE(r.feasible);
  const double params = layers * p;
  // Down: every layer's fp16 parameters for forward and again for backward, each micro-batch.
  CHECK(link_bytes(r, "optnode-nic0--switch_UP") == doctest::Approx(micro_batches * 2 * params * 2).scale(0));
  // Up: one aggregated gradient per micro-batch, 32-bit fixed point (aggregation_element_bytes 4).
  CHECK(link_bytes(r, "optnode-nic0--switch_DOWN") == doctest::Approx(micro_batches * params * 4).scale(0));
  // Every worker receives the same parameters and sends its own gradient.
  CHECK(r.received_bytes_per_worker == doctest::Approx(micro_batches * 2 * params * 2).scale(0));
  CHECK(r.sent_bytes_per_worker == doctest::Approx(micro_batches * params * 4).scale(0));
}

TEST_CASE("luwu: no collective kernels run on the GPUs, so collective interference costs nothing") {
  auto topo = star(4);
  auto hw = sim::hardware_of(topo);
  hw.gpu.dma_interference = 0;
  auto noisy = hw;
  noisy.gpu.collective_interference = 0.4;
  auto trace = synthetic_trace(6, 20'000'000, 20e12);
  auto a = sim::simulate_system(trace, topo, hw, *make_system("luwu"), {});
  auto b = sim::simulate_system(trace, topo, noisy, *make_system("luwu"), {});
  double undisturbed = 0;
  for (const auto& op : trace.ops)
    undisturbed += hw.gpu.compute_time_s(op.flops, 2048.0, trace.model.hidden, trace.model.hidden, models::Precision::Fp16);
  CHECK(a.breakdown.compute_s == doctest::Approx(undisturbed).epsilon(1e-9).scale(0));
  CHECK(b.iteration_time_s == doctest::Approx(a.iteration_time_s).epsilon(1e-12).scale(0));
}

TEST_CASE("luwu: state beyond the optimizer node's DRAM streams from its SSDs and back, once per step") {
  auto topo = star(2);
  auto hw = sim::hardware_of(topo);
  const double params = 8 * 50e6;
  // Usable DRAM: the fp16 parameters (2 B/param) and a quarter of the 12 B/param state.
  auto settings = make_system("luwu", {{"optimizer_node_dram_share", params * (2 + 3) / hw.optimizer_node->dram.capacity_bytes}});
  auto trace = synthetic_trace(8, 50'000'000, 1e12);
  auto r = sim::simulate_system(trace, topo, hw, *settings, {});
  REQUIRE(r.feasible);
  double read = 0, written = 0;
  for (int j = 0; j < 4; ++j) {
    read += storage(r, "optnode-ssd" + std::to_string(j) + ":read");
    written += storage(r, "optnode-ssd" + std::to_string(j) + ":write");
  }
  CHECK(read == doctest::Approx(params * 9).scale(0));  // the other three quarters of 12 B/param
  CHECK(written == doctest::Approx(params * 9).scale(0));
}

TEST_CASE("luwu: the update pipelines behind backward, only the last layer's update is exposed") {
  auto topo = star(4);
  auto hw = sim::hardware_of(topo);
  const double p = 30e6;
  auto trace = synthetic_trace(8, 30'000'000, 30e12);  // compute per layer far above an update
  auto r = sim::simulate_system(trace, topo, hw, *make_system("luwu"), {});
  auto t = models::cpu_optimizer_step_times(*hw.optimizer_node, p, models::adam_mixed_precision_cost(), {1, 0, 0});
  double one_update = std::max(t.dram_s, t.compute_s);
  // Exposed: the last gradient's way to the node and its layer's update, not all eight updates.
  CHECK(r.breakdown.exposed_optimizer_s >= one_update);
  CHECK(r.breakdown.exposed_optimizer_s < 2 * one_update);
}

TEST_CASE("luwu without an optimizer node is a result that says why, not a crash") {
  topologies::DgxParams d;
  d.servers = 2;
  d.gpus_per_server = 2;
  auto topo = topologies::build_dgx(d);
  auto r = sim::simulate_system(synthetic_trace(2, 1'000'000, 1e12), topo, sim::hardware_of(topo),
                                *make_system("luwu"), {});
  CHECK_FALSE(r.feasible);
  CHECK(r.reason.find("optimizer node") != std::string::npos);
}

TEST_CASE("zero-infinity: per worker, NVMe and PCIe traffic follow from its state layout") {
  const int n = 4, layers = 6;
  const double p = 40e6, params = layers * p;
  auto topo = star(n);
  auto hw = sim::hardware_of(topo);
  auto trace = synthetic_trace(layers, 40'000'000, 2e12);
  auto r = sim::simulate_system(trace, topo, hw, *make_system("zero-infinity"), {});
  REQUIRE(r.feasible);
  for (int w = 0; w < n; ++w) {
    const std::string nvme = "nvme" + std::to_string(w) + "-0";
    // Reads: the fp16 parameter shard for forward and again for backward (2 x 2P/N), and the
    // fp32 master, m, v of the shard (12P/N).  Writes: the state and the fp16 parameters (14P/N).
    CHECK(storage(r, nvme + ":read") == doctest::Approx(2 * 2 * params / n + 12 * params / n).scale(0));
    CHECK(storage(r, nvme + ":write") == doctest::Approx(14 * params / n).scale(0));
    // PCIe between the host and the GPU: the parameter shards up, the gradient shard down.
    const std::string pcie = "pcie" + std::to_string(w) + "-0--cpu" + std::to_string(w);
    CHECK(link_bytes(r, pcie + "_DOWN") == doctest::Approx(2 * 2 * params / n).scale(0));
    CHECK(link_bytes(r, pcie + "_UP") == doctest::Approx(2 * params / n).scale(0));
  }
  // The optimizer step streams 26P/N bytes through each worker's one NVMe: at least its writes.
  CHECK(r.breakdown.exposed_optimizer_s >= 14 * params / n / hw.worker_host.ssds->write_Bps());
}

TEST_CASE("zero-infinity with offload dram touches no NVMe") {
  auto topo = star(2);
  auto r = sim::simulate_system(synthetic_trace(4, 10'000'000, 1e12), topo, sim::hardware_of(topo),
                                *make_system("zero-infinity", {{"offload", "dram"}}), {});
  REQUIRE(r.feasible);
  CHECK(r.storage_bytes.empty());
}

TEST_CASE("luwu: the gpu update engine moves each layer's state over PCIe, so its exposed update follows") {
  auto topo = star(4);
  auto hw = sim::hardware_of(topo);
  const double p = 30e6;
  auto trace = synthetic_trace(8, 30'000'000, 30e12);
  auto r = sim::simulate_system(trace, topo, hw, *make_system("luwu", {{"update_engine", "gpu"}}), {});
  // The engine's default profiles (sim/systems/luwu/luwu.hpp).
  auto gpu = models::gpu_from_profile(models::find_profile("a100-40gb-pcie"));
  auto pcie = models::pcie_from_profile(models::find_profile("pcie-gen4-x16"));
  double one_update = models::gpu_update_times(p, models::adam_mixed_precision_cost(), gpu, pcie).total_s;
  // As with the CPU: only the last layer's update is exposed, now at the PCIe-bound rate.
  CHECK(r.breakdown.exposed_optimizer_s >= one_update);
  CHECK(r.breakdown.exposed_optimizer_s < 2 * one_update);
}

TEST_CASE("luwu: an update engine profile that does not exist is an error at its JSON path") {
  luwu::Json j = luwu::Json::parse(R"({"name": "luwu", "update_engine": "gpu", "update_gpu": "a100-4gb"})");
  CHECK_THROWS_WITH_AS(sim::system_from_json(luwu::JsonNode(j, "s.json", "$.systems[0]")),
                       doctest::Contains("$.systems[0].update_gpu"), luwu::InputError);
}

TEST_CASE("zero-infinity in fp32: the optimizer streams parameter, m and v (12 B/param) and writes no 16-bit copy") {
  const int n = 4, layers = 6;
  const double p = 40e6, params = layers * p;
  auto topo = star(n);
  auto trace = synthetic_trace(layers, 40'000'000, 2e12);
  trace.training.dtype = workloads::DType::Fp32;
  for (auto& op : trace.ops) {
    op.param_bytes *= 2;
    op.grad_bytes *= 2;
  }
  auto r = sim::simulate_system(trace, topo, sim::hardware_of(topo), *make_system("zero-infinity"), {});
  REQUIRE(r.feasible);
  for (int w = 0; w < n; ++w) {
    const std::string nvme = "nvme" + std::to_string(w) + "-0";
    // Reads: the 4 B parameter shard for forward and backward, then parameter, m and v.
    CHECK(storage(r, nvme + ":read") == doctest::Approx(2 * 4 * params / n + 12 * params / n).scale(0));
    // Writes: parameter, m and v; the fp32 parameter is the master, there is no second copy.
    CHECK(storage(r, nvme + ":write") == doctest::Approx(12 * params / n).scale(0));
  }
}

TEST_CASE("luwu with checkpoints on the host moves each block's checkpoint over the worker's PCIe and back") {
  const int n = 2;
  auto topo = star(n);
  auto hw = sim::hardware_of(topo);
  workloads::TrainingConfig tc;
  tc.seq_len = 512;
  tc.recompute = true;
  auto trace = workloads::generate_trace(*workloads::find_catalog_model("gpt3-125m"), tc);
  double checkpoints = 0;
  for (const auto& layer : trace.layers)
    if (layer.kind == workloads::LayerKind::Transformer) checkpoints += static_cast<double>(layer.checkpoint_bytes);
  REQUIRE(checkpoints > 0);
  auto kept = sim::simulate_system(trace, topo, hw, *make_system("luwu"), {});
  auto offloaded = sim::simulate_system(trace, topo, hw, *make_system("luwu", {{"offload_activation_checkpoints", true}}), {});
  REQUIRE(kept.feasible);
  REQUIRE(offloaded.feasible);
  for (int w = 0; w < n; ++w) {
    const std::string pcie = "pcie" + std::to_string(w) + "-0--cpu" + std::to_string(w);
    CHECK(link_bytes(kept, pcie + "_UP") == 0);
    CHECK(link_bytes(kept, pcie + "_DOWN") == 0);
    CHECK(link_bytes(offloaded, pcie + "_UP") == doctest::Approx(checkpoints).scale(0));
    CHECK(link_bytes(offloaded, pcie + "_DOWN") == doctest::Approx(checkpoints).scale(0));
  }
  CHECK(offloaded.iteration_time_s >= kept.iteration_time_s);
}
