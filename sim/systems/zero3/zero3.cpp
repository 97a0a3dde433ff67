// ZeRO-3 (DeepSpeed stage 3 / FSDP): parameters, gradients and optimizer state partitioned 1/N.
//
// Forward: each sub-module's parameters are all-gathered before it runs and freed after, prefetched
// as DeepSpeed's coordinator does (or per layer, FSDP-style: param_fetch_plan.hpp).  Backward:
// gathered again where they were freed, and each layer's gradient reduce-scattered after its
// backward, on the same collective stream in issue order unless "collective_streams" is
// "separate" (gpu_collective.hpp); every micro-batch's gradient is reduce-scattered into the
// local shard.  Then the optimizer steps on the GPU over P/N params.
#include "sim/systems/zero3/zero3.hpp"

#include <optional>
#include <vector>

#include "sim/engine/stream.hpp"
#include "sim/systems/gpu_collective.hpp"
#include "sim/systems/model_state.hpp"
#include "sim/systems/param_fetch_replay.hpp"

namespace luwu::sim {
namespace {

class Zero3Schedule : public Schedule {
 public:
  Zero3Schedule(const Zero3Settings& settings, const workloads::Trace& trace)
      : settings_(settings), plan_(plan_param_fetches(trace, settings.fetch)) {}

  void run_rank(RankEnv& env) override {
    GpuDevice& gpu = env.gpu;
    const auto& trace = env.trace();
    const auto& ops = trace.ops;
    const bool one = settings_.streams.one_stream;
    Stream gather_stream(gpu.name(), one ? "collectives" : "all-gather", "communication", gpu.host(), &env.cluster.timeline);
    std::optional<Stream> reduce_own;  // its own stream only when asked for
    if (!one) reduce_own.emplace(gpu.name(), "reduce-scatter", "communication", gpu.host(), &env.cluster.timeline);
    Stream& reduce_stream = one ? gather_stream : *reduce_own;

    const double element = workloads::bytes_per_element(trace.training.dtype);
    ParamFetchReplay replay(env, plan_, [&](std::size_t g) {
      const ParamGather& gather = plan_.gathers[g];
      return ParamFetchReplay::Issued{
          nullptr, enqueue_gpu_collective(gather_stream, env, CollectiveOp::AllGather, "zero3-ag",
                                          static_cast<double>(gather.params) * element,
                                          "all-gather " + param_use_label(trace, plan_, gather.first_use))};
    });

    CompletionPtr reduced = completed();
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const auto& op = ops[i];
      replay.compute(i);
      if (op.kind == workloads::OpKind::Backward && op.grad_bytes > 0)
        reduced = enqueue_gpu_collective(reduce_stream, env, CollectiveOp::ReduceScatter, "zero3-rs",
                                         static_cast<double>(op.grad_bytes), "reduce-scatter " + op_label(trace, op));
    }
    gpu.wait(reduced, WaitCause::Communication, "gradient reduce-scatter");
    const double shard = static_cast<double>(trace.total_params()) / env.world();
    gpu.optimizer_step("adam step (shard)", env.gpu_optimizer_time_s(shard));
  }

 private:
  Zero3Settings settings_;
  ParamFetchPlan plan_;
};

class Zero3 : public System {
 public:
  Zero3(const SystemEntry& entry, Zero3Settings settings) : System(entry), settings_(settings) {}

  // A 1/N shard of parameters, gradients and optimizer state; the gathered parameters in flight.
  MemoryFootprint memory_footprint(const workloads::Trace& trace, int workers, double gpu_memory) const override {
    MemoryFootprint f = base_footprint(trace, workers, gpu_memory, false);
    const auto bytes = model_state_bytes(trace.training.dtype);
    const std::uint64_t shard = shard_params(trace.total_params(), workers);
    f.gpu_params_bytes = bytes.param * shard;
    f.gpu_grads_bytes = bytes.grad * shard;
    f.gpu_optimizer_bytes = bytes.optimizer * shard;
    f.gpu_buffer_bytes = gathered_working_set_bytes(trace, settings_.fetch);
    judge_footprint(f, name(), gpu_memory);
    return f;
  }
  CollectiveSettings collectives() const override { return settings_.collectives; }
  std::unique_ptr<Schedule> make_schedule(ClusterEnv& env) const override {
    return std::make_unique<Zero3Schedule>(settings_, env.trace);
  }

 private:
  Zero3Settings settings_;
};

}  // namespace

SystemPtr parse_zero3(const SystemEntry& entry) {
  entry.only_settings(
      setting_keys({ParamFetchSettings::keys(), CollectiveSettings::keys(), CollectiveStreamSettings::keys()}));
  return std::make_shared<Zero3>(entry, Zero3Settings{ParamFetchSettings::parse(entry), CollectiveSettings::parse(entry),
                                                      CollectiveStreamSettings::parse(entry)});
}

}  // namespace luwu::sim
