// ZeRO-Offload (Ren et al., arXiv 2101.06840): ZeRO-2 on the GPUs, the optimizer on the CPU.
//
// Every GPU keeps the fp16 parameters (a replica); gradients and optimizer state are partitioned
// 1/N, and the fp32 master parameters and Adam state live in the host's DRAM.  Backward hands each
// layer's gradient to a bucket of `reduce_bucket_bytes`; a full bucket is reduce-scattered over the
// network (a GPU collective) while backward goes on, and each rank copies its shard of the bucket
// to host memory over its PCIe as soon as the bucket is reduced.  Every micro-batch's gradient is
// reduce-scattered; earlier micro-batches of gradient accumulation accumulate into the GPU's
// gradient shard, the last one's shard goes to the host (2P/N bytes per rank).  After backward the
// CPU runs Adam on the rank's P/N parameters from DRAM, the fp16 shard goes back over PCIe
// (2P/N bytes) and the GPUs all-gather the updated parameters for the next forward.
//
// With the one-step delayed parameter update, the CPU step, the copy back and the all-gather work
// on the previous step's gradients, under this step's forward and backward (the steady state: the
// pipeline starts at t = 0 with the compute; the iteration ends when both are done).  The host
// then holds two gradient shards (the one being stepped and the one arriving), so this step's
// gradient copies do not wait for the CPU step; the paper does not say otherwise.
#include "sim/systems/zero_offload/zero_offload.hpp"

#include <string>

#include "models/host.hpp"
#include "sim/engine/stream.hpp"
#include "sim/systems/gpu_collective.hpp"
#include "sim/systems/gradient_buckets.hpp"
#include "sim/systems/model_state.hpp"
#include "sim/engine/transfers.hpp"

namespace luwu::sim {
namespace {

class ZeroOffloadSchedule : public Schedule {
 public:
  explicit ZeroOffloadSchedule(const ZeroOffloadSettings& settings) : settings_(settings) {}

  void run_rank(RankEnv& env) override {
    GpuDevice& gpu = env.gpu;
    const auto& trace = env.trace();
    const int world = env.world();
    Timeline* tl = &env.cluster.timeline;
    Stream reduce_stream(gpu.name(), "reduce-scatter", "communication", gpu.host(), tl);
    Stream offload_stream(gpu.name(), "gradient shard to host (pcie)", "io", gpu.host(), tl);
    Stream cpu_stream(gpu.name(), "cpu optimizer", "optimizer", env.hosts.cpu, tl);
    Stream upload_stream(gpu.name(), "parameter shard to gpu (pcie)", "io", gpu.host(), tl);
    Stream gather_stream(gpu.name(), "all-gather", "communication", gpu.host(), tl);

    const double shard_params = static_cast<double>(trace.total_params()) / world;
    const double shard_param_bytes = shard_params * workloads::bytes_per_element(trace.training.dtype);

    // CPU step -> fp16 shard back to the GPU -> all-gather of the whole model, each after the last.
    struct Update {
      CompletionPtr stepped, uploaded, gathered;
    };
    auto update_parameters = [&](const CompletionPtr& gradients_on_host) {
      Update u;
      u.stepped = cpu_stream.enqueue(
          "adam step on cpu", [&env, shard_params] { cpu_step(env, shard_params); }, {gradients_on_host});
      u.uploaded = upload_stream.enqueue(
          "parameter shard to gpu",
          [&env, shard_param_bytes] { transfer(env.hosts.cpu, env.gpu.host(), shard_param_bytes, env.cluster.traffic); },
          {u.stepped});
      u.gathered = enqueue_gpu_collective(gather_stream, env, CollectiveOp::AllGather, "zoff-ag",
                                          shard_param_bytes * world, "all-gather parameters", {u.uploaded});
      return u;
    };

    const bool delayed = settings_.delayed_param_update;
    Update previous_step;
    if (delayed) previous_step = update_parameters(completed());  // the previous step's gradients are on the host

    const int last_micro_step = trace.training.grad_accum - 1;
    const auto buckets = plan_gradient_buckets(trace, settings_.reduce_bucket_bytes, BucketedMicroSteps::Every);
    CompletionPtr reduced = completed(), offloaded = completed();
    auto bucket = buckets.begin();
    for (std::size_t i = 0; i < trace.ops.size(); ++i) {
      env.compute(trace.ops[i]);
      for (; bucket != buckets.end() && bucket->after_op == i; ++bucket) {
        const std::string name = "bucket " + std::to_string(bucket->index);
        reduced = enqueue_gpu_collective(reduce_stream, env, CollectiveOp::ReduceScatter, "zoff-rs", bucket->bytes,
                                         "reduce-scatter " + name);
        if (bucket->micro_step != last_micro_step) continue;  // accumulates into the GPU's shard
        const double shard_bytes = bucket->bytes / world;
        offloaded = offload_stream.enqueue(
            "gradient shard to host " + name,
            [&env, shard_bytes] { transfer(env.gpu.host(), env.hosts.cpu, shard_bytes, env.cluster.traffic); },
            {reduced});
      }
    }
    gpu.wait(reduced, WaitCause::Communication, "gradient reduce-scatter");
    gpu.wait(offloaded, WaitCause::Io, "gradient shards to host");

    const Update update = delayed ? previous_step : update_parameters(offloaded);
    gpu.wait(update.stepped, WaitCause::Optimizer, "cpu optimizer");
    gpu.wait(update.uploaded, WaitCause::Io, "parameter shard to gpu");
    gpu.wait(update.gathered, WaitCause::Communication, "parameter all-gather");
  }

 private:
  // Adam over the rank's shard, its optimizer state in the server's DRAM.
  static void cpu_step(RankEnv& env, double params) {
    const auto t = models::cpu_optimizer_step_times(env.cluster.hw.worker_host, params,
                                                    deepspeed_cpu_adam_cost(env.trace().training.dtype),
                                                    models::StatePlacement{1, 0, 0});
    execute_on(env.hosts.cpu, t.total_s);
  }

  ZeroOffloadSettings settings_;
};

class ZeroOffload : public System {
 public:
  ZeroOffload(const SystemEntry& entry, ZeroOffloadSettings settings) : System(entry), settings_(settings) {}

  // ZeRO-2 on the GPU: parameters replicated, gradients partitioned, one reduce bucket; the
  // optimizer state and the gradient shard copied over PCIe in the host's DRAM.
  MemoryFootprint memory_footprint(const workloads::Trace& trace, int workers, double gpu_memory) const override {
    MemoryFootprint f = base_footprint(trace, workers, gpu_memory, false);
    const auto bytes = model_state_bytes(trace.training.dtype);
    const std::uint64_t shard = shard_params(trace.total_params(), workers);
    f.gpu_params_bytes = bytes.param * trace.total_params();
    f.gpu_grads_bytes = bytes.grad * shard;
    f.gpu_buffer_bytes = static_cast<std::uint64_t>(settings_.reduce_bucket_bytes);
    f.host_bytes_per_worker += (bytes.optimizer + bytes.grad) * shard;
    judge_footprint(f, name(), gpu_memory);
    return f;
  }

  // Each GPU's optimizer state, gradient shard and the parameter shard it sends back, in its
  // server's DRAM.
  std::string capacity_problem(const workloads::Trace& trace, const Hardware& hw) const override {
    const auto bytes = model_state_bytes(trace.training.dtype);
    const double need = params_per_server(trace, hw) * static_cast<double>(bytes.optimizer + bytes.param + bytes.grad);
    if (need > hw.worker_host.dram.capacity_bytes)
      return does_not_fit("a worker server's DRAM", need, hw.worker_host.dram.capacity_bytes);
    return "";
  }

  CollectiveSettings collectives() const override { return settings_.collectives; }
  std::unique_ptr<Schedule> make_schedule(ClusterEnv&) const override {
    return std::make_unique<ZeroOffloadSchedule>(settings_);
  }

 private:
  ZeroOffloadSettings settings_;
};

}  // namespace

SystemPtr parse_zero_offload(const SystemEntry& entry) {
  entry.only_settings(setting_keys({{"reduce_bucket_bytes", "delayed_param_update"}, CollectiveSettings::keys()}));
  ZeroOffloadSettings s;
  if (entry.has("reduce_bucket_bytes")) s.reduce_bucket_bytes = entry.at("reduce_bucket_bytes").as_positive();
  s.delayed_param_update = entry.settings().get_bool("delayed_param_update", s.delayed_param_update);
  s.collectives = CollectiveSettings::parse(entry);
  return std::make_shared<ZeroOffload>(entry, s);
}

}  // namespace luwu::sim
