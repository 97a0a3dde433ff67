// ZeRO-Infinity (DeepSpeed stage 3 with parameters and optimizer state offloaded to NVMe or DRAM).
//
// Forward and backward, per layer: each GPU reads its 1/N shard of the layer's fp16 parameters
// from NVMe into host memory and copies it over its own PCIe (bandwidth-centric partitioning: all
// PCIe links work in parallel), then the shards are all-gathered over the network; prefetch runs
// `prefetch_layers` layers ahead.  Backward reduce-scatters each gradient and copies the shard to
// host memory; all-gathers and reduce-scatters share one collective stream in issue order unless
// "collective_streams" is "separate" (gpu_collective.hpp).  After backward the CPU optimizer updates the P/N parameters of the rank: it
// streams fp32 master, m and v from NVMe through DRAM in sub-groups (read -> update -> write
// back, double-buffered) and writes the fp16 parameters back for the next iteration.  Optionally,
// activation checkpoints go to host memory after forward and come back before recompute.
#include "sim/systems/zero_infinity/zero_infinity.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "models/host.hpp"
#include "sim/engine/stream.hpp"
#include "sim/systems/gpu_collective.hpp"
#include "sim/systems/model_state.hpp"
#include "sim/systems/out_of_core_pipeline.hpp"
#include "sim/systems/param_prefetch.hpp"
#include "sim/engine/transfers.hpp"

namespace luwu::sim {
namespace {

using Tier = ZeroInfinitySettings::Tier;

class ZeroInfinitySchedule : public Schedule {
 public:
  ZeroInfinitySchedule(const ZeroInfinitySettings& settings, ClusterEnv& env) : settings_(settings) {
    if (settings.offload == Tier::Nvme)
      for (const auto& r : env.roles.ranks)
        if (r.nvme.empty())
          throw std::invalid_argument("zero-infinity with offload \"nvme\" needs NVMe SSDs on every worker server");
  }

  void run_rank(RankEnv& env) override {
    GpuDevice& gpu = env.gpu;
    const auto& trace = env.trace();
    const auto& ops = trace.ops;
    const int world = env.world();
    const bool on_nvme = settings_.offload == Tier::Nvme;
    Timeline* tl = &env.cluster.timeline;
    Stream fetch_stream(gpu.name(), "param fetch (nvme/pcie)", "io", gpu.host(), tl);
    const bool one = settings_.streams.one_stream;
    Stream gather_stream(gpu.name(), one ? "collectives" : "all-gather", "communication", gpu.host(), tl);
    Stream reduce_own(gpu.name(), "reduce-scatter", "communication", gpu.host(), tl);
    Stream& reduce_stream = one ? gather_stream : reduce_own;
    Stream offload_stream(gpu.name(), "offload to host (pcie)", "io", gpu.host(), tl);
    CheckpointOffload checkpoints(env, settings_.checkpoints, offload_stream, fetch_stream);

    // A layer's shard comes from NVMe (or DRAM) over this GPU's PCIe, then every shard is gathered.
    std::vector<CompletionPtr> fetched(ops.size()), gathered(ops.size());
    ParamPrefetch prefetch(trace, settings_.prefetch.layers, [&](std::size_t i) {
      const double bytes = static_cast<double>(ops[i].param_bytes);
      const double shard = bytes / world;
      fetched[i] = fetch_stream.enqueue("fetch shard " + op_label(trace, ops[i]), [&env, shard, on_nvme] {
        if (on_nvme) read_striped(env.hosts.nvme, shard, env.cluster.traffic);
        transfer(env.hosts.cpu, env.gpu.host(), shard, env.cluster.traffic);
      });
      gathered[i] = enqueue_gpu_collective(gather_stream, env, CollectiveOp::AllGather, "zinf-ag", bytes,
                                           "all-gather " + op_label(trace, ops[i]), {fetched[i]});
      checkpoints.fetch_back(i);
    });

    CompletionPtr offloaded = completed(), params_fetched = completed(), params_ready = completed();
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const auto& op = ops[i];
      const std::string label = op_label(trace, op);
      if (prefetch.before(i)) {
        params_fetched = fetched[i];
        params_ready = gathered[i];
      }
      gpu.wait(params_fetched, WaitCause::Io, "parameter shard from host " + label);
      gpu.wait(params_ready, WaitCause::Communication, "all-gather " + label);
      checkpoints.wait_before_compute(i);
      env.compute(op);

      if (auto sent = checkpoints.after_compute(i)) offloaded = sent;
      if (op.kind == workloads::OpKind::Backward && op.grad_bytes > 0) {
        const double bytes = static_cast<double>(op.grad_bytes);
        auto reduced = enqueue_gpu_collective(reduce_stream, env, CollectiveOp::ReduceScatter, "zinf-rs", bytes,
                                              "reduce-scatter " + label);
        offloaded = offload_stream.enqueue(
            "gradient shard to host " + label,
            [&env, bytes, world] { transfer(env.gpu.host(), env.hosts.cpu, bytes / world, env.cluster.traffic); },
            {reduced});
      }
    }
    gpu.wait(offloaded, WaitCause::Io, "gradient shards to host");
    cpu_step(env, static_cast<double>(trace.total_params()) / world);
  }

 private:
  // The CPU optimizer over the rank's shard.  In DRAM, one pass.  On NVMe, sub-groups read ->
  // update -> write back: sub-group c is read while c-1 is updated, and its update waits for the
  // write-back of c-2 (two DRAM buffers; DeepSpeed's swapper writes asynchronously).
  void cpu_step(RankEnv& env, double params) const {
    const auto& host = env.cluster.hw.worker_host;
    const auto cost = adam_cost(env.trace().training.dtype);
    const bool on_nvme = settings_.offload == Tier::Nvme;
    auto update_s = [&](double p) {
      const auto t = models::cpu_optimizer_step_times(host, p, cost, on_nvme ? models::StatePlacement{0, 0, 1}
                                                                               : models::StatePlacement{});
      return std::max(t.dram_s, t.compute_s);  // the SSD part is simulated as disk I/O
    };
    if (!on_nvme) {
      Stream cpu(env.gpu.name(), "cpu optimizer", "optimizer", env.hosts.cpu, &env.cluster.timeline);
      const double seconds = update_s(params);
      env.gpu.wait(cpu.enqueue("adam step on cpu", [&env, seconds] { execute_on(env.hosts.cpu, seconds); }),
                   WaitCause::Optimizer, "cpu optimizer");
      return;
    }
    OutOfCorePipeline swapper(env.gpu.name(), env.hosts.cpu, env.hosts.nvme, OutOfCorePolicy{1, 2, false},
                              env.cluster.traffic, &env.cluster.timeline);
    const double chunk = std::min(settings_.optimizer_chunk_params, params);
    const int chunks = static_cast<int>(std::ceil(params / chunk));
    for (int c = 0; c < chunks; ++c) {
      const double size = std::min(chunk, params - c * chunk);
      swapper.add_unit("sub-group " + std::to_string(c), size * cost.state_bytes_per_param, update_s(size),
                       size * cost.bytes_written_per_param);
    }
    for (const auto& done : swapper.write_backs()) env.gpu.wait(done, WaitCause::Optimizer, "cpu optimizer");
  }

  ZeroInfinitySettings settings_;
};

class ZeroInfinity : public System {
 public:
  ZeroInfinity(const SystemEntry& entry, ZeroInfinitySettings settings) : System(entry), settings_(settings) {}

  // Only the gathered layers on the GPU; each worker's host holds the shard of everything (and the
  // activation checkpoints it offloads).
  MemoryFootprint memory_footprint(const workloads::Trace& trace, int workers, double gpu_memory) const override {
    MemoryFootprint f = base_footprint(trace, workers, gpu_memory, settings_.checkpoints.enabled);
    const auto bytes = model_state_bytes(trace.training.dtype);
    f.gpu_buffer_bytes = layer_working_set_bytes(trace, settings_.prefetch.layers);
    f.host_bytes_per_worker += (bytes.param + bytes.grad + bytes.optimizer) * shard_params(trace.total_params(), workers);
    judge_footprint(f, name(), gpu_memory);
    return f;
  }

  // Parameters and optimizer state of the server's GPUs on its NVMe (or in its DRAM, with the
  // gradient shards).
  std::string capacity_problem(const workloads::Trace& trace, const Hardware& hw) const override {
    const auto bytes = model_state_bytes(trace.training.dtype);
    const double per_server = params_per_server(trace, hw);
    double need = per_server * static_cast<double>(bytes.optimizer + bytes.param);
    if (settings_.offload == Tier::Dram) {
      need += per_server * static_cast<double>(bytes.grad);
      if (need > hw.worker_host.dram.capacity_bytes)
        return does_not_fit("a worker server's DRAM", need, hw.worker_host.dram.capacity_bytes);
      return "";
    }
    const double have = hw.worker_host.ssds ? hw.worker_host.ssds->capacity_bytes() : 0;
    if (need > have) return does_not_fit("a worker server's NVMe", need, have);
    return "";
  }

  CollectiveSettings collectives() const override { return settings_.collectives; }
  std::unique_ptr<Schedule> make_schedule(ClusterEnv& env) const override {
    return std::make_unique<ZeroInfinitySchedule>(settings_, env);
  }

 private:
  ZeroInfinitySettings settings_;
};

}  // namespace

SystemPtr parse_zero_infinity(const SystemEntry& entry) {
  entry.only_settings(setting_keys({{"offload", "optimizer_chunk_params"}, PrefetchSettings::keys(),
                                    CheckpointOffloadSettings::keys(), CollectiveSettings::keys(),
                                    CollectiveStreamSettings::keys()}));
  ZeroInfinitySettings s;
  if (entry.has("offload")) s.offload = entry.at("offload").as_choice(Choices<Tier>{{"nvme", Tier::Nvme}, {"dram", Tier::Dram}}, "offload tier");
  if (entry.has("optimizer_chunk_params")) {
    // Each sub-group is a read, an update and a write-back to simulate: below 1e5 parameters a
    // 175B shard would be millions of them (DeepSpeed's default is 1e9).
    s.optimizer_chunk_params = entry.at("optimizer_chunk_params").as_positive();
    if (s.optimizer_chunk_params < 1e5) entry.at("optimizer_chunk_params").fail("expected at least 1e5 parameters per sub-group");
  }
  s.prefetch = PrefetchSettings::parse(entry);
  s.checkpoints = CheckpointOffloadSettings::parse(entry);
  s.collectives = CollectiveSettings::parse(entry);
  s.streams = CollectiveStreamSettings::parse(entry);
  return std::make_shared<ZeroInfinity>(entry, s);
}

}  // namespace luwu::sim
