#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>

#include "sim/systems/memory_footprint.hpp"
#include "sim/systems/registry.hpp"
#include "workloads/model_catalog.hpp"

using namespace luwu;
using namespace luwu::workloads;
using sim::MemoryFootprint;

namespace {

Trace gpt3_175b_trace(bool recompute) {
  TrainingConfig t;
  t.micro_batch = 16;
  t.seq_len = 2048;
  t.recompute = recompute;
  return generate_trace(*find_catalog_model("gpt3-175b"), t);
}

// GPT-3 175B parameters by hand: 96 blocks of 12h^2 + 13h, embeddings (50257 + 2048) h, final LayerNorm 2h.
constexpr std::uint64_t kH = 12288;
constexpr std::uint64_t kBlockParams = 12 * kH * kH + 13 * kH;
constexpr std::uint64_t kParams175b = 96 * kBlockParams + (50257 + 2048) * kH + 2 * kH;
constexpr double k40GB = 40e9;

MemoryFootprint memory_footprint(const Trace& t, const std::string& system, int workers, double gpu_memory,
                                 const Json& settings = Json::object()) {
  return sim::system_named(system, settings)->memory_footprint(t, workers, gpu_memory);
}

}  // namespace

TEST_CASE("DDP of GPT-3 175B does not fit a 40 GB GPU: 16 B/param is 2.8 TB") {
  Trace t = gpt3_175b_trace(true);
  REQUIRE(t.total_params() == kParams175b);
  MemoryFootprint f = memory_footprint(t, "ddp", 8, k40GB);
  CHECK(!f.fits);
  CHECK(f.reason.find("does not fit") != std::string::npos);
  CHECK(f.gpu_params_bytes + f.gpu_grads_bytes + f.gpu_optimizer_bytes == 16 * kParams175b);
  CHECK(f.gpu_activation_bytes == t.peak_activation_bytes());
  // DDP's 25 MB bucket (PyTorch's bucket_cap_mb) and the 1 GB runtime reserve.
  CHECK(f.gpu_total_bytes() == 16 * kParams175b + t.peak_activation_bytes() + 25'000'000 + 1'000'000'000);
  CHECK(f.host_bytes_per_worker == 0);
  CHECK(f.optimizer_node_bytes == 0);
  // SwitchML needs the same replica.
  CHECK(!memory_footprint(t, "switchml", 8, k40GB).fits);
}

TEST_CASE("ZeRO-3 model state per GPU is 16 x params / N") {
  Trace t = gpt3_175b_trace(true);
  REQUIRE(kParams175b % 8 == 0);
  MemoryFootprint f8 = memory_footprint(t, "zero3", 8, k40GB);
  CHECK(f8.gpu_params_bytes + f8.gpu_grads_bytes + f8.gpu_optimizer_bytes == 16 * kParams175b / 8);
  CHECK(f8.gpu_params_bytes == 2 * kParams175b / 8);
  // N that does not divide P: each shard is padded to ceil(P/N), as DeepSpeed pads its partitions.
  REQUIRE(kParams175b % 7 != 0);
  MemoryFootprint f7 = memory_footprint(t, "zero3", 7, k40GB);
  CHECK(f7.gpu_params_bytes + f7.gpu_grads_bytes + f7.gpu_optimizer_bytes == 16 * (kParams175b / 7 + 1));
  // Per layer (FSDP-style): two gathered blocks (current + one prefetched), params and grads, 2 B each.
  const Json per_layer{{"param_fetch", "layer"}};
  CHECK(memory_footprint(t, "zero3", 8, k40GB, per_layer).gpu_buffer_bytes == 2 * 2 * 2 * kBlockParams);
  // Per sub-module, hooked only where parameters are gathered: the live budget of 1e9 parameters
  // lets one module of ~0.6e9 be prefetched beside the current one.  The most live at once: the
  // last block's FFN-down (4h^2 + h) with the LM-head matrix (50257 h) prefetched beside it (FFN-up
  // and -down, 2 (4h^2 + h), are fewer).  The norms (2h each, under 1e5) stay on every GPU; the
  // largest layer's gradient is written whole before its reduce-scatter.
  const std::uint64_t norms = (2 * 96 + 1) * 2 * kH;
  const Json with_parameters{{"module_hooks", "with-parameters"}};
  const std::uint64_t peak_one_ahead = 4 * kH * kH + kH + 50257 * kH;
  CHECK(memory_footprint(t, "zero3", 8, k40GB, with_parameters).gpu_buffer_bytes ==
        2 * (peak_one_ahead + norms + kBlockParams));
  // DeepSpeed's defaults, every module hooked: the block's and its norm's hooks prefetch
  // attention-out (h^2 + h) and FFN-up (4h^2 + 4h) while QKV is live, and attention-out's use
  // prefetches FFN-down (4h^2 + h) before attention-out is released: 9h^2 + 6h live at once.
  const std::uint64_t peak_live = 9 * kH * kH + 6 * kH;
  CHECK(f8.gpu_buffer_bytes == 2 * (peak_live + norms + kBlockParams));
}

TEST_CASE("ZeRO-Offload ZeRO-Infinity and LuWu put model state where systems.md says") {
  Trace t = gpt3_175b_trace(true);
  const std::uint64_t shard = kParams175b / 8;
  MemoryFootprint off = memory_footprint(t, "zero-offload", 8, k40GB);
  CHECK(off.gpu_params_bytes == 2 * kParams175b);  // fp16 params replicated
  CHECK(off.gpu_grads_bytes == 0);                  // streamed to the host bucket by bucket
  CHECK(off.gpu_optimizer_bytes == 0);
  CHECK(off.host_bytes_per_worker == 12 * shard + 4 * shard);  // Adam state and the fp32 gradient partition
  CHECK(!off.fits);  // 349 GB of fp16 params alone
  // Deep Optimizer States keeps ZeRO-Offload's state: its GPU subgroups borrow, after backward,
  // memory the activations held, so the peak (and the host's bytes) are ZeRO-Offload's.
  MemoryFootprint dos = memory_footprint(t, "deep-optimizer-states", 8, k40GB);
  CHECK(dos.gpu_total_bytes() == off.gpu_total_bytes());
  CHECK(dos.gpu_activation_bytes == off.gpu_activation_bytes);
  CHECK(dos.host_bytes_per_worker == 12 * shard + 4 * shard);

  MemoryFootprint inf = memory_footprint(t, "zero-infinity", 8, k40GB);
  CHECK(inf.gpu_params_bytes + inf.gpu_grads_bytes + inf.gpu_optimizer_bytes == 0);
  // In DRAM the swappers' pinned buffers (DeepSpeed 0.9.3 defaults): 4 fp32 buffers of a 1e9
  // sub-group (the shard is larger) = 16e9 B, and 5 x 1e8 fp16 parameter elements = 1e9 B; the
  // 16-bit gradient partitions (2 B x shard) and one fp32 gradient of a 1e9 sub-group (4e9 B).
  // On the NVMe the shard: fp16 parameter, fp32 master, m, v and gradient, 18 B per parameter.
  CHECK(inf.host_bytes_per_worker == 17'000'000'000ull + 2 * shard + 4'000'000'000ull);
  CHECK(inf.worker_ssd_bytes == 18 * shard);

  MemoryFootprint luwu = memory_footprint(t, "luwu", 8, k40GB);
  CHECK(luwu.gpu_params_bytes + luwu.gpu_grads_bytes + luwu.gpu_optimizer_bytes == 0);
  CHECK(luwu.host_bytes_per_worker == 0);
  CHECK(luwu.optimizer_node_bytes == 12 * kParams175b + 2 * kParams175b);
  // Two blocks in flight (prefetch_layers 1) where the GPU holds them; a 40 GB GPU holds one
  // beside this trace's activations (micro-batch 16 x 2048), so the node streams none ahead.
  CHECK(memory_footprint(t, "luwu", 8, 1e12).gpu_buffer_bytes == 2 * 2 * 2 * kBlockParams);
  CHECK(luwu.gpu_buffer_bytes == 2 * 2 * kBlockParams);
  CHECK(memory_footprint(t, "luwu", 8, k40GB, {{"prefetch_layers", 0}}).gpu_buffer_bytes == 2 * 2 * kBlockParams);
}

TEST_CASE("luwu streams fewer layers ahead where the GPU holds fewer, down to the layer in use (the paper's design)") {
  Trace t = gpt3_175b_trace(true);
  // Per layer streamed, a block's fp16 parameters and gradients: 2 x 2 B x kBlockParams.
  const std::uint64_t layer = 2 * 2 * kBlockParams;
  const MemoryFootprint two = memory_footprint(t, "luwu", 8, 1e12);  // prefetch_layers 1: 2 layers
  REQUIRE(two.gpu_buffer_bytes == 2 * layer);
  const double base = static_cast<double>(two.gpu_total_bytes() - 2 * layer);  // activations, runtime
  // One byte short of two layers: the node streams none ahead, the GPU holds the layer in use.
  const MemoryFootprint one = memory_footprint(t, "luwu", 8, base + 2 * layer - 1);
  CHECK(one.fits);
  CHECK(one.gpu_buffer_bytes == layer);
  CHECK(one.reason.find("streams 0 layers ahead, not 1") != std::string::npos);
  CHECK(one.fitted_by.find("streams 0 layers ahead, not 1") == 0);
  CHECK(two.fitted_by.empty());
  CHECK(!memory_footprint(t, "luwu", 8, base + layer - 1).fits);  // not even the layer in use
  CHECK(memory_footprint(t, "luwu", 8, base + layer).fits);
  // prefetch_layers is an upper bound: room for three layers gives 2 ahead of 3 asked for.
  const Json three_ahead{{"prefetch_layers", 3}};
  CHECK(memory_footprint(t, "luwu", 8, base + 3 * layer, three_ahead).gpu_buffer_bytes == 3 * layer);
  CHECK(memory_footprint(t, "luwu", 8, base + 4 * layer, three_ahead).gpu_buffer_bytes == 4 * layer);
  CHECK(memory_footprint(t, "luwu", 8, base + 4 * layer, three_ahead).reason.find("ahead, not") == std::string::npos);
}

TEST_CASE("a small model fits every system and the verdict follows the GPU size") {
  TrainingConfig tc;
  tc.seq_len = 512;
  Trace t = generate_trace(*find_catalog_model("gpt3-125m"), tc);
  for (const auto& s : sim::system_names()) {
    CAPTURE(s);
    // LuWu streams fewer layers ahead on a smaller GPU (above): its boundary is the layer in use.
    const Json settings = s == "luwu" ? Json{{"prefetch_layers", 0}} : Json::object();
    MemoryFootprint f = memory_footprint(t, s, 4, k40GB, settings);
    CHECK(f.fits);
    CHECK(f.reason.find("fits") == 0);
    CHECK(!memory_footprint(t, s, 4, static_cast<double>(f.gpu_total_bytes()) - 1, settings).fits);
    CHECK(memory_footprint(t, s, 4, static_cast<double>(f.gpu_total_bytes()), settings).fits);
  }
}

TEST_CASE("system names and bad arguments") {
  for (const auto& s : sim::system_names()) CHECK(sim::system_named(s)->name() == s);
  const auto names = sim::system_names();
  for (const char* expected : {"ddp", "zero3", "zero++", "zero-offload", "deep-optimizer-states", "zero-infinity", "switchml", "atp", "parameter-server", "onebit-adam", "zero-hierarchical", "luwu"})
    CHECK_MESSAGE(std::find(names.begin(), names.end(), expected) != names.end(), expected);
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());  // no name twice
  CHECK_THROWS_WITH_AS(sim::system_named("zero-3"), doctest::Contains("did you mean \"zero3\""), std::invalid_argument);
  Trace t = gpt3_175b_trace(false);
  CHECK_THROWS_AS(memory_footprint(t, "ddp", 0, k40GB), std::invalid_argument);
  CHECK_THROWS_AS(memory_footprint(t, "ddp", 8, 0), std::invalid_argument);
}

TEST_CASE("offloading activation checkpoints moves the L block checkpoints to the host") {
  // GPT-3 175B, b = 16, s = 2048, recompute, memory-efficient attention, fp16, by hand:
  const std::uint64_t sbh = 2048ull * 16 * kH;
  const std::uint64_t block = 34 * sbh;                       // Korthikanti without the 5as^2b term
  const std::uint64_t head = 4 * sbh + 4 * 2048ull * 16 * 50257;  // two 16-bit inputs + fp32 logits
  const std::uint64_t embedding = sbh;                         // 1-byte dropout mask
  TrainingConfig tc;
  tc.micro_batch = 16;
  tc.recompute = true;
  tc.memory_efficient_attention = true;
  Trace t = generate_trace(*find_catalog_model("gpt3-175b"), tc);
  const Json offload = {{"offload_activation_checkpoints", true}};
  MemoryFootprint on_gpu = memory_footprint(t, "luwu", 8, k40GB);
  MemoryFootprint on_host = memory_footprint(t, "luwu", 8, k40GB, offload);
  // On the GPU: the embedding's mask and the larger of the head's activations (end of forward)
  // and one block's checkpoint + rebuilt activations (during its backward).
  CHECK(on_gpu.gpu_activation_bytes == embedding + 96 * 2 * sbh + std::max(head, block));
  CHECK(on_host.gpu_activation_bytes == embedding + std::max(head, 2 * sbh + block));
  CHECK(on_host.host_bytes_per_worker == 96 * 2 * sbh);
  // The LuWu paper's setting (8 x A100-40GB, micro-batch 16): 77 GB of checkpoints alone exceed
  // the GPU; with them on the host, 14.9 GB of activations + 14.5 GB of working set + 1 GB fit.
  CHECK(!on_gpu.fits);
  CHECK(on_host.fits);
  // Without recompute there is nothing to offload.
  tc.recompute = false;
  Trace no_recompute = generate_trace(*find_catalog_model("gpt3-175b"), tc);
  CHECK(memory_footprint(no_recompute, "luwu", 8, k40GB, offload).gpu_activation_bytes ==
        no_recompute.peak_activation_bytes());
}

TEST_CASE("ZeRO-Offload trains a 13B model on one 32 GB V100 (its paper's abstract)") {
  // The GPU keeps the fp16 parameters (2 x 12.95e9 = 25.9 GB), the 1 GB reduce bucket, the
  // accumulation buffer of the largest sub-module (the embedding, 50257 tokens and 2048 learned
  // positions by d_model 5140; DeepSpeed sizes it by tensor, the token table alone) and the working
  // activations of one block; gradients stream to the host, checkpoints live there.
  TrainingConfig tc;
  tc.micro_batch = 4;
  tc.seq_len = 1024;
  tc.recompute = true;
  Trace t = generate_trace(*find_catalog_model("gpt3-13b"), tc);
  const std::uint64_t P = t.total_params();
  MemoryFootprint f = memory_footprint(t, "zero-offload", 1, 32e9, {{"offload_activation_checkpoints", true}});
  CHECK(f.fits);
  CHECK(f.gpu_params_bytes == 2 * P);
  CHECK(f.gpu_grads_bytes == 0);
  CHECK(f.gpu_buffer_bytes == 1'000'000'000 + 2ull * (50257 + 2048) * 5140);
  CHECK(f.host_bytes_per_worker > 16 * P);  // Adam state and the fp32 gradients, plus the checkpoints
  // Its one GPU's gradient partition (2P), kept on the GPU, would not fit beside the rest.
  CHECK(static_cast<double>(f.gpu_total_bytes() + 2 * P) > 32e9);
}

TEST_CASE("only the systems that move checkpoints to the host get the memory for it") {
  TrainingConfig tc;
  tc.micro_batch = 16;
  tc.recompute = true;
  tc.memory_efficient_attention = true;
  Trace t = generate_trace(*find_catalog_model("gpt3-175b"), tc);
  const Json offload = {{"offload_activation_checkpoints", true}};
  // ZeRO-Offload, ZeRO-Infinity and LuWu pay the PCIe transfers in their schedules; the others
  // have no such setting (a scenario that sets it is an error), so their GPU keeps the checkpoints.
  for (const char* s : {"zero-offload", "zero-infinity", "luwu"})
    CHECK(memory_footprint(t, s, 8, k40GB, offload).gpu_activation_bytes <
          memory_footprint(t, s, 8, k40GB).gpu_activation_bytes);
  for (const char* s : {"ddp", "zero3", "switchml"}) {
    CHECK(memory_footprint(t, s, 8, k40GB, offload).gpu_activation_bytes == t.peak_activation_bytes());
    const Json entry = {{"name", s}, {"offload_activation_checkpoints", true}};
    CHECK_THROWS_AS(sim::system_from_json(JsonNode(entry, "s.json", "$.systems[0]")), InputError);
  }
}

TEST_CASE("fp32 training keeps m and v beside the fp32 parameter: 16 B/param, and the node holds 12 B/param") {
  TrainingConfig tc;
  tc.seq_len = 512;
  tc.dtype = DType::Fp32;
  Trace t = generate_trace(*find_catalog_model("gpt3-125m"), tc);
  const std::uint64_t P = t.total_params();
  MemoryFootprint ddp = memory_footprint(t, "ddp", 4, k40GB);
  CHECK(ddp.gpu_params_bytes == 4 * P);
  CHECK(ddp.gpu_grads_bytes == 4 * P);
  CHECK(ddp.gpu_optimizer_bytes == 8 * P);
  CHECK(memory_footprint(t, "luwu", 4, k40GB).optimizer_node_bytes == 12 * P);
}
