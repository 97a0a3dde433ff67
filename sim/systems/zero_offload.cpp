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
#include <string>

#include "models/host.hpp"
#include "sim/stream.hpp"
#include "sim/systems/systems.hpp"
#include "sim/transfers.hpp"

namespace luwu::sim {
namespace {

class ZeroOffload : public Schedule {
 public:
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
      const double model_param_bytes = shard_param_bytes * world;
      u.gathered = gather_stream.enqueue(
          "all-gather parameters",
          [&env, model_param_bytes] {
            GpuDevice::LoadScope kernel(env.gpu, GpuDevice::LoadKind::CollectiveKernel);
            env.cluster.collectives.all_gather("zoff-ag", env.rank(), model_param_bytes);
          },
          {u.uploaded});
      return u;
    };

    const bool delayed = env.settings().delayed_param_update;
    Update previous_step;
    if (delayed) previous_step = update_parameters(completed());  // the previous step's gradients are on the host

    const int last_micro_step = trace.training.grad_accum - 1;
    CompletionPtr reduced = completed(), offloaded = completed();
    double bucket_bytes = 0;
    int bucket = 0;
    auto reduce_bucket = [&](bool to_host) {
      if (bucket_bytes <= 0) return;
      const double bytes = bucket_bytes;
      bucket_bytes = 0;
      const std::string name = "bucket " + std::to_string(bucket++);
      reduced = reduce_stream.enqueue("reduce-scatter " + name, [&env, bytes] {
        GpuDevice::LoadScope kernel(env.gpu, GpuDevice::LoadKind::CollectiveKernel);
        env.cluster.collectives.reduce_scatter("zoff-rs", env.rank(), bytes);
      });
      if (!to_host) return;
      offloaded = offload_stream.enqueue(
          "gradient shard to host " + name,
          [&env, bytes, world] { transfer(env.gpu.host(), env.hosts.cpu, bytes / world, env.cluster.traffic); },
          {reduced});
    };

    const auto& ops = trace.ops;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const auto& op = ops[i];
      const bool last = op.micro_step == last_micro_step;
      gpu.compute(op_label(trace, op), env.op_time_s(op));
      if (op.kind == workloads::OpKind::Backward && op.grad_bytes > 0) {
        bucket_bytes += static_cast<double>(op.grad_bytes);
        if (bucket_bytes >= env.settings().reduce_bucket_bytes) reduce_bucket(last);
      }
      // A micro-batch's last gradients do not wait for a full bucket.
      if (i + 1 == ops.size() || ops[i + 1].micro_step != op.micro_step) reduce_bucket(last);
    }
    gpu.wait(reduced, WaitCause::Communication, "gradient reduce-scatter");
    gpu.wait(offloaded, WaitCause::Io, "gradient shards to host");

    const Update update = delayed ? previous_step : update_parameters(offloaded);
    gpu.wait(update.stepped, WaitCause::Optimizer, "cpu optimizer");
    gpu.wait(update.uploaded, WaitCause::Io, "parameter shard to gpu");
    gpu.wait(update.gathered, WaitCause::Communication, "parameter all-gather");
  }

 private:
  // Adam over the rank's shard, its fp32 master, m and v in the server's DRAM.
  static void cpu_step(RankEnv& env, double params) {
    const auto t = models::cpu_optimizer_step_times(env.cluster.hw.worker_host, params,
                                                    models::adam_mixed_precision_cost(), models::StatePlacement{1, 0, 0});
    execute_on(env.hosts.cpu, t.total_s);
  }
};

}  // namespace

std::unique_ptr<Schedule> make_zero_offload_schedule(ClusterEnv&) { return std::make_unique<ZeroOffload>(); }

}  // namespace luwu::sim
