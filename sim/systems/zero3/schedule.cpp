#include "sim/systems/zero3/schedule.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <simgrid/s4u/Actor.hpp>

#include "sim/engine/stream.hpp"
#include "sim/systems/gpu_collective.hpp"
#include "sim/systems/model_state.hpp"
#include "sim/systems/param_fetch_replay.hpp"

namespace luwu::sim {
namespace {

// Whether a gather stays inside the server: every one with the partition there, the backward
// pass's (recompute and backward) with a secondary partition there.
bool gathers_in_server(const Zero3Wire& wire, const workloads::Trace& trace, const ParamFetchPlan& plan,
                       const ParamGather& gather) {
  return wire.partition_in_server ||
         (wire.backward_gathers_in_server && trace.ops[plan.uses[gather.first_use].op].kind != workloads::OpKind::Forward);
}

class Zero3Schedule : public Schedule {
 public:
  Zero3Schedule(const Zero3Settings& settings, const Zero3Wire& wire, const workloads::Trace& trace)
      : settings_(settings), wire_(wire), plan_(plan_param_fetches(trace, settings.fetch)) {}

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
    const double weight = wire_.weight_bytes_per_element > 0 ? wire_.weight_bytes_per_element : element;
    const double gradient = wire_.gradient_bytes_per_element > 0 ? wire_.gradient_bytes_per_element : element;
    ParamFetchReplay replay(env, plan_, [&](std::size_t g) {
      const ParamGather& gather = plan_.gathers[g];
      const std::string label = param_use_label(trace, plan_, gather.first_use);
      const auto params = static_cast<double>(gather.params);
      if (gathers_in_server(wire_, trace, plan_, gather))
        return ParamFetchReplay::Issued{nullptr, enqueue_gpu_collective(gather_stream, env, CollectiveOp::AllGatherInServer,
                                                                        "zero3-ag-server", params * element,
                                                                        "all-gather in server " + label)};
      auto gathered = enqueue_gpu_collective(gather_stream, env, CollectiveOp::AllGather, "zero3-ag", params * weight,
                                             "all-gather " + label);
      return ParamFetchReplay::Issued{
          nullptr, codec(gather_stream, env, params * wire_.weight_codec_hbm_bytes_per_element, "dequantize " + label, gathered)};
    }, "all-gather", ParamFetchReplay::GatherWait::AllIssued);
    replay.hook_host_times(settings_.fetch);

    // DeepSpeed's own passes over the gradients around each reduce-scatter (stage3_gradient_passes.hpp),
    // over the group the gradient is reduce-scattered in, on its reduce-and-partition stream (the
    // reduce-scatter between them on the collective stream); ZeRO++'s quantized reduction replaces
    // reduce_scatter_coalesced's interleave and pre-divide.
    const int reduce_group = wire_.partition_in_server ? env.cluster.hw.gpus_per_server : env.data_parallel_size();
    Stage3GradientPasses passes(env, settings_.gradients, reduce_group, false,
                                wire_.gradient_codec_hbm_bytes_per_element == 0);
    CompletionPtr reduced = completed();
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const auto& op = ops[i];
      replay.compute(i);
      if (op.kind == workloads::OpKind::Backward && op.grad_bytes > 0) {
        const double elements = static_cast<double>(op.grad_bytes) / element;
        const std::vector<CompletionPtr> after_bucket = passes.before_reduce(i, op_label(trace, op));
        if (wire_.partition_in_server) {
          enqueue_gpu_collective(reduce_stream, env, CollectiveOp::ReduceScatterInServer, "zero3-rs-server",
                                 elements * gradient, "reduce-scatter in server " + op_label(trace, op), after_bucket);
          reduced = enqueue_gpu_collective(reduce_stream, env, CollectiveOp::AllReduceAcrossServers, "zero3-ar-cross",
                                           elements * gradient / env.cluster.hw.gpus_per_server,
                                           "all-reduce across servers " + op_label(trace, op));
        } else {
          reduced = enqueue_gpu_collective(reduce_stream, env, CollectiveOp::ReduceScatter, "zero3-rs", elements * gradient,
                                           "reduce-scatter " + op_label(trace, op), after_bucket);
        }
        reduced = codec(reduce_stream, env, elements * wire_.gradient_codec_hbm_bytes_per_element,
                        "gradient (de)quantization " + op_label(trace, op), reduced);
        reduced = passes.after_reduce(i, reduced, op_label(trace, op));
      }
    }
    gpu.wait(reduced, WaitCause::Communication, "gradient reduce-scatter");
    const double shard =
        static_cast<double>(trace.total_params()) / (wire_.partition_in_server ? env.cluster.hw.gpus_per_server : env.data_parallel_size());
    gpu.optimizer_step("adam step (shard)", env.gpu_optimizer_time_s(shard));
  }

 private:
  // An elementwise (de)quantization kernel of `hbm_bytes` on the collective stream after `after`,
  // HBM-bound, holding the collective kernel's share of the GPU while it runs; `after` itself
  // when there is none.
  static CompletionPtr codec(Stream& stream, RankEnv& env, double hbm_bytes, std::string label, CompletionPtr after) {
    if (hbm_bytes <= 0) return after;
    return enqueue_stream_kernel(stream, env, hbm_bytes, std::move(label));
  }

  Zero3Settings settings_;
  Zero3Wire wire_;
  ParamFetchPlan plan_;
};

}  // namespace

MemoryFootprint zero3_shards_footprint(const workloads::Trace& trace, int workers, double gpu_memory,
                                       const ParamFetchSettings& fetch) {
  MemoryFootprint f = base_footprint(trace, workers, gpu_memory, false);
  const auto bytes = model_state_bytes(trace.training.dtype);
  const std::uint64_t shard = shard_params(trace.total_params(), workers);
  f.gpu_params_bytes = bytes.param * shard;
  f.gpu_grads_bytes = bytes.grad * shard;
  f.gpu_optimizer_bytes = bytes.optimizer * shard;
  f.gpu_buffer_bytes = gathered_working_set_bytes(trace, fetch);
  return f;
}

std::vector<CollectiveCall> zero3_collective_calls(const Zero3Settings& settings, const Zero3Wire& wire,
                                                   const workloads::Trace& trace) {
  const ParamFetchPlan plan = plan_param_fetches(trace, settings.fetch);
  const double element = workloads::bytes_per_element(trace.training.dtype);
  std::vector<CollectiveCall> calls;
  for (const ParamGather& gather : plan.gathers) {
    calls.push_back({gathers_in_server(wire, trace, plan, gather) ? CollectiveOp::AllGatherInServer : CollectiveOp::AllGather,
                     static_cast<double>(gather.params) * element, 1});
  }
  for (const auto& op : trace.ops) {
    if (op.kind != workloads::OpKind::Backward || op.grad_bytes == 0) continue;
    const auto bytes = static_cast<double>(op.grad_bytes);
    if (wire.partition_in_server) {
      calls.push_back({CollectiveOp::ReduceScatterInServer, bytes, 1});
      calls.push_back({CollectiveOp::AllReduceAcrossServers, bytes, 1});
    } else {
      calls.push_back({CollectiveOp::ReduceScatter, bytes, 1});
    }
  }
  return calls;
}

std::unique_ptr<Schedule> make_zero3_schedule(const Zero3Settings& settings, const Zero3Wire& wire,
                                              const workloads::Trace& trace) {
  return std::make_unique<Zero3Schedule>(settings, wire, trace);
}

}  // namespace luwu::sim
