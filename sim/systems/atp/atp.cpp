// ATP (Lao et al., NSDI'21): in-network aggregation for multi-tenant learning.
//
// Every GPU holds the whole model and its optimizer state, as in DDP, and backward fills gradient
// buckets the same way; a full bucket is all-reduced by push-pull through the programmable switch
// and the parameter servers.  Each worker's NIC streams the bucket into the switch, piece by piece
// (in_switch_aggregation.hpp).  Aggregation is best effort: a piece that finds a free aggregator
// (`switch_aggregator_share` of them) is summed in the switch once every worker's copy is in, and
// the sum goes on to the piece's parameter server; the rest pass through to their servers, which
// sum the workers' copies on their CPUs (parameter_servers.hpp).  Either way the server then sends
// the result to the switch, which multicasts it to every worker (ATP's result packet also frees
// the aggregator and acknowledges the workers' packets).  After the last bucket is back, the
// optimizer steps on the GPU.  Earlier micro-batches of gradient accumulation only accumulate.
#include "sim/systems/atp/atp.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <simgrid/s4u/Actor.hpp>

#include "sim/engine/countdown.hpp"
#include "sim/engine/stream.hpp"
#include "sim/engine/transfers.hpp"
#include "sim/systems/gradient_buckets.hpp"
#include "sim/systems/model_state.hpp"

namespace luwu::sim {
namespace {

class AtpSchedule : public Schedule {
 public:
  AtpSchedule(const AtpSettings& settings, ClusterEnv& env)
      : env_(env),
        share_(settings.switch_aggregator_share),
        aggregation_(env, settings.aggregation, "atp"),
        servers_(env, settings.servers, "atp"),
        buckets_(plan_gradient_buckets(env.trace, settings.bucket_bytes, BucketedMicroSteps::Last)) {
    // Pieces cross the network as the switch's integer elements, whichever way they go.
    const double wire_per_grad_byte =
        settings.aggregation.element_bytes / workloads::bytes_per_element(env.trace.training.dtype);
    for (const auto& b : buckets_) {
      aggregation_.add_round(b.bytes * share_);
      servers_.add_round(b.bytes * (1 - share_) * wire_per_grad_byte);
    }
    // Folded with colocated servers (folds_data_parallel: only with every piece in the switch), the
    // servers the pieces' sums go through must be simulated ones.
    if (servers_.servers() < servers_.represented_servers() &&
        std::min(aggregation_.pieces(), servers_.represented_servers()) > servers_.servers())
      throw std::invalid_argument(
          "atp: folded to " + std::to_string(servers_.servers()) + " worker servers, but its " +
          std::to_string(aggregation_.pieces()) + " pieces' sums go through " +
          std::to_string(std::min(aggregation_.pieces(), servers_.represented_servers())) +
          " colocated servers: fold to at least as many servers, or give it dedicated ones");
    const int results = (share_ > 0 ? aggregation_.pieces() : 0) + (share_ < 1 ? servers_.servers() : 0);
    delivered_.assign(env.world(), {});
    for (auto& rank : delivered_)
      for (std::size_t b = 0; b < buckets_.size(); ++b) rank.push_back(std::make_shared<Countdown>(results));
    aggregation_.on_summed([this](std::size_t b, int piece, double bytes) { relay_switch_sum(b, piece, bytes); });
    servers_.on_complete([this](std::size_t b, int s) { sum_fallback(b, s); });
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
        upload.enqueue("push bucket " + std::to_string(b), [this, &env, b] {
          if (share_ > 0) aggregation_.send(env, b);
          if (share_ < 1) servers_.push(env, b);
        });
      }
    }
    for (std::size_t b = 0; b < buckets_.size(); ++b)
      gpu.wait(delivered_[env.rank()][b]->done(), WaitCause::Communication, "push-pull bucket " + std::to_string(b));
    gpu.optimizer_step("adam step", env.gpu_optimizer_time_s(static_cast<double>(trace.total_params())));
  }

 private:
  // The switch summed a piece: it goes to its server and back, then to every worker.  Through the
  // server it is the server's own work (one copy, whatever the workers), which a folded server's
  // slice moves scaled as its links are (parameter_servers.hpp).
  void relay_switch_sum(std::size_t b, int piece, double bytes) {
    const int s = piece % servers_.represented_servers();  // a simulated one, folded (the constructor checks)
    simgrid::s4u::Actor::create("atp result", aggregation_.switch_host(), [this, b, s, bytes] {
      const double relayed = servers_.own_work_bytes(bytes);
      transfer(aggregation_.switch_host(), servers_.host(s), relayed, env_.traffic);
      paced(servers_.memory_bus(s), 2 * relayed, [&] { transfer(servers_.host(s), aggregation_.switch_host(), relayed, env_.traffic); });
      multicast_result(b, bytes);
    });
  }

  // Every worker's fallback shard of bucket b is at server s: its CPU sums them, and the result
  // goes to the switch for its multicast.
  void sum_fallback(std::size_t b, int s) {
    auto summed = servers_.cpu(s).enqueue("sum bucket " + std::to_string(b), [this, b, s] { servers_.sum(s, b); });
    servers_.sender(s).enqueue(
        "result bucket " + std::to_string(b),
        [this, b, s] {
          const double bytes = servers_.shard_bytes(b), sent = servers_.own_work_bytes(bytes);
          paced(servers_.memory_bus(s), sent, [&] { transfer(servers_.host(s), aggregation_.switch_host(), sent, env_.traffic); });
          multicast_result(b, bytes);
        },
        {summed});
  }

  void multicast_result(std::size_t b, double bytes) {
    aggregation_.multicast_to_workers(bytes, DataMover::NicDma, [this, b](int r) { delivered_[r][b]->arrive(); });
  }

  ClusterEnv& env_;
  const double share_;
  InSwitchAggregation aggregation_;
  ParameterServerGroup servers_;
  std::vector<GradientBucket> buckets_;
  std::vector<std::vector<std::shared_ptr<Countdown>>> delivered_;  // [rank][bucket]: results back
};

class Atp : public System {
 public:
  Atp(const SystemEntry& entry, AtpSettings settings) : System(entry), settings_(settings) {}

  // A full replica, as DDP: the switch and the servers only sum.
  MemoryFootprint memory_footprint(const workloads::Trace& trace, int workers, double gpu_memory) const override {
    return replica_footprint(trace, workers, gpu_memory, settings_.bucket_bytes, name());
  }
  std::string capacity_problem(const workloads::Trace&, const Hardware& hw) const override {
    if (!hw.network_switch) return "does not run: atp needs a programmable switch";
    std::string problem;
    settings_.servers.count(hw.parameter_servers, hw.workers / hw.gpus_per_server, problem);
    return problem;
  }
  bool uses_parameter_servers() const override {
    return settings_.servers.placement == ParameterServerSettings::Placement::Dedicated;
  }
  // The switch's side folds as SwitchML's.  Dedicated servers fold as slices of themselves
  // (parameter_servers.hpp); colocated ones, which share a worker server's NIC and DRAM, only
  // when every piece is summed in the switch: then each server relays one copy of its pieces'
  // sums whatever the workers, and the first servers, the simulated ones, are those relaying.
  bool folds_data_parallel() const override {
    return settings_.servers.placement == ParameterServerSettings::Placement::Dedicated ||
           settings_.switch_aggregator_share == 1;
  }
  // Colocated, the pieces' sums go through the first min(pieces, servers) worker servers, which
  // the fold must simulate (the schedule refuses a fold that does not).
  int min_folded_data_parallel(const Hardware& hw) const override {
    if (settings_.servers.placement == ParameterServerSettings::Placement::Dedicated) return 0;
    const int servers = settings_.servers.servers > 0 ? std::min(settings_.servers.servers, hw.worker_servers())
                                                      : hw.worker_servers();
    return std::min(settings_.aggregation.pieces, servers) * std::max(1, hw.gpus_per_server);
  }
  // No GPU collectives: its traffic goes through the switch or its servers, never a ring.
  std::vector<CollectiveCall> collective_calls(const workloads::Trace&) const override { return {}; }
  std::unique_ptr<Schedule> make_schedule(ClusterEnv& env) const override {
    return std::make_unique<AtpSchedule>(settings_, env);
  }

 private:
  AtpSettings settings_;
};

}  // namespace

SystemPtr parse_atp(const SystemEntry& entry) {
  entry.only_settings(setting_keys(
      {{"bucket_bytes", "switch_aggregator_share"}, AggregationSettings::keys(), ParameterServerSettings::keys()}));
  AtpSettings s;
  if (entry.has("bucket_bytes")) s.bucket_bytes = entry.at("bucket_bytes").as_positive();
  if (entry.has("switch_aggregator_share")) {
    s.switch_aggregator_share = entry.at("switch_aggregator_share").as_non_negative();
    if (s.switch_aggregator_share > 1) entry.at("switch_aggregator_share").fail("expected a share in [0, 1]");
  }
  s.aggregation = AggregationSettings::parse(entry);
  s.servers = ParameterServerSettings::parse(entry, s.servers.placement);
  return std::make_shared<Atp>(entry, s);
}

}  // namespace luwu::sim
