// LuWu and ZeRO-Infinity against their data-movement closed forms (systems.md): what crosses the
// optimizer node's link, each worker's PCIe and each worker's NVMe in one step.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>

#include "common/units.hpp"

#include "models/gpu_update_engine.hpp"
#include "models/host.hpp"
#include "sim/experiment/simulate.hpp"
#include "sim/systems/luwu/luwu.hpp"
#include "sim/systems/zero_infinity/zero_infinity.hpp"
#include "tests/sim/sim_test_support.hpp"
#include "topologies/builders.hpp"

using namespace luwu;
using namespace sim_test;

namespace {

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
  // Up: one aggregated gradient per micro-batch, 16-bit integers (the paper's requirement table:
  // 100 Gb/s of aggregated gradients is 6.25e9 of them per second).
  CHECK(link_bytes(r, "optnode-nic0--switch_DOWN") == doctest::Approx(micro_batches * params * 2).scale(0));
  // Every worker receives the same parameters and sends its own gradient.
  CHECK(r.received_bytes_per_worker == doctest::Approx(micro_batches * 2 * params * 2).scale(0));
  CHECK(r.sent_bytes_per_worker == doctest::Approx(micro_batches * params * 2).scale(0));
}

TEST_CASE("luwu on a GPU that holds one layer streams none ahead: the schedule of prefetch_layers 0") {
  const int n = 2;
  auto topo = star(n);
  auto hw = sim::hardware_of(topo);
  auto trace = synthetic_trace(6, 20'000'000, 1e12);
  const auto luwu = make_system("luwu");
  const auto two = luwu->memory_footprint(trace, n, 1e12);  // 2 layers in flight
  const auto ahead = [&](const sim::Hardware& h, const luwu::Json& settings) {
    auto r = sim::simulate_system(trace, topo, h, *make_system("luwu", settings), {});
    REQUIRE(r.feasible);
    return r.iteration_time_s;
  };
  auto small = hw;
  small.gpu.hbm_bytes = static_cast<double>(two.gpu_total_bytes()) - 1;
  CHECK(sim::luwu_layers_ahead(sim::LuwuSettings{}, trace, n, small.gpu.hbm_bytes) == 0);
  // The node then waits for every worker to be done with a layer before it sends the next one.
  CHECK(ahead(small, luwu::Json::object()) == ahead(hw, {{"prefetch_layers", 0}}));
  CHECK(ahead(small, luwu::Json::object()) > ahead(hw, luwu::Json::object()));
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
    undisturbed += gemm_s(hw.gpu, op.flops, 2048.0, trace.model.hidden, trace.model.hidden);
  CHECK(a.breakdown.compute_s == doctest::Approx(undisturbed).epsilon(1e-9).scale(0));
  CHECK(b.iteration_time_s == doctest::Approx(a.iteration_time_s).epsilon(1e-12).scale(0));
}

TEST_CASE("luwu dram-first: state beyond the optimizer node's DRAM streams from its SSDs and back, once per step") {
  auto topo = star(2);
  auto hw = sim::hardware_of(topo);
  const double params = 8 * 50e6;
  // Usable DRAM: the fp16 parameters (2 B/param) and a quarter of the 12 B/param state.
  auto settings = make_system("luwu", {{"node_storage", "dram-first"},
                                       {"optimizer_node_dram_share", params * (2 + 3) / hw.optimizer_node->dram.capacity_bytes}});
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

TEST_CASE("luwu out of core: the node reads each layer's parameters from SSD for every use and writes them back with the state") {
  // The paper's optimizer node, per parameter: forward reads the 2-byte parameter from SSD;
  // backward reads it again and the 12 bytes of state, and writes 12 + 2 bytes back.  The
  // synthetic trace uses each layer's parameters twice (forward and backward).
  auto topo = star(2);
  auto hw = sim::hardware_of(topo);
  const double params = 8 * 50e6;
  auto trace = synthetic_trace(8, 50'000'000, 1e12);
  auto r = sim::simulate_system(trace, topo, hw, *make_system("luwu"), {});
  REQUIRE(r.feasible);
  double read = 0, written = 0;
  for (int j = 0; j < 4; ++j) {
    read += storage(r, "optnode-ssd" + std::to_string(j) + ":read");
    written += storage(r, "optnode-ssd" + std::to_string(j) + ":write");
  }
  CHECK(read == doctest::Approx(params * (2 * 2 + 12)).scale(0));
  CHECK(written == doctest::Approx(params * (12 + 2)).scale(0));
  // The same model kept in DRAM touches no SSD and is no slower.
  auto dram = sim::simulate_system(trace, topo, hw, *make_system("luwu", {{"node_storage", "dram-first"}}), {});
  CHECK(dram.storage_bytes.empty());
  CHECK(dram.iteration_time_s <= r.iteration_time_s);
  CHECK(system_settings_error("luwu", {{"optimizer_node_dram_share", 0.5}}).find("$.systems[0].optimizer_node_dram_share") !=
        std::string::npos);
  CHECK(system_settings_error("luwu", {{"node_storage", "ssd"}}).find("$.systems[0].node_storage") != std::string::npos);
}

TEST_CASE("luwu dram-first: the update pipelines behind backward, only the last layer's update is exposed") {
  auto topo = star(4);
  auto hw = sim::hardware_of(topo);
  const double p = 30e6;
  auto trace = synthetic_trace(8, 30'000'000, 30e12);  // compute per layer far above an update
  // The model in the node's DRAM: the update alone, no SSD traffic after it.
  auto r = sim::simulate_system(trace, topo, hw, *make_system("luwu", {{"node_storage", "dram-first"}}), {});
  // LuWu's node moves the update's read + written bytes over its memory bus at the DRAM rate
  // (schedule.cpp): no write-allocate or inter-socket term there, so none in the bound either.
  models::HostSpec node = *hw.optimizer_node;
  node.cpu.optimizer_write_allocate = 0;
  node.cpu.numa_remote_fraction = 0;
  auto t = models::cpu_optimizer_step_times(node, p, models::adam_mixed_precision_cost(), {1, 0, 0});
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
  // Per layer, parameters are fetched for forward and again for backward.  With DeepSpeed's
  // defaults, a model of 2.4e8 parameters is within max_reuse_distance (1e9) of its backward, so
  // each layer is fetched once (the synthetic trace names no sub-modules: a layer is one).  Kept
  // for backward, each of the 6 holds one of the parameter swapper's buffers: 6, not the default 5.
  sim::SystemResult r;
  for (const auto& [settings, fetches] : {std::pair{luwu::Json{{"param_fetch", "layer"}}, 2.0},
                                          std::pair{luwu::Json{{"param_buffer_count", 6}}, 1.0}}) {
    CAPTURE(fetches);
    r = sim::simulate_system(trace, topo, hw, *make_system("zero-infinity", settings), {});
    REQUIRE(r.feasible);
    for (int w = 0; w < n; ++w) {
      const std::string nvme = "nvme" + std::to_string(w) + "-0";
      // Reads: the fp16 parameter shard (2P/N) per fetch, and the fp32 master, m, v and gradient
      // of the shard (16P/N).  Writes: the fp32 gradient in backward (4P/N), the state and the
      // fp16 parameters (14P/N).
      CHECK(storage(r, nvme + ":read") == doctest::Approx(fetches * 2 * params / n + 16 * params / n).scale(0));
      CHECK(storage(r, nvme + ":write") == doctest::Approx(18 * params / n).scale(0));
      // PCIe between the host and the GPU.  To the GPU: the parameter shard per fetch (2P/N) and
      // each gradient partition coming back from the host's grad_partitions_flat_buffer (2P/N).
      // To the host: that partition (2P/N) and then the shard as fp32 (4P/N), stage3.py
      // partition_grads with the optimizer offloaded.
      const std::string pcie = "pcie" + std::to_string(w) + "-0--cpu" + std::to_string(w);
      CHECK(link_bytes(r, pcie + "_DOWN") == doctest::Approx(fetches * 2 * params / n + 2 * params / n).scale(0));
      CHECK(link_bytes(r, pcie + "_UP") == doctest::Approx((2 + 4) * params / n).scale(0));
    }
  }
  // The optimizer step streams 30P/N bytes (16 read, 14 written) through each worker's one NVMe: at least its writes.
  CHECK(r.breakdown.exposed_optimizer_s >= 14 * params / n / hw.worker_host.ssds->write_Bps());
}

TEST_CASE("zero-infinity: parameter shards under the swapper's min_aio_bytes stay in host memory") {
  // 6 layers of 2M parameters on 4 workers: 500,000-element shards, 1 MB in bf16, under 1 MiB, so
  // DeepSpeed keeps them in host memory (swappable_tensor): the NVMe reads only the optimizer
  // step's 16 B per parameter of the shard; of 2.2M parameters per layer, 550,000-element shards swap.
  const int n = 4, layers = 6;
  auto topo = star(n);
  for (const auto& [p, swapped] : {std::pair{2'000'000.0, false}, std::pair{2'200'000.0, true}}) {
    CAPTURE(p);
    auto trace = synthetic_trace(layers, static_cast<std::uint64_t>(p), 2e10);
    auto r = sim::simulate_system(trace, topo, sim::hardware_of(topo),
                                  *make_system("zero-infinity", {{"param_buffer_count", 6}}), {});
    REQUIRE(r.feasible);
    const double params = layers * p;
    CHECK(storage(r, "nvme0-0:read") == doctest::Approx((swapped ? 2 : 0) * params / n + 16 * params / n).scale(0));
  }
}

TEST_CASE("zero-infinity: each micro-step's gradient partition goes to the host and back, the fp32 copy once per iteration") {
  // stage3.py partition_grads with the optimizer offloaded: every micro-step moves the 16-bit
  // partition into grad_partitions_flat_buffer and back (2P/N each way); at the accumulation
  // boundary only, the fp32 shard goes to the host (4P/N).  Per layer fetches: forward and backward.
  const int n = 2, layers = 3, m = 2;
  const double p = 20e6, params = layers * p;
  auto topo = star(n);
  auto trace = synthetic_trace(layers, 20'000'000, 1e12, m);
  auto r = sim::simulate_system(trace, topo, sim::hardware_of(topo),
                                *make_system("zero-infinity", {{"offload", "dram"}, {"param_fetch", "layer"}}), {});
  REQUIRE(r.feasible);
  const std::string pcie = "pcie0-0--cpu0";
  CHECK(link_bytes(r, pcie + "_DOWN") == doctest::Approx(m * 2 * 2 * params / n + m * 2 * params / n).scale(0));
  CHECK(link_bytes(r, pcie + "_UP") == doctest::Approx(m * 2 * params / n + 4 * params / n).scale(0));
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
  auto r = sim::simulate_system(trace, topo, hw, *make_system("luwu", {{"update_engine", "gpu"}, {"node_storage", "dram-first"}}), {});
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
  auto r = sim::simulate_system(trace, topo, sim::hardware_of(topo),
                                *make_system("zero-infinity", {{"param_fetch", "layer"}}), {});
  REQUIRE(r.feasible);
  for (int w = 0; w < n; ++w) {
    const std::string nvme = "nvme" + std::to_string(w) + "-0";
    // Reads: the 4 B parameter shard for forward and backward, then parameter, m, v and gradient.
    CHECK(storage(r, nvme + ":read") == doctest::Approx(2 * 4 * params / n + 16 * params / n).scale(0));
    // Writes: the gradient in backward, then parameter, m and v; the fp32 parameter is the master,
    // there is no second copy.
    CHECK(storage(r, nvme + ":write") == doctest::Approx(16 * params / n).scale(0));
  }
}

// GPT-3 125M, one sequence of 512 tokens, recompute on: 12 block checkpoints.
workloads::Trace gpt3_125m_recompute(int micro_batch = 1) {
  workloads::TrainingConfig tc;
  tc.seq_len = 512;
  tc.micro_batch = micro_batch;
  tc.recompute = true;
  return workloads::generate_trace(*workloads::find_catalog_model("gpt3-125m"), tc);
}

TEST_CASE("luwu with checkpoints on the host moves each block's checkpoint over the worker's PCIe and back") {
  const int n = 2;
  auto topo = star(n);
  auto hw = sim::hardware_of(topo);
  auto trace = gpt3_125m_recompute();
  double checkpoints = 0;
  for (const auto& layer : trace.layers)
    if (layer.kind == workloads::LayerKind::Transformer) checkpoints += static_cast<double>(layer.checkpoint_bytes);
  REQUIRE(checkpoints > 0);
  // The model in the node's DRAM, so that the iteration follows the workers, not the node's SSDs.
  auto kept = sim::simulate_system(trace, topo, hw, *make_system("luwu", {{"node_storage", "dram-first"}}), {});
  auto offloaded = sim::simulate_system(
      trace, topo, hw, *make_system("luwu", {{"node_storage", "dram-first"}, {"offload_activation_checkpoints", true}}), {});
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

// ---- ZeRO-Infinity's swapper as DeepSpeed 0.9.3 runs it ----

TEST_CASE("zero-infinity: pipeline_read / pipeline_write map onto the swapper's order, aio onto the SSD rate") {
  models::SsdArray pm1733{models::SsdSpec{7.0e9, 3.8e9, 3.84e12, 90e-6}, 2};
  auto policy = [&](bool read, bool write) {
    sim::SwapperSettings s;
    s.pipeline_read = read, s.pipeline_write = write;
    return sim::swapper_policy(s, pm1733);
  };
  // DeepSpeed's default, both off: read, update, write back one sub-group, then the next.
  auto serial = policy(false, false);
  CHECK(serial.read_ahead == 0);
  CHECK(serial.write_buffers == 1);
  CHECK(serial.serial_writes);
  CHECK(policy(true, false).read_ahead == 1);
  CHECK(policy(true, false).write_buffers == 1);
  CHECK(policy(false, true).read_ahead == 0);
  CHECK(policy(false, true).write_buffers == 2);
  // 1 MiB x 8 over 2 devices, 4 each: 4 MiB / 239.80 us = 17.49 GB/s > 7 per device, so unbound.
  CHECK(serial.read_rate_cap_Bps == doctest::Approx(14e9).scale(0));
  CHECK(serial.write_rate_cap_Bps == doctest::Approx(7.6e9).scale(0));
  // 64 KiB at depth 2, one request per device: 65536 / (90 + 9.362 us) = 0.65956 GB/s each.
  sim::SwapperSettings small;
  small.aio_block_size_bytes = 65536, small.aio_queue_depth = 2;
  CHECK(sim::swapper_policy(small, pm1733).read_rate_cap_Bps == doctest::Approx(2 * 0.659566e9).epsilon(1e-5));
}

namespace {

// Workers whose one SSD reads at 12 GB/s and writes at 2.8 GB/s, the two directions not sharing
// (14.8 GB/s together) and no access latency, so that overlapped reads and writes add up by hand.
topologies::Topology star_with_toy_ssd(int workers, int ssds_per_worker = 1) {
  models::Profile toy = models::find_profile("samsung-pm1733");
  toy.name = "toy-ssd";
  models::apply_override(toy, "read_bandwidth", 12e9, "test");
  models::apply_override(toy, "write_bandwidth", 2.8e9, "test");
  models::apply_override(toy, "read_write_bandwidth", 14.8e9, "test");
  models::apply_override(toy, "latency", 0, "test");
  models::ProfileCatalog catalog;
  catalog.add(toy);
  topologies::LuwuStarParams p;
  p.workers = workers;
  p.ssd_profile = "toy-ssd";
  p.nvme_per_worker = ssds_per_worker;
  return topologies::build_luwu_star(p, catalog);
}

}  // namespace

TEST_CASE("zero-infinity: 3 sub-groups, serial by default, overlapped as pipeline_read / pipeline_write say") {
  // 2 workers, 3 layers of 20M params: a 30M shard per rank in sub-groups of 10M.
  const int n = 2;
  const double sub_group = 10e6;
  auto topo = star_with_toy_ssd(n);
  auto hw = sim::hardware_of(topo);
  auto trace = synthetic_trace(3, 20'000'000, 1e12);
  const double r = 16 * sub_group / 12e9;   // fp32 master, m, v and gradient in: 13.3 ms
  const double w = 14 * sub_group / 2.8e9;  // and out with the fp16 copy: 50 ms
  const auto t = models::cpu_optimizer_step_times(hw.worker_host, sub_group, deepspeed_offloaded_step_cost(), {0, 0, 1});
  const double u = std::max(t.dram_s, t.compute_s);  // the update and its two passes: DRAM-bound, about 3.5 ms
  REQUIRE(u < r);
  REQUIRE(w > 2 * r);
  auto exposed_optimizer = [&](luwu::Json settings) {
    settings["sub_group_size"] = sub_group;
    auto res = sim::simulate_system(trace, topo, hw, *make_system("zero-infinity", settings), {});
    REQUIRE(res.feasible);
    return res.breakdown.exposed_optimizer_s;
  };
  // Off (DeepSpeed's default): read, update, write back, three times over.
  CHECK(exposed_optimizer(luwu::Json::object()) == doctest::Approx(3 * (r + u + w)).epsilon(1e-6).scale(0));
  // pipeline_read: sub-group k + 1 is read while k updates and writes back; each update still
  // waits for the previous write-back.  Reads after the first hide behind writes (w > r):
  //   R0 = r, U0 = r + u, W0 = r + u + w; U1 = W0 + u, W1 = r + 2u + 2w; U2 = W1 + u, W2 = r + 3u + 3w.
  CHECK(exposed_optimizer({{"pipeline_read", true}}) == doctest::Approx(r + 3 * u + 3 * w).epsilon(1e-6).scale(0));
  // Both: one write-back in flight while the next sub-group reads and updates.  With u < r and
  // w > 2r the writes run back to back after the first read and update: r + u + 3w.
  CHECK(exposed_optimizer({{"pipeline_read", true}, {"pipeline_write", true}}) ==
        doctest::Approx(r + u + 3 * w).epsilon(1e-6).scale(0));
}

TEST_CASE("zero-infinity: nvme_layout split puts the optimizer swapper on half the drives") {
  CHECK(sim::swap_drive_counts(sim::SwapperSettings::NvmeLayout::Striped, 3).params == 3);
  CHECK(sim::swap_drive_counts(sim::SwapperSettings::NvmeLayout::Striped, 3).optimizer == 3);
  CHECK(sim::swap_drive_counts(sim::SwapperSettings::NvmeLayout::Split, 3).params == 1);
  CHECK(sim::swap_drive_counts(sim::SwapperSettings::NvmeLayout::Split, 3).optimizer == 2);
  CHECK(sim::swap_drive_counts(sim::SwapperSettings::NvmeLayout::Split, 1).params == 0);
  // 2 workers with 2 toy SSDs each (12 GB/s read, 2.8 GB/s write, no latency), 3 sub-groups of
  // 10M, DeepSpeed's serial swapper.  Striped, each sub-group reads 16 B and writes 14 B per
  // parameter over both drives; split, the optimizer's drive reads the 16 B and writes the 12 B of
  // state alone while the parameter drive takes the 2 B 16-bit copy beside the state's write.
  const int n = 2;
  const double sub_group = 10e6;
  auto topo = star_with_toy_ssd(n, 2);
  auto hw = sim::hardware_of(topo);
  auto trace = synthetic_trace(3, 20'000'000, 1e12);
  const auto t = models::cpu_optimizer_step_times(hw.worker_host, sub_group, deepspeed_offloaded_step_cost(), {0, 0, 1});
  const double u = std::max(t.dram_s, t.compute_s);
  auto exposed_optimizer = [&](const char* layout) {
    auto res = sim::simulate_system(
        trace, topo, hw, *make_system("zero-infinity", {{"sub_group_size", sub_group}, {"nvme_layout", layout}}), {});
    REQUIRE(res.feasible);
    return res.breakdown.exposed_optimizer_s;
  };
  const double striped = 3 * (16 * sub_group / 24e9 + u + 14 * sub_group / 5.6e9);
  const double split = 3 * (16 * sub_group / 12e9 + u + 12 * sub_group / 2.8e9);
  // Split, the 16-bit copy (2 B per parameter) on the other drive ends before the state's 12 B
  // write-back on this one, so it adds nothing to the step.
  CHECK(exposed_optimizer("striped") == doctest::Approx(striped).epsilon(1e-6).scale(0));
  CHECK(exposed_optimizer("split") == doctest::Approx(split).epsilon(1e-6).scale(0));
  // One drive cannot be split; each half must hold its swapper's files: the parameter drive 2 B
  // per parameter (a 30M shard per rank: 60 MB), the optimizer drive 16 B (480 MB).
  auto one_drive = sim::hardware_of(star_with_toy_ssd(n, 1));
  CHECK(make_system("zero-infinity", {{"nvme_layout", "split"}})->fit(trace, one_drive).problem.find("at least 2 SSDs") !=
        std::string::npos);
  CHECK(make_system("zero-infinity")->fit(trace, one_drive).runs());
  auto small = hw;
  small.worker_host.ssds->device.capacity_bytes = 0.4e9;  // 0.8e9 in all holds the 18 B x 30M = 540 MB striped
  CHECK(make_system("zero-infinity")->fit(trace, small).runs());
  CHECK(make_system("zero-infinity", {{"nvme_layout", "split"}})->fit(trace, small).problem.find("optimizer swapper's SSDs") !=
        std::string::npos);
  small.worker_host.ssds->device.capacity_bytes = 0.5e9;
  CHECK(make_system("zero-infinity", {{"nvme_layout", "split"}})->fit(trace, small).runs());
}

TEST_CASE("zero-infinity: the swappers' pinned buffers count in the worker host's DRAM") {
  // 2 workers, 4 layers of 50M params: a 100M shard per rank, fp16.
  auto topo = star(2);
  auto hw = sim::hardware_of(topo);
  auto trace = synthetic_trace(4, 50'000'000, 1e12);
  // Default sub_group_size 1e9 > shard: the largest sub-group is the 100M shard.  Optimizer swapper:
  // 4 buffers x 100e6 x 4 B = 1.6e9 B; parameter swapper: 5 x 1e8 elements x 2 B = 1e9 B.
  auto nvme = make_system("zero-infinity");
  CHECK(sim::pinned_buffer_bytes(sim::ZeroInfinitySettings{}, trace, 2) == 2'600'000'000ull);
  // Beside them the gradient buffers (stage3.py): the 16-bit partitions, 2 B x 1e8, and one fp32
  // gradient of the largest sub-group (the shard), 4 B x 1e8.  The shard itself is on the NVMe:
  // 2 B parameter, 12 B master, m and v, 4 B fp32 gradient.
  CHECK(nvme->memory_footprint(trace, 2, 40e9).host_bytes_per_worker == 2'600'000'000ull + 600'000'000ull);
  CHECK(nvme->memory_footprint(trace, 2, 40e9).worker_ssd_bytes == 18 * 100'000'000ull);
  hw.worker_host.dram.capacity_bytes = 2.5e9;
  const std::string problem = nvme->fit(trace, hw).problem;
  CHECK(problem.find("pinned buffers") != std::string::npos);
  CHECK(problem.find(units::bytes(3.2e9)) != std::string::npos);
  // Sub-groups of 25M: 4 x 25e6 x 4 B + 1e9 B = 1.4e9 B, and 0.2e9 + 4 B x 25e6 of gradients,
  // 1.7e9 B in all, which fits; so do fewer buffers.
  CHECK(make_system("zero-infinity", {{"sub_group_size", 25e6}})->fit(trace, hw).runs());
  // 2 optimizer buffers: 0.8e9 + 1e9 + 0.6e9 B fits; parameter buffers of 2e8 elements:
  // 1.6e9 + 2e9 + 0.6e9 B does not.
  CHECK(make_system("zero-infinity", {{"optimizer_buffer_count", 2}})->fit(trace, hw).runs());
  CHECK_FALSE(make_system("zero-infinity", {{"param_buffer_size", 2e8}})->fit(trace, hw).runs());
  // The NVMe must hold those 18 B per parameter, not only the 14 B of parameter and optimizer state.
  auto small_ssds = sim::hardware_of(topo);
  REQUIRE(small_ssds.worker_host.ssds);
  small_ssds.worker_host.ssds->device.capacity_bytes = 1.6e9 / small_ssds.worker_host.ssds->count;
  CHECK(nvme->fit(trace, small_ssds).problem.find("a worker server's NVMe") != std::string::npos);
  small_ssds.worker_host.ssds->device.capacity_bytes = 1.8e9 / small_ssds.worker_host.ssds->count;
  CHECK(nvme->fit(trace, small_ssds).runs());
  // Offloaded to DRAM there is no swapper: no pinned buffers; the shard in DRAM is the ZeRO-Infinity
  // paper's 20 B per parameter: 2 B parameter, 12 B optimizer state, the 2 B gradient partition
  // and each sub-group's 4 B fp32 gradient.
  CHECK(make_system("zero-infinity", {{"offload", "dram"}})->memory_footprint(trace, 2, 40e9).host_bytes_per_worker ==
        20 * 100'000'000ull);
  CHECK(make_system("zero-infinity", {{"offload", "dram"}})->memory_footprint(trace, 2, 40e9).worker_ssd_bytes == 0);
}

TEST_CASE("zero-infinity: a parameter shard must fit one of the swapper's buffers, and the buffers held at once must exist") {
  // DeepSpeed 0.9.3's parameter swapper (partitioned_param_swapper.py): get_buffer asserts a
  // shard has fewer elements than buffer_size (deepspeedai/DeepSpeed issue 3506), swap_in that a
  // buffer is free (issue 3062).  4 layers of 300M parameters on 2 workers: 150M-element shards.
  auto hw = sim::hardware_of(star(2));
  hw.worker_host.dram.capacity_bytes = 1e12;
  REQUIRE(hw.worker_host.ssds);
  hw.worker_host.ssds->device.capacity_bytes = 1e12;
  auto trace = synthetic_trace(4, 300'000'000, 1e12);
  const std::string problem = make_system("zero-infinity")->fit(trace, hw).problem;
  CHECK(problem.find("150000000 elements") != std::string::npos);
  CHECK(problem.find("param_buffer_size 100000000") != std::string::npos);
  CHECK_FALSE(make_system("zero-infinity", {{"param_buffer_size", 150'000'000}})->fit(trace, hw).runs());
  CHECK(make_system("zero-infinity", {{"param_buffer_size", 150'000'001}})->fit(trace, hw).runs());
  CHECK(make_system("zero-infinity", {{"param_buffer_size", "fit"}})->fit(trace, hw).runs());
  CHECK(make_system("zero-infinity", {{"offload", "dram"}})->fit(trace, hw).runs());  // no swapper
  // "fit": 5 buffers of 150M + 1 elements x 2 B, beside the optimizer swapper's 4 x 600M x 4 B.
  sim::ZeroInfinitySettings fit;
  fit.swapper.param_buffer_fits_shard = true;
  CHECK(sim::param_buffer_elements(fit, trace, 2) == 150'000'001ull);
  CHECK(sim::pinned_buffer_bytes(fit, trace, 2) == 4 * 600'000'000ull * 4 + 5 * 150'000'001ull * 2);

  // A sub-module kept for its reuse holds its buffer (param_fetch_plan_test): A and B of 40M, one
  // buffer, two needed at once.
  auto small = synthetic_trace(1, 80'000'000, 3e9);
  workloads::Kernel a = small.kernel_lists[0][0], act = a, b = a;
  a.params = b.params = 40'000'000;
  act.parameterless_modules = 1;
  small.kernel_lists = {{a, act, b}};
  const std::string count = make_system("zero-infinity", {{"param_buffer_count", 1}})->fit(small, hw).problem;
  CHECK(count.find("needs 2 pinned buffers") != std::string::npos);
  CHECK(count.find("param_buffer_count is 1") != std::string::npos);
  CHECK(make_system("zero-infinity", {{"param_buffer_count", 2}})->fit(small, hw).runs());
  // "fit": from DeepSpeed's 5 up to what is held at once.  Six layers of 40M kept for their
  // backward (within max_reuse_distance) hold 6; two sub-modules never more than 5.
  auto six = synthetic_trace(6, 40'000'000, 2e12);
  sim::ZeroInfinitySettings count_fit;
  count_fit.swapper.param_buffer_count_fits = true;
  CHECK(sim::swapper_fetch_settings(count_fit, six, 4).nvme_param_buffers == 6);
  CHECK(sim::swapper_fetch_settings(count_fit, small, 2).nvme_param_buffers == 5);
  CHECK_FALSE(make_system("zero-infinity")->fit(six, hw).runs());
  CHECK(make_system("zero-infinity", {{"param_buffer_count", "fit"}})->fit(six, hw).runs());
  // Its pinned bytes count the 6 buffers: 6 x 1e8 elements x 2 B beside the optimizer's 4 x 60M x 4 B.
  CHECK(sim::pinned_buffer_bytes(count_fit, six, 4) == 4 * 60'000'000ull * 4 + 6 * 100'000'000ull * 2);

  // A shard swaps when it reaches min_aio_bytes = max(1 MiB, aio block): 524,288 bf16 elements, so
  // on 4 workers a sub-module of more than 524,287 x 4 parameters; with 4 MiB blocks 2,097,152.
  sim::ZeroInfinitySettings zi;
  CHECK(sim::swapper_fetch_settings(zi, trace, 4).nvme_min_swapped_params == 524'287ull * 4 + 1);
  CHECK(sim::swapper_fetch_settings(zi, trace, 4).nvme_param_buffers == 5);
  zi.swapper.aio_block_size_bytes = 4 * 1048576;
  CHECK(sim::swapper_fetch_settings(zi, trace, 4).nvme_min_swapped_params == 2'097'151ull * 4 + 1);
  zi.offload = sim::ZeroInfinitySettings::Tier::Dram;
  CHECK(sim::swapper_fetch_settings(zi, trace, 4).nvme_param_buffers == 0);
}

TEST_CASE("zero-infinity's swapper settings: defaults, the old name of sub_group_size, bounds at their JSON path") {
  auto parse_error = [](luwu::Json settings) -> std::string {
    try {
      make_system("zero-infinity", settings);
    } catch (const luwu::InputError& e) {
      return e.what();
    }
    return "";
  };
  // optimizer_chunk_params still loads (old scenario files), as the same setting.
  auto trace = synthetic_trace(4, 50'000'000, 1e12);
  CHECK(make_system("zero-infinity", {{"optimizer_chunk_params", 25e6}})->memory_footprint(trace, 2, 40e9).host_bytes_per_worker ==
        make_system("zero-infinity", {{"sub_group_size", 25e6}})->memory_footprint(trace, 2, 40e9).host_bytes_per_worker);
  CHECK(parse_error({{"optimizer_chunk_params", 25e6}, {"sub_group_size", 25e6}}).find("$.systems[0].optimizer_chunk_params") !=
        std::string::npos);
  CHECK(parse_error({{"sub_group_size", 1e4}}).find("$.systems[0].sub_group_size") != std::string::npos);
  CHECK(parse_error({{"aio_block_size", 100}}).find("$.systems[0].aio_block_size") != std::string::npos);
  CHECK(parse_error({{"aio_queue_depth", 0}}).find("$.systems[0].aio_queue_depth") != std::string::npos);
  CHECK(parse_error({{"pipeline_read", 1}}).find("$.systems[0].pipeline_read") != std::string::npos);
  CHECK(parse_error({{"optimizer_buffer_count", 0}}).find("$.systems[0].optimizer_buffer_count") != std::string::npos);
  CHECK(parse_error({{"param_buffer_size", 1.5}}).find("$.systems[0].param_buffer_size") != std::string::npos);
  CHECK(parse_error({{"param_buffer_size", "auto"}}).find("$.systems[0].param_buffer_size") != std::string::npos);
  CHECK(parse_error({{"param_buffer_size", "fit"}}).empty());
  CHECK(parse_error({{"param_buffer_count", "all"}}).find("$.systems[0].param_buffer_count") != std::string::npos);
  CHECK(parse_error({{"param_buffer_count", "fit"}}).empty());
  CHECK(parse_error({{"aio_queue_depth", 8}, {"aio_block_size", 4096}, {"pipeline_write", true}}).empty());
  CHECK(parse_error({{"nvme_layout", "raid"}}).find("$.systems[0].nvme_layout") != std::string::npos);
  CHECK(parse_error({{"offload", "dram"}, {"nvme_layout", "split"}}).find("$.systems[0].nvme_layout") != std::string::npos);
  CHECK(parse_error({{"nvme_layout", "split"}}).empty());
}

TEST_CASE("checkpoint copies: blocking ones stop the compute stream for each block's copy, as DeepSpeed's do") {
  // GPT-3 125M, 8 x 512 tokens, recompute: 12 checkpoints.  Blocking (DeepSpeed 0.9.3's `.to(cpu)` after
  // each block's forward, `.to(cuda)` when its recompute is due), the forward waits for every copy
  // out, each alone on the GPU's path to its host (nothing else goes up it in forward): at least
  // their sum of I/O stall, where async copies hide behind compute.
  auto topo = star(2);
  auto hw = sim::hardware_of(topo);
  // Micro-batch 8: each block computes longer than its parameters take to arrive, so LuWu's
  // workers, not its multicast, bound the iteration.
  const auto trace = gpt3_125m_recompute(8);
  const Path up = gpu_to_cpu(topo, 0);
  double copies_out_s = 0;
  for (const auto& layer : trace.layers)
    if (layer.kind == workloads::LayerKind::Transformer) copies_out_s += up.time_s(static_cast<double>(layer.checkpoint_bytes));
  auto run = [&](const char* system, const char* copies) {
    Json settings{{"offload_activation_checkpoints", true}};
    if (copies) settings["checkpoint_copies"] = copies;
    if (std::string(system) == "zero-infinity") settings["offload"] = "dram";  // the star's workers have no SSDs
    if (std::string(system) == "luwu") settings["node_storage"] = "dram-first";  // the workers bound it, not the node's SSDs
    auto r = sim::simulate_system(trace, topo, hw, *make_system(system, settings), {});
    REQUIRE(r.feasible);
    return r;
  };
  const auto async = run("luwu", nullptr), blocking = run("luwu", "blocking");
  CHECK(blocking.breakdown.io_stall_s >= copies_out_s * (1 - 1e-9));
  CHECK(async.breakdown.io_stall_s < copies_out_s);
  CHECK(blocking.iteration_time_s > async.iteration_time_s);
  // ZeRO-Infinity copies as DeepSpeed does unless told otherwise.
  const auto zinf = run("zero-infinity", nullptr), zinf_blocking = run("zero-infinity", "blocking");
  CHECK(zinf.iteration_time_s == zinf_blocking.iteration_time_s);
  CHECK(run("zero-infinity", "async").iteration_time_s < zinf.iteration_time_s);
}

namespace {

// By more than the trace's unit (1 us), which rounds start and duration apart.
bool overlap(const TrackSpan& a, const TrackSpan& b) { return a.start_s < b.end_s - 1e-6 && b.start_s < a.end_s - 1e-6; }
bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// ZeRO-Infinity in DRAM on two workers, four layers of long GEMMs (each hides a layer's
// collectives when nothing stops it), with its timeline.
sim::SystemResult zinf_copies(const char* key, const char* mode) {
  auto topo = star(2);
  Json settings{{"offload", "dram"}, {"param_fetch", "layer"}};
  if (mode) settings[key] = mode;
  sim::SimulationOptions options;
  options.record_timeline = true;
  auto r = sim::simulate_system(synthetic_trace(4, 40'000'000, 2e14), topo, sim::hardware_of(topo),
                                *make_system("zero-infinity", settings), options);
  REQUIRE(r.feasible);
  return r;
}

}  // namespace

TEST_CASE("gradient copies: blocking ones keep the GPU from computing while a gradient is reduced and copied, as DeepSpeed 0.9.3's do") {
  // DeepSpeed 0.9.3 with the optimizer offloaded copies each reduced gradient partition into pinned
  // host memory with a synchronous copy_ (stage3.py partition_grads): the host thread, which
  // launches the backward's kernels, waits for the reduce-scatter and the copy.  So no compute
  // overlaps either, and each copy, alone on the GPU's path to its host, is I/O stall.
  auto topo = star(2);
  const Path up = gpu_to_cpu(topo, 0);
  const auto blocking = zinf_copies("gradient_copies", nullptr);  // the default
  const auto compute = track_spans(blocking.timeline, "gpu0", "compute");
  const auto collectives = track_spans(blocking.timeline, "gpu0", "collectives");
  const auto copies = track_spans(blocking.timeline, "gpu0", "offload to host (pcie)");
  double copies_s = 0;
  int reductions = 0;
  for (const auto& c : copies) {
    REQUIRE(starts_with(c.name, "gradient shard to host"));
    // A layer of 4e7 parameters, of 2: its 16-bit partition to the host and back, then its fp32
    // shard to the host, one after the other on one stream (the path is the same both ways).
    copies_s += 2 * up.time_s(2.0 * 40e6 / 2) + up.time_s(4.0 * 40e6 / 2);
  }
  for (const auto& k : compute) {
    if (k.category != "compute") continue;
    for (const auto& c : copies) CHECK_FALSE(overlap(k, c));
    for (const auto& c : collectives)
      if (starts_with(c.name, "reduce-scatter")) {
        CHECK_FALSE(overlap(k, c));
        ++reductions;
      }
  }
  CHECK(copies.size() == 4);
  CHECK(reductions > 0);
  CHECK(blocking.breakdown.io_stall_s >= copies_s * (1 - 1e-9));

  // On their own stream, the reduce-scatters run beside the next layer's GEMMs.
  const auto async = zinf_copies("gradient_copies", "async");
  bool overlapped = false;
  for (const auto& k : track_spans(async.timeline, "gpu0", "compute"))
    for (const auto& c : track_spans(async.timeline, "gpu0", "collectives"))
      overlapped |= k.category == "compute" && starts_with(c.name, "reduce-scatter") && overlap(k, c);
  CHECK(overlapped);
  CHECK(async.iteration_time_s < blocking.iteration_time_s);
  CHECK(system_settings_error("zero-infinity", {{"gradient_copies", "sync"}}).find("$.systems[0].gradient_copies") !=
        std::string::npos);
}

TEST_CASE("shard copies: blocking ones copy each parameter shard to the GPU only after the all-gather before it, as DeepSpeed 0.9.3's do") {
  // DeepSpeed 0.9.3 copies an offloaded shard to the GPU with a synchronous .to() on the all-gather
  // stream (partition_parameters.py all_gather_coalesced), behind the gathers issued before it, and
  // launches the shard's all-gather after the copy.
  auto shard_copies_after_gathers = [](const sim::SystemResult& r) {
    const auto fetches = track_spans(r.timeline, "gpu0", "param fetch (pcie)");
    std::vector<TrackSpan> gathers;
    for (const auto& c : track_spans(r.timeline, "gpu0", "collectives"))
      if (starts_with(c.name, "all-gather")) gathers.push_back(c);
    REQUIRE(fetches.size() == gathers.size());
    REQUIRE(fetches.size() == 8);  // four layers, each gathered for forward and for backward
    const double tick_s = 1e-6;  // the trace's unit, which rounds start and duration apart
    int after = 0;
    for (std::size_t k = 1; k < fetches.size(); ++k) {
      CHECK(gathers[k].start_s >= fetches[k].end_s - tick_s);  // a gather follows its shard's copy either way
      after += fetches[k].start_s >= gathers[k - 1].end_s - tick_s;
    }
    return after;
  };
  // The .to() is synchronous: the host thread that issued the copy launches nothing until the
  // shard is on the GPU, so the kernel of the layer whose turn issued the next gather (layer
  // policy, one ahead: gather k + 1 at op k) starts after that gather's copy.
  auto kernels_after_next_copy = [](const sim::SystemResult& r) {
    const auto fetches = track_spans(r.timeline, "gpu0", "param fetch (pcie)");
    std::vector<TrackSpan> kernels;
    int host_blocked = 0;
    for (const auto& c : track_spans(r.timeline, "gpu0", "compute")) {
      if (c.category == "compute") kernels.push_back(c);
      host_blocked += c.name.find("host blocked in the synchronous copy") != std::string::npos;
    }
    REQUIRE(kernels.size() == 8);
    REQUIRE(fetches.size() == 8);
    int after = 0;
    for (std::size_t k = 0; k + 1 < kernels.size(); ++k) after += kernels[k].start_s >= fetches[k + 1].end_s - 1e-6;
    return std::pair{after, host_blocked};
  };
  const auto blocking = zinf_copies("shard_copies", nullptr);  // the default
  CHECK(shard_copies_after_gathers(blocking) == 7);
  CHECK(kernels_after_next_copy(blocking).first == 7);
  CHECK(kernels_after_next_copy(blocking).second == 8);  // the host waits for every shard's copy
  const auto async = zinf_copies("shard_copies", "async");
  CHECK(shard_copies_after_gathers(async) < 7);
  CHECK(kernels_after_next_copy(async).second == 0);  // copied ahead: the host never waits for a copy
  CHECK(system_settings_error("zero-infinity", {{"shard_copies", 1}}).find("$.systems[0].shard_copies") != std::string::npos);
}

TEST_CASE("parameter swap-ins: a shard still in flight waits for every read pending, as DeepSpeed 0.9.3's swapper does") {
  // partition_parameters.py _ensure_availability_of_partitioned_params: a shard whose read is in
  // flight makes the host call the swapper's synchronize_reads, one aio wait for every read
  // pending, the ones issued ahead for later gathers too; a shard not read yet is read
  // synchronously, which waits the same way.  A copy whose shard was still in flight therefore
  // waits for reads issued ahead of it for later gathers.
  auto topo = star(2);
  sim::SimulationOptions options;
  options.record_timeline = true;
  // GPT-3 125M's sub-modules differ in size, so the swapper reads more than one ahead (up to twice
  // the elements in flight); each sub-module is prefetched alone and released after its use.
  const Json settings{{"param_buffer_count", "fit"}, {"prefetch_bucket_size", 1e6}, {"max_reuse_distance", 1}};
  // Drives 50 times slower than the profile's, so that reads are still in flight at the copies.
  auto hw = sim::hardware_of(topo);
  hw.worker_host.ssds->device.read_Bps /= 50;
  auto r = sim::simulate_system(gpt3_125m_trace(), topo, hw, *make_system("zero-infinity", settings), options);
  REQUIRE(r.feasible);
  const auto reads = track_spans(r.timeline, "gpu0", "param swap-in (nvme)");
  const auto copies = track_spans(r.timeline, "gpu0", "param fetch (pcie)");
  auto shard_of = [](const std::string& name, const std::string& prefix) { return name.substr(prefix.size()); };
  std::map<std::string, std::size_t> gather_of;  // a gather's label -> its copy's place
  for (std::size_t k = 0; k < copies.size(); ++k) gather_of.emplace(shard_of(copies[k].name, "shard to gpu "), k);
  REQUIRE(reads.size() >= 30);  // the small shards stay in host memory: no read
  const double tick_s = 1e-6;  // the trace's unit
  int behind_a_later_read = 0;
  for (std::size_t k = 0; k < copies.size(); ++k) {
    const std::string shard = shard_of(copies[k].name, "shard to gpu ");
    for (const auto& r : reads) {
      const std::string read_shard = shard_of(r.name, "param swap-in ");
      if (read_shard == shard) CHECK(copies[k].start_s >= r.end_s - tick_s);  // its own read first
      // A copy that waited for the read of a later gather, issued ahead of it.
      behind_a_later_read += gather_of.at(read_shard) > k && std::abs(copies[k].start_s - r.end_s) <= tick_s;
    }
  }
  CHECK(behind_a_later_read >= 1);
}
