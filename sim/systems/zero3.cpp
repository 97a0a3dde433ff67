// ZeRO-3 (DeepSpeed stage 3 / FSDP): parameters, gradients and optimizer state partitioned 1/N.
//
// Forward, per layer: all-gather the layer's parameters (issued `prefetch_layers` layers ahead, on
// their own stream), compute, free.  Backward, per layer: all-gather again (once for recompute and
// backward), compute, reduce-scatter the gradient on a second stream; every micro-batch's gradient
// is reduce-scattered into the local shard.  Then the optimizer steps on the GPU over P/N params.
#include <vector>

#include "sim/rank_env.hpp"
#include "sim/stream.hpp"

namespace luwu::sim {
namespace {

// Ops whose parameters must be gathered first: forward of each layer, and the first op of each
// layer in backward (recompute then backward reuse one gather).
std::vector<bool> ops_needing_gather(const workloads::Trace& trace) {
  std::vector<bool> needs(trace.ops.size());
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    const auto& op = trace.ops[i];
    bool reuses = op.kind == workloads::OpKind::Backward && i > 0 &&
                  trace.ops[i - 1].kind == workloads::OpKind::Recompute && trace.ops[i - 1].layer == op.layer;
    needs[i] = op.param_bytes > 0 && !reuses;
  }
  return needs;
}

}  // namespace

void run_zero3_rank(RankEnv& env) {
  GpuDevice& gpu = env.gpu;
  const auto& ops = env.trace.ops;
  Stream gather_stream(gpu.name(), "all-gather", "communication", gpu.host(), &env.timeline);
  Stream reduce_stream(gpu.name(), "reduce-scatter", "communication", gpu.host(), &env.timeline);

  const std::vector<bool> needs_gather = ops_needing_gather(env.trace);
  std::vector<std::size_t> gather_ops;  // indices of ops that gather, in order
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (needs_gather[i]) gather_ops.push_back(i);

  std::vector<CompletionPtr> gathered(ops.size());
  std::size_t issued = 0;  // gathers issued so far
  auto issue_gathers_through = [&](std::size_t count) {
    for (; issued < std::min(count, gather_ops.size()); ++issued) {
      std::size_t i = gather_ops[issued];
      double bytes = static_cast<double>(ops[i].param_bytes);
      gathered[i] = gather_stream.enqueue("all-gather " + op_label(env.trace, ops[i]), [&env, &gpu, bytes] {
        GpuDevice::LoadScope kernel(gpu, GpuDevice::LoadKind::CollectiveKernel);
        env.collectives.all_gather("zero3-ag", env.rank(), bytes);
      });
    }
  };

  CompletionPtr reduced = completed();
  std::size_t gathers_needed = 0;  // gathers the ops so far depend on
  CompletionPtr params_ready = completed();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    if (needs_gather[i]) {
      ++gathers_needed;
      issue_gathers_through(gathers_needed + static_cast<std::size_t>(env.settings.prefetch_layers));
      params_ready = gathered[i];
    }
    gpu.wait(params_ready, WaitCause::Communication, "all-gather " + op_label(env.trace, op));
    gpu.compute(op_label(env.trace, op), env.op_time_s(op));
    if (op.kind == workloads::OpKind::Backward && op.grad_bytes > 0) {
      double bytes = static_cast<double>(op.grad_bytes);
      reduced = reduce_stream.enqueue("reduce-scatter " + op_label(env.trace, op), [&env, &gpu, bytes] {
        GpuDevice::LoadScope kernel(gpu, GpuDevice::LoadKind::CollectiveKernel);
        env.collectives.reduce_scatter("zero3-rs", env.rank(), bytes);
      });
    }
  }
  gpu.wait(reduced, WaitCause::Communication, "gradient reduce-scatter");
  const double shard = static_cast<double>(env.trace.total_params()) / env.world;
  gpu.optimizer_step("adam step (shard)", env.gpu_optimizer_time_s(shard));
}

}  // namespace luwu::sim
