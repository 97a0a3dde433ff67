// SwitchML-style in-network aggregation data parallelism (Sapio et al., NSDI'21).
//
// Every GPU holds the whole model and its optimizer state, as in DDP, and backward fills gradient
// buckets of `bucket_bytes` the same way; but a full bucket is all-reduced by the programmable
// switch instead of a ring of GPU kernels (in_switch_aggregation.hpp): each worker's NIC streams
// the bucket into the switch, and once every worker's packets of a piece have arrived, the switch
// multicasts the piece's sum to all workers, at the same packet rate, while the next pieces stream
// in.  After the last bucket is back, the optimizer steps on the GPU over all parameters.  Earlier
// micro-batches of gradient accumulation only accumulate (no_sync), as in DDP.
#include "sim/systems/switchml/switchml.hpp"

#include <memory>
#include <string>
#include <vector>

#include "sim/engine/countdown.hpp"
#include "sim/engine/stream.hpp"
#include "sim/systems/gradient_buckets.hpp"
#include "sim/systems/model_state.hpp"
#include "sim/engine/transfers.hpp"

namespace luwu::sim {
namespace {

class SwitchMlSchedule : public Schedule {
 public:
  SwitchMlSchedule(const SwitchMlSettings& settings, ClusterEnv& env)
      : env_(env),
        aggregation_(env, settings.aggregation, "switchml"),
        buckets_(plan_gradient_buckets(env.trace, settings.bucket_bytes, BucketedMicroSteps::Last)) {
    for (const auto& b : buckets_) aggregation_.add_round(b.bytes);
    delivered_.assign(env.world(), {});
    for (auto& rank : delivered_)
      for (std::size_t b = 0; b < buckets_.size(); ++b) rank.push_back(std::make_shared<Countdown>(aggregation_.pieces()));
    aggregation_.on_summed([this](std::size_t b, int, double piece) { multicast_sum(b, piece); });
  }

  void run_rank(RankEnv& env) override {
    GpuDevice& gpu = env.gpu;
    const auto& trace = env.trace();
    Stream upload(gpu.name(), "gradient to switch (nic dma)", "communication", gpu.host(), &env_.timeline);
    auto bucket = buckets_.begin();
    for (std::size_t i = 0; i < trace.ops.size(); ++i) {
      env.compute(trace.ops[i]);
      for (; bucket != buckets_.end() && bucket->after_op == i; ++bucket) {
        const auto b = static_cast<std::size_t>(bucket->index);
        upload.enqueue("aggregate bucket " + std::to_string(b), [this, &env, b] { aggregation_.send(env, b); });
      }
    }
    for (std::size_t b = 0; b < buckets_.size(); ++b)
      gpu.wait(delivered_[env.rank()][b]->done(), WaitCause::Communication,
               "in-network all-reduce bucket " + std::to_string(b));
    gpu.optimizer_step("adam step", env.gpu_optimizer_time_s(static_cast<double>(trace.total_params())));
  }

 private:
  // The switch multicasts a piece's sum to every worker, each leg at the aggregation rate.
  void multicast_sum(std::size_t b, double piece) {
    aggregation_.multicast_to_workers(piece, DataMover::NicDma, [this, b](int r) { delivered_[r][b]->arrive(); });
  }

  ClusterEnv& env_;
  InSwitchAggregation aggregation_;
  std::vector<GradientBucket> buckets_;
  std::vector<std::vector<std::shared_ptr<Countdown>>> delivered_;  // [rank][bucket]: pieces back
};

class SwitchMl : public System {
 public:
  SwitchMl(const SystemEntry& entry, SwitchMlSettings settings) : System(entry), settings_(settings) {}

  // A full replica, as DDP: the switch only changes where gradients are summed.
  MemoryFootprint memory_footprint(const workloads::Trace& trace, int workers, double gpu_memory) const override {
    return replica_footprint(trace, workers, gpu_memory, settings_.bucket_bytes, name());
  }
  std::string capacity_problem(const workloads::Trace&, const Hardware& hw) const override {
    return hw.network_switch ? "" : "does not run: switchml needs a programmable switch";
  }
  // No server side: each worker's stream into the switch and the multicast leg back are its own
  // (the switch's packet rate is shared by D senders, racks counted as represented:
  // in_switch_aggregation.hpp), so the simulated ranks stand for the rest, as LuWu's do.
  bool folds_data_parallel() const override { return true; }
  // No GPU collectives: its traffic goes through the switch or its servers, never a ring.
  std::vector<CollectiveCall> collective_calls(const workloads::Trace&) const override { return {}; }
  std::unique_ptr<Schedule> make_schedule(ClusterEnv& env) const override {
    return std::make_unique<SwitchMlSchedule>(settings_, env);
  }

 private:
  SwitchMlSettings settings_;
};

}  // namespace

SystemPtr parse_switchml(const SystemEntry& entry) {
  entry.only_settings(setting_keys({{"bucket_bytes"}, AggregationSettings::keys()}));
  SwitchMlSettings s;
  if (entry.has("bucket_bytes")) s.bucket_bytes = entry.at("bucket_bytes").as_positive();
  s.aggregation = AggregationSettings::parse(entry);
  return std::make_shared<SwitchMl>(entry, s);
}

}  // namespace luwu::sim
