// DDP (PyTorch DistributedDataParallel, NCCL ring all-reduce).
//
// Every GPU holds the whole model and its optimizer state.  Backward hands each layer's gradient
// to a bucket; a full bucket is all-reduced on the communication stream while backward goes on.
// Earlier micro-batches of gradient accumulation only accumulate (no_sync).  After the last
// all-reduce, the optimizer steps on the GPU over all parameters.
#include "sim/stream.hpp"
#include "sim/systems/systems.hpp"

namespace luwu::sim {
namespace {

class Ddp : public Schedule {
 public:
  void run_rank(RankEnv& env) override {
    GpuDevice& gpu = env.gpu;
    const auto& trace = env.trace();
    Stream nccl(gpu.name(), "nccl", "communication", gpu.host(), &env.cluster.timeline);
    const int last_micro_step = trace.training.grad_accum - 1;

    CompletionPtr reduced = completed();
    double bucket_bytes = 0;
    int bucket = 0;
    auto all_reduce_bucket = [&] {
      if (bucket_bytes <= 0) return;
      double bytes = bucket_bytes;
      bucket_bytes = 0;
      reduced = nccl.enqueue("all-reduce bucket " + std::to_string(bucket++), [&env, bytes] {
        GpuDevice::LoadScope kernel(env.gpu, GpuDevice::LoadKind::CollectiveKernel);
        env.cluster.collectives.all_reduce("ddp", env.rank(), bytes);
      });
    };

    for (const auto& op : trace.ops) {
      gpu.compute(op_label(trace, op), env.op_time_s(op));
      if (op.kind == workloads::OpKind::Backward && op.micro_step == last_micro_step) {
        bucket_bytes += static_cast<double>(op.grad_bytes);
        if (bucket_bytes >= env.settings().bucket_bytes) all_reduce_bucket();
      }
    }
    all_reduce_bucket();
    gpu.wait(reduced, WaitCause::Communication, "gradient all-reduce");
    gpu.optimizer_step("adam step", env.gpu_optimizer_time_s(static_cast<double>(trace.total_params())));
  }
};

}  // namespace

std::unique_ptr<Schedule> make_ddp_schedule(ClusterEnv&) { return std::make_unique<Ddp>(); }

}  // namespace luwu::sim
