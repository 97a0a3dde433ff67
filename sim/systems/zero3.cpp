// ZeRO-3 (DeepSpeed stage 3 / FSDP): parameters, gradients and optimizer state partitioned 1/N.
//
// Forward, per layer: all-gather the layer's parameters (issued `prefetch_layers` layers ahead, on
// their own stream), compute, free.  Backward, per layer: all-gather again (once for recompute and
// backward), compute, reduce-scatter the gradient on a second stream; every micro-batch's gradient
// is reduce-scattered into the local shard.  Then the optimizer steps on the GPU over P/N params.
#include <algorithm>
#include <vector>

#include "sim/stream.hpp"
#include "sim/systems/systems.hpp"

namespace luwu::sim {
namespace {

class Zero3 : public Schedule {
 public:
  void run_rank(RankEnv& env) override {
    GpuDevice& gpu = env.gpu;
    const auto& trace = env.trace();
    const auto& ops = trace.ops;
    Stream gather_stream(gpu.name(), "all-gather", "communication", gpu.host(), &env.cluster.timeline);
    Stream reduce_stream(gpu.name(), "reduce-scatter", "communication", gpu.host(), &env.cluster.timeline);

    const std::vector<bool> needs_params = ops_needing_params(trace);
    std::vector<std::size_t> gather_ops;  // indices of ops that gather, in order
    for (std::size_t i = 0; i < ops.size(); ++i)
      if (needs_params[i]) gather_ops.push_back(i);

    std::vector<CompletionPtr> gathered(ops.size());
    std::size_t issued = 0;
    auto issue_gathers_through = [&](std::size_t count) {
      for (; issued < std::min(count, gather_ops.size()); ++issued) {
        std::size_t i = gather_ops[issued];
        double bytes = static_cast<double>(ops[i].param_bytes);
        gathered[i] = gather_stream.enqueue("all-gather " + op_label(trace, ops[i]), [&env, bytes] {
          GpuDevice::LoadScope kernel(env.gpu, GpuDevice::LoadKind::CollectiveKernel);
          env.cluster.collectives.all_gather("zero3-ag", env.rank(), bytes);
        });
      }
    };

    CompletionPtr reduced = completed();
    CompletionPtr params_ready = completed();
    std::size_t gathers_needed = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const auto& op = ops[i];
      if (needs_params[i]) {
        ++gathers_needed;
        issue_gathers_through(gathers_needed + static_cast<std::size_t>(env.settings().prefetch_layers));
        params_ready = gathered[i];
      }
      gpu.wait(params_ready, WaitCause::Communication, "all-gather " + op_label(trace, op));
      gpu.compute(op_label(trace, op), env.op_time_s(op));
      if (op.kind == workloads::OpKind::Backward && op.grad_bytes > 0) {
        double bytes = static_cast<double>(op.grad_bytes);
        reduced = reduce_stream.enqueue("reduce-scatter " + op_label(trace, op), [&env, bytes] {
          GpuDevice::LoadScope kernel(env.gpu, GpuDevice::LoadKind::CollectiveKernel);
          env.cluster.collectives.reduce_scatter("zero3-rs", env.rank(), bytes);
        });
      }
    }
    gpu.wait(reduced, WaitCause::Communication, "gradient reduce-scatter");
    const double shard = static_cast<double>(trace.total_params()) / env.world();
    gpu.optimizer_step("adam step (shard)", env.gpu_optimizer_time_s(shard));
  }
};

}  // namespace

std::unique_ptr<Schedule> make_zero3_schedule(ClusterEnv&) { return std::make_unique<Zero3>(); }

}  // namespace luwu::sim
