// DDP (PyTorch DistributedDataParallel, NCCL ring all-reduce).
//
// Every GPU holds the whole model and its optimizer state.  Backward hands each layer's gradient
// to a bucket; a full bucket is all-reduced on the communication stream while backward goes on.
// Earlier micro-batches of gradient accumulation only accumulate (no_sync).  After the last
// all-reduce, the optimizer steps on the GPU over all parameters.
#include "sim/rank_env.hpp"
#include "sim/stream.hpp"

namespace luwu::sim {

void run_ddp_rank(RankEnv& env) {
  GpuDevice& gpu = env.gpu;
  Stream nccl(gpu.name(), "nccl", "communication", gpu.host(), &env.timeline);
  const int last_micro_step = env.trace.training.grad_accum - 1;

  CompletionPtr reduced = completed();
  double bucket_bytes = 0;
  int bucket = 0;
  auto all_reduce_bucket = [&] {
    if (bucket_bytes <= 0) return;
    double bytes = bucket_bytes;
    bucket_bytes = 0;
    reduced = nccl.enqueue("all-reduce bucket " + std::to_string(bucket++), [&env, &gpu, bytes] {
      GpuDevice::LoadScope kernel(gpu, GpuDevice::LoadKind::CollectiveKernel);
      env.collectives.all_reduce("ddp", env.rank(), bytes);
    });
  };

  for (const auto& op : env.trace.ops) {
    gpu.compute(op_label(env.trace, op), env.op_time_s(op));
    if (op.kind == workloads::OpKind::Backward && op.micro_step == last_micro_step) {
      bucket_bytes += static_cast<double>(op.grad_bytes);
      if (bucket_bytes >= env.settings.bucket_bytes) all_reduce_bucket();
    }
  }
  all_reduce_bucket();
  gpu.wait(reduced, WaitCause::Communication, "gradient all-reduce");
  gpu.optimizer_step("adam step", env.gpu_optimizer_time_s(static_cast<double>(env.trace.total_params())));
}

}  // namespace luwu::sim
