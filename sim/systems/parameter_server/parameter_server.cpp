// Model-in-server data parallelism (parameter_servers.hpp).
//
// Every GPU holds the model's parameters in training precision and computes its gradients; the
// optimizer state and fp32 master weights live on the parameter servers, each owning 1/S of every
// parameter.  Backward fills gradient buckets as DDP's; a full bucket is pushed, a shard to each
// server, while backward goes on.  Once a server has every worker's shard of a bucket, its CPU
// sums them and, at the last micro-batch of gradient accumulation, runs Adam over its shard from
// DRAM; then it sends the updated parameters to every worker.  Earlier micro-batches only
// accumulate on the GPU (no_sync).  The iteration ends when every worker has pulled every bucket.
#include "sim/systems/parameter_server/parameter_server.hpp"

#include <memory>
#include <string>
#include <vector>

#include <simgrid/s4u/Actor.hpp>

#include "sim/engine/countdown.hpp"
#include "sim/engine/stream.hpp"
#include "sim/systems/gradient_buckets.hpp"
#include "sim/systems/model_state.hpp"

namespace luwu::sim {
namespace {

class ParameterServerSchedule : public Schedule {
 public:
  ParameterServerSchedule(const ParameterServerSystemSettings& settings, ClusterEnv& env)
      : env_(env),
        servers_(env, settings.servers, "parameter-server"),
        buckets_(plan_gradient_buckets(env.trace, settings.bucket_bytes, BucketedMicroSteps::Last)) {
    for (const auto& b : buckets_) servers_.add_round(b.bytes);
    delivered_.assign(env.world(), {});
    for (auto& rank : delivered_)
      for (std::size_t b = 0; b < buckets_.size(); ++b) rank.push_back(std::make_shared<Countdown>(servers_.servers()));
    servers_.on_complete([this](std::size_t b, int s) { update_and_send(b, s); });
  }

  void run_rank(RankEnv& env) override {
    GpuDevice& gpu = env.gpu;
    const auto& trace = env.trace();
    Stream push(gpu.name(), "push to parameter servers", "communication", gpu.host(), &env_.timeline);
    auto bucket = buckets_.begin();
    for (std::size_t i = 0; i < trace.ops.size(); ++i) {
      env.compute(trace.ops[i]);
      for (; bucket != buckets_.end() && bucket->after_op == i; ++bucket) {
        const auto b = static_cast<std::size_t>(bucket->index);
        push.enqueue("push bucket " + std::to_string(b), [this, &env, b] { servers_.push(env, b); });
      }
    }
    for (std::size_t b = 0; b < buckets_.size(); ++b)
      gpu.wait(delivered_[env.rank()][b]->done(), WaitCause::Communication, "pull bucket " + std::to_string(b));
  }

 private:
  // Server s has every worker's shard of bucket b: sum, update (Adam over its shard, state in
  // DRAM), then send the parameters back.
  void update_and_send(std::size_t b, int s) {
    const std::string label = "bucket " + std::to_string(b);
    auto updated = servers_.cpu(s).enqueue("sum + adam " + label, [this, b, s] {
      servers_.sum(s, b);
      const double params = servers_.shard_bytes(b) / workloads::bytes_per_element(env_.trace.training.dtype);
      const auto cost = adam_cost(env_.trace.training.dtype);
      const auto t = models::cpu_optimizer_step_times(servers_.host_spec(), params, cost, models::StatePlacement{});
      // The update's DRAM traffic shares the server's memory bus; its arithmetic takes compute_s.
      auto dram = start_paced(servers_.memory_bus(s),
                              servers_.own_work_bytes(params * (cost.bytes_read_per_param + cost.bytes_written_per_param)));
      simgrid::s4u::this_actor::sleep_for(t.compute_s);
      wait_paced(dram);
    });
    servers_.sender(s).enqueue(
        "parameters " + label,
        [this, b, s] { servers_.send_to_workers(s, servers_.shard_bytes(b), [this, b](int r) { delivered_[r][b]->arrive(); }); },
        {updated});
  }

  ClusterEnv& env_;
  ParameterServerGroup servers_;
  std::vector<GradientBucket> buckets_;
  std::vector<std::vector<std::shared_ptr<Countdown>>> delivered_;  // [rank][bucket]: servers' shards back
};

class ParameterServerSystem : public System {
 public:
  ParameterServerSystem(const SystemEntry& entry, ParameterServerSystemSettings settings)
      : System(entry), settings_(settings) {}

  // Parameters and gradients on every GPU (gradients in their buckets, one bucket staged); the
  // optimizer state (fp32 master, m, v) and an fp32 gradient sum on the servers.
  MemoryFootprint memory_footprint(const workloads::Trace& trace, int workers, double gpu_memory) const override {
    MemoryFootprint f = replica_footprint(trace, workers, gpu_memory, settings_.bucket_bytes, name());
    f.gpu_optimizer_bytes = 0;
    judge_footprint(f, name(), gpu_memory, "every GPU holds the parameters; the optimizer state is on the servers");
    return f;
  }
  std::string capacity_problem(const workloads::Trace& trace, const Hardware& hw) const override {
    std::string problem;
    const bool dedicated = settings_.servers.placement == ParameterServerSettings::Placement::Dedicated;
    const int n = settings_.servers.count(hw.parameter_servers, hw.workers / hw.gpus_per_server, problem);
    if (!problem.empty()) return problem;
    const models::HostSpec& host = dedicated ? *hw.parameter_server : hw.worker_host;
    const auto bytes = model_state_bytes(trace.training.dtype);
    const double per_server =
        static_cast<double>(trace.total_params()) / n * static_cast<double>(bytes.optimizer + 4 /* fp32 sum */);
    if (per_server > host.dram.capacity_bytes)
      return does_not_fit(std::string("a parameter server's DRAM (optimizer state and fp32 gradient sum of ") +
                              std::to_string(n) + "-way shards)",
                          per_server, host.dram.capacity_bytes);
    return "";
  }
  bool uses_parameter_servers() const override {
    return settings_.servers.placement == ParameterServerSettings::Placement::Dedicated;
  }
  // Dedicated servers fold as slices of themselves (parameter_servers.hpp); colocated ones share
  // their NICs and DRAM with the workers of their server, which a slice cannot stand for.
  bool folds_data_parallel() const override {
    return settings_.servers.placement == ParameterServerSettings::Placement::Dedicated;
  }
  // No GPU collectives: its traffic goes through the switch or its servers, never a ring.
  std::vector<CollectiveCall> collective_calls(const workloads::Trace&) const override { return {}; }
  std::unique_ptr<Schedule> make_schedule(ClusterEnv& env) const override {
    return std::make_unique<ParameterServerSchedule>(settings_, env);
  }

 private:
  ParameterServerSystemSettings settings_;
};

}  // namespace

SystemPtr parse_parameter_server(const SystemEntry& entry) {
  entry.only_settings(setting_keys({{"bucket_bytes"}, ParameterServerSettings::keys()}));
  ParameterServerSystemSettings s;
  if (entry.has("bucket_bytes")) s.bucket_bytes = entry.at("bucket_bytes").as_positive();
  s.servers = ParameterServerSettings::parse(entry, ParameterServerSettings::Placement::Dedicated);
  return std::make_shared<ParameterServerSystem>(entry, s);
}

}  // namespace luwu::sim
