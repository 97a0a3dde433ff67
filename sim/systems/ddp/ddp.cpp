// DDP (PyTorch DistributedDataParallel, NCCL ring all-reduce).
//
// Every GPU holds the whole model and its optimizer state.  Backward hands each layer's gradient
// to a bucket; a full bucket is all-reduced on the communication stream while backward goes on.
// Earlier micro-batches of gradient accumulation only accumulate (no_sync).  After the last
// all-reduce, the optimizer steps on the GPU over all parameters.  With expert parallelism
// (Megatron-Core's DDP, DeepSpeed-MoE) the routed experts' gradients go in buckets of their own,
// all-reduced over the ranks holding the same experts on the same stream.
#include "sim/systems/ddp/ddp.hpp"

#include "sim/engine/stream.hpp"
#include "sim/systems/gpu_collective.hpp"
#include "sim/systems/gradient_buckets.hpp"
#include "sim/systems/model_state.hpp"

namespace luwu::sim {
namespace {

class DdpSchedule : public Schedule {
 public:
  explicit DdpSchedule(const DdpSettings& settings) : settings_(settings) {}

  void run_rank(RankEnv& env) override {
    GpuDevice& gpu = env.gpu;
    const auto& trace = env.trace();
    Stream nccl(gpu.name(), "nccl", "communication", gpu.host(), &env.cluster.timeline);
    const int experts_over = env.expert_parallel();  // 1: no expert parallelism
    const auto buckets = plan_gradient_buckets(trace, settings_.bucket_bytes, BucketedMicroSteps::Last,
                                               experts_over > 1 ? GradientPart::NonExpert : GradientPart::All);
    std::vector<GradientBucket> expert_buckets;
    if (experts_over > 1 && env.data_parallel_size() > experts_over)
      expert_buckets = plan_gradient_buckets(trace, settings_.bucket_bytes, BucketedMicroSteps::Last, GradientPart::Expert);

    CompletionPtr reduced = completed();
    auto bucket = buckets.begin();
    auto expert_bucket = expert_buckets.begin();
    for (std::size_t i = 0; i < trace.ops.size(); ++i) {
      env.compute(trace.ops[i]);
      for (; bucket != buckets.end() && bucket->after_op == i; ++bucket)
        reduced = enqueue_gpu_collective(nccl, env, CollectiveOp::AllReduce, "ddp", bucket->bytes,
                                         "all-reduce bucket " + std::to_string(bucket->index));
      for (; expert_bucket != expert_buckets.end() && expert_bucket->after_op == i; ++expert_bucket)
        reduced = enqueue_expert_all_reduce(nccl, env, experts_over, expert_bucket->bytes,
                                            "all-reduce expert bucket " + std::to_string(expert_bucket->index));
    }
    gpu.wait(reduced, WaitCause::Communication, "gradient all-reduce");
    gpu.optimizer_step("adam step", env.gpu_optimizer_time_s(static_cast<double>(trace.total_params())));
  }

 private:
  DdpSettings settings_;
};

class Ddp : public System {
 public:
  Ddp(const SystemEntry& entry, DdpSettings settings) : System(entry), settings_(settings) {}

  MemoryFootprint memory_footprint(const workloads::Trace& trace, int workers, double gpu_memory) const override {
    return replica_footprint(trace, workers, gpu_memory, settings_.bucket_bytes, name());
  }
  CollectiveSettings collectives() const override { return settings_.collectives; }
  bool folds_data_parallel() const override { return true; }
  bool sends_only_collectives_across_servers() const override { return true; }
  bool supports_expert_parallel() const override { return true; }
  // One all-reduce per bucket of the last micro-step's gradients.
  std::vector<CollectiveCall> collective_calls(const workloads::Trace& trace) const override {
    std::vector<CollectiveCall> calls;
    // (With expert parallelism the experts' buckets are counted as over the whole group: an estimate's upper bound.)
    for (const auto& bucket : plan_gradient_buckets(trace, settings_.bucket_bytes, BucketedMicroSteps::Last))
      calls.push_back({CollectiveOp::AllReduce, static_cast<double>(bucket.bytes), 1});
    return calls;
  }
  std::unique_ptr<Schedule> make_schedule(ClusterEnv&) const override { return make_ddp_schedule(settings_); }

 private:
  DdpSettings settings_;
};

}  // namespace

std::unique_ptr<Schedule> make_ddp_schedule(const DdpSettings& settings) { return std::make_unique<DdpSchedule>(settings); }

SystemPtr parse_ddp(const SystemEntry& entry) {
  entry.only_settings(setting_keys({{"bucket_bytes"}, CollectiveSettings::keys()}));
  DdpSettings s;
  if (entry.has("bucket_bytes")) s.bucket_bytes = entry.at("bucket_bytes").as_positive();
  s.collectives = CollectiveSettings::parse(entry);
  return std::make_shared<Ddp>(entry, s);
}

}  // namespace luwu::sim
