// ZeRO-Infinity (DeepSpeed stage 3 with parameters and optimizer state offloaded to NVMe or DRAM).
//
// Forward and backward, per layer: each GPU reads its 1/N shard of the layer's fp16 parameters
// from NVMe into host memory and copies it over its own PCIe (bandwidth-centric partitioning: all
// PCIe links work in parallel), then the shards are all-gathered over the network; prefetch runs
// `prefetch_layers` layers ahead.  Backward reduce-scatters each gradient and copies the shard to
// host memory.  After backward the CPU optimizer updates the P/N parameters of the rank: it
// streams fp32 master, m and v from NVMe through DRAM in sub-groups (read -> update -> write
// back, double-buffered) and writes the fp16 parameters back for the next iteration.  Optionally,
// activation checkpoints go to host memory after forward and come back before recompute.
#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "models/host.hpp"
#include "sim/stream.hpp"
#include "sim/systems/systems.hpp"
#include "sim/transfers.hpp"

namespace luwu::sim {
namespace {

class ZeroInfinity : public Schedule {
 public:
  explicit ZeroInfinity(ClusterEnv& env) : on_nvme_(env.settings.offload == "nvme") {
    if (on_nvme_)
      for (const auto& r : env.roles.ranks)
        if (r.nvme.empty())
          throw std::invalid_argument("zero-infinity with offload \"nvme\" needs NVMe SSDs on every worker server");
  }

  void run_rank(RankEnv& env) override {
    GpuDevice& gpu = env.gpu;
    const auto& trace = env.trace();
    const auto& ops = trace.ops;
    const int world = env.world();
    Timeline* tl = &env.cluster.timeline;
    Stream fetch_stream(gpu.name(), "param fetch (nvme/pcie)", "io", gpu.host(), tl);
    Stream gather_stream(gpu.name(), "all-gather", "communication", gpu.host(), tl);
    Stream reduce_stream(gpu.name(), "reduce-scatter", "communication", gpu.host(), tl);
    Stream offload_stream(gpu.name(), "offload to host (pcie)", "io", gpu.host(), tl);
    Stream cpu_stream(gpu.name(), "cpu optimizer", "optimizer", env.hosts.cpu, tl);
    const bool offload_checkpoints = env.settings().offload_activation_checkpoints && trace.training.recompute;

    const std::vector<bool> needs_params = ops_needing_params(trace);
    std::vector<std::size_t> param_ops;
    for (std::size_t i = 0; i < ops.size(); ++i)
      if (needs_params[i]) param_ops.push_back(i);

    std::vector<CompletionPtr> fetched(ops.size()), gathered(ops.size()), checkpoint_back(ops.size());
    std::size_t issued = 0;
    auto issue_through = [&](std::size_t count) {
      for (; issued < std::min(count, param_ops.size()); ++issued) {
        std::size_t i = param_ops[issued];
        const double bytes = static_cast<double>(ops[i].param_bytes);
        const double shard = bytes / world;
        fetched[i] = fetch_stream.enqueue("fetch shard " + op_label(trace, ops[i]), [&env, shard, this] {
          if (on_nvme_) read_striped(env.hosts.nvme, shard, env.cluster.traffic);
          transfer(env.hosts.cpu, env.gpu.host(), shard, env.cluster.traffic);
        });
        gathered[i] = gather_stream.enqueue(
            "all-gather " + op_label(trace, ops[i]),
            [&env, bytes] {
              GpuDevice::LoadScope kernel(env.gpu, GpuDevice::LoadKind::CollectiveKernel);
              env.cluster.collectives.all_gather("zinf-ag", env.rank(), bytes);
            },
            {fetched[i]});
        if (offload_checkpoints && ops[i].kind == workloads::OpKind::Recompute) {
          double ckpt = static_cast<double>(trace.layers[ops[i].layer].checkpoint_bytes);
          checkpoint_back[i] = fetch_stream.enqueue("checkpoint to gpu " + op_label(trace, ops[i]), [&env, ckpt] {
            transfer(env.hosts.cpu, env.gpu.host(), ckpt, env.cluster.traffic);
          });
        }
      }
    };

    CompletionPtr offloaded = completed();
    std::size_t needed = 0;
    CompletionPtr params_fetched = completed(), params_ready = completed();
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const auto& op = ops[i];
      const std::string label = op_label(trace, op);
      if (needs_params[i]) {
        issue_through(++needed + static_cast<std::size_t>(env.settings().prefetch_layers));
        params_fetched = fetched[i];
        params_ready = gathered[i];
      }
      gpu.wait(params_fetched, WaitCause::Io, "parameter shard from host " + label);
      gpu.wait(params_ready, WaitCause::Communication, "all-gather " + label);
      if (checkpoint_back[i]) gpu.wait(checkpoint_back[i], WaitCause::Io, "checkpoint from host " + label);
      gpu.compute(label, env.op_time_s(op));

      const auto& layer = trace.layers[op.layer];
      if (offload_checkpoints && op.kind == workloads::OpKind::Forward && layer.kind == workloads::LayerKind::Transformer) {
        double ckpt = static_cast<double>(layer.checkpoint_bytes);
        offloaded = offload_stream.enqueue("checkpoint to host " + label, [&env, ckpt] {
          transfer(env.gpu.host(), env.hosts.cpu, ckpt, env.cluster.traffic);
        });
      }
      if (op.kind == workloads::OpKind::Backward && op.grad_bytes > 0) {
        const double bytes = static_cast<double>(op.grad_bytes);
        auto reduced = reduce_stream.enqueue("reduce-scatter " + label, [&env, bytes] {
          GpuDevice::LoadScope kernel(env.gpu, GpuDevice::LoadKind::CollectiveKernel);
          env.cluster.collectives.reduce_scatter("zinf-rs", env.rank(), bytes);
        });
        offloaded = offload_stream.enqueue(
            "gradient shard to host " + label,
            [&env, bytes, world] { transfer(env.gpu.host(), env.hosts.cpu, bytes / world, env.cluster.traffic); },
            {reduced});
      }
    }
    gpu.wait(offloaded, WaitCause::Io, "gradient shards to host");
    const double shard_params = static_cast<double>(trace.total_params()) / world;
    auto stepped = cpu_stream.enqueue("adam step on cpu", [&env, shard_params, this] { cpu_step(env, shard_params); });
    gpu.wait(stepped, WaitCause::Optimizer, "cpu optimizer");
  }

 private:
  // The CPU optimizer over the rank's shard.  On NVMe: sub-groups read -> update -> write back,
  // the read of the next and the write of the previous overlapping the update (double buffering).
  void cpu_step(RankEnv& env, double params) const {
    const auto& host = env.cluster.hw.worker_host;
    const auto cost = models::adam_mixed_precision_cost();
    TrafficMeter& traffic = env.cluster.traffic;
    auto update_s = [&](double p) {
      models::StatePlacement placement;
      if (on_nvme_) placement = {0, 0, 1};
      auto t = models::cpu_optimizer_step_times(host, p, cost, placement);
      return std::max(t.dram_s, t.compute_s);  // the SSD part is simulated as disk I/O below
    };
    if (!on_nvme_) return execute_on(env.hosts.cpu, update_s(params));

    // Sub-group c is read while c-1 is updated; its write-back overlaps the next ones; two DRAM
    // buffers, so sub-group c's update waits for the write-back of c-2.
    const double chunk = std::min(env.settings().optimizer_chunk_params, params);
    const int chunks = static_cast<int>(std::ceil(params / chunk));
    auto size_of = [&](int c) { return std::min(chunk, params - c * chunk); };
    auto in_background = [&env](std::function<void()> io) {
      return simgrid::s4u::Actor::create("optimizer state i/o", env.hosts.cpu, std::move(io));
    };
    auto read = [&](int c) {
      double bytes = size_of(c) * cost.state_bytes_per_param;  // fp32 master, m, v
      return in_background([&env, &traffic, bytes] { read_striped(env.hosts.nvme, bytes, traffic); });
    };
    std::vector<simgrid::s4u::ActorPtr> writes;
    auto reading = read(0);
    for (int c = 0; c < chunks; ++c) {
      reading->join();
      if (c + 1 < chunks) reading = read(c + 1);
      if (c >= 2) writes[c - 2]->join();
      execute_on(env.hosts.cpu, update_s(size_of(c)));
      double bytes = size_of(c) * cost.bytes_written_per_param;  // master, m, v and the fp16 parameters
      writes.push_back(in_background([&env, &traffic, bytes] { write_striped(env.hosts.nvme, bytes, traffic); }));
    }
    for (auto& w : writes) w->join();
  }

  bool on_nvme_;
};

}  // namespace

std::unique_ptr<Schedule> make_zero_infinity_schedule(ClusterEnv& env) { return std::make_unique<ZeroInfinity>(env); }

}  // namespace luwu::sim
