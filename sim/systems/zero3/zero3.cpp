// ZeRO-3 (DeepSpeed stage 3 / FSDP): parameters, gradients and optimizer state partitioned 1/N.
//
// Forward: each sub-module's parameters are all-gathered before it runs and freed after, prefetched
// as DeepSpeed's coordinator does (or per layer, FSDP-style: param_fetch_plan.hpp).  Backward:
// gathered again where they were freed, and each layer's gradient reduce-scattered after its
// backward, on the same collective stream in issue order unless "collective_streams" is
// "separate" (gpu_collective.hpp); every micro-batch's gradient is reduce-scattered into the
// local shard.  Then the optimizer steps on the GPU over P/N params.
#include "sim/systems/zero3/zero3.hpp"

#include <algorithm>


#include "sim/systems/zero3/schedule.hpp"

namespace luwu::sim {
namespace {

class Zero3 : public System {
 public:
  Zero3(const SystemEntry& entry, Zero3Settings settings) : System(entry), settings_(settings) {}

  // A 1/N shard of parameters, gradients and optimizer state; the gathered parameters in flight.
  MemoryFootprint memory_footprint(const workloads::Trace& trace, int workers, double gpu_memory) const override {
    MemoryFootprint f = zero3_shards_footprint(trace, workers, gpu_memory, settings_.fetch);
    judge_footprint(f, name(), gpu_memory);
    return f;
  }
  CollectiveSettings collectives() const override { return settings_.collectives; }
  bool folds_data_parallel() const override { return true; }
  bool sends_only_collectives_across_servers() const override { return true; }
  std::optional<DeepSpeedEstimate> deepspeed_estimate(const workloads::Trace& trace, const Hardware& hw) const override {
    return estimate_zero3_model_states(static_cast<double>(trace.total_params()), largest_submodule_params(trace),
                                       hw.gpus_per_server, hw.worker_servers(), false, false);
  }
  std::vector<CollectiveCall> collective_calls(const workloads::Trace& trace) const override {
    return zero3_collective_calls(settings_, Zero3Wire{}, trace);
  }
  std::unique_ptr<Schedule> make_schedule(ClusterEnv& env) const override {
    return make_zero3_schedule(settings_, Zero3Wire{}, env.trace);
  }

 private:
  Zero3Settings settings_;
};

}  // namespace

SystemPtr parse_zero3(const SystemEntry& entry) {
  entry.only_settings(Zero3Settings::keys());
  return std::make_shared<Zero3>(entry, Zero3Settings::parse(entry));
}

}  // namespace luwu::sim
