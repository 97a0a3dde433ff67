#pragma once
// In-switch gradient aggregation (SwitchML, Sapio et al. NSDI'21; LuWu's switch): each worker's NIC
// streams a gradient into the programmable switch by DMA, as packets of integer elements
// (`element_bytes` each on the wire), in `pieces` pieces.  The switch keeps a pool of aggregation
// slots and each worker keeps at most that many packets in flight, clocked by the results coming
// back, so a worker sends at
//   min(line rate at the packet's payload, slots x payload / RTT)
// (also bounded by the switch's packet rate shared by the workers: models/switch.hpp).  Once every
// worker's copy of a piece has arrived, the switch holds its sum and hands it on: multicast back to
// the workers (SwitchML) or forward to the optimizer node (LuWu).
#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <simgrid/s4u/Actor.hpp>

#include "sim/engine/countdown.hpp"
#include "sim/engine/pacing_host.hpp"
#include "sim/systems/data_mover.hpp"
#include "sim/systems/schedule.hpp"
#include "sim/engine/transfers.hpp"
#include "sim/systems/system_entry.hpp"

namespace luwu::sim {

struct AggregationSettings {
  // A gradient crosses the switch in this many pieces, so sending, summing and handing on
  // pipeline (a piece is handed on once it has fully arrived).
  int pieces = 16;
  // Bytes per gradient element on the wire.  4: 32-bit fixed point, which the switch's integer
  // ALUs add (SwitchML, section 4).
  double element_bytes = 4;

  // Each piece is a flow per worker (and a multicast leg per worker): past 1024 pieces a gradient's
  // pipelining gains nothing and the flows only cost simulation time.
  static constexpr int kMaxPieces = 1024;

  static std::vector<std::string> keys() { return {"pipeline_chunks", "aggregation_element_bytes"}; }
  static AggregationSettings parse(const SystemEntry& entry) {
    AggregationSettings s;
    s.pieces = static_cast<int>(entry.settings().get_int("pipeline_chunks", s.pieces, 1, kMaxPieces));
    if (entry.has("aggregation_element_bytes")) s.element_bytes = entry.at("aggregation_element_bytes").as_positive();
    return s;
  }
};

class InSwitchAggregation {
 public:
  // `on_summed(round, piece, piece_wire_bytes)` runs, in the actor of the last worker to arrive,
  // when every worker's copy of a piece of a round is in the switch.
  using OnSummed = std::function<void(std::size_t round, int piece, double piece_wire_bytes)>;

  InSwitchAggregation(ClusterEnv& env, AggregationSettings settings, const std::string& system)
      : env_(env), settings_(settings) {
    if (!env.roles.network_switch || !env.hw.network_switch)
      throw std::invalid_argument(system + " needs a programmable switch that aggregates between the workers");
    switch_ = env.roles.network_switch;
    const double rtt = 2 * env.traffic.route_latency_s(env.roles.ranks.front().gpu, switch_);
    const double payload = env.hw.network_switch->payload_bytes();
    rate_Bps_ = env.hw.network_switch->aggregation_throughput_Bps(rtt, env.hw.worker_nic.goodput_Bps(payload),
                                                                    env.world());
  }

  // A round is one gradient every worker sends (a bucket, a layer's gradient); returns its index.
  std::size_t add_round(double grad_bytes) {
    rounds_.push_back({grad_bytes, {}});
    for (int c = 0; c < settings_.pieces; ++c) rounds_.back().arrivals.push_back(std::make_shared<Countdown>(env_.world()));
    return rounds_.size() - 1;
  }
  void on_summed(OnSummed callback) { on_summed_ = std::move(callback); }

  // One worker sends its copy of the round, piece by piece (from the worker's actor or stream), by
  // its NIC's DMA or by a GPU kernel issued when `issued_after` kernels had launched (data_mover.hpp).
  void send(RankEnv& env, std::size_t round, DataMover mover = DataMover::NicDma, std::uint64_t issued_after = 0) {
    const double piece = piece_wire_bytes(round);
    DataMoverScope moving(env.gpu, mover, issued_after);
    for (int c = 0; c < settings_.pieces; ++c) {
      paced(moving.pace(), piece, [&] { transfer(env.gpu.host(), switch_, piece, env_.traffic, rate_Bps_); });
      auto& all = rounds_[round].arrivals[static_cast<std::size_t>(c)];
      all->arrive();
      if (all->done()->done()) on_summed_(round, c, piece);
    }
  }

  // The switch multicasts a piece of a sum to every worker, each leg at the aggregation rate
  // (SwitchML's and ATP's all-reduce), written into GPU memory by the NIC's DMA or received by a
  // GPU kernel (paced by the GPU's receive engine; the caller's kernel holds the SMs);
  // `arrived(rank)` runs once the worker's leg is in.
  void multicast_to_workers(double piece, DataMover mover, std::function<void(int rank)> arrived) {
    for (int r = 0; r < env_.world(); ++r)
      simgrid::s4u::Actor::create("multicast leg", switch_, [this, r, piece, mover, arrived] {
        GpuDevice& gpu = *env_.gpus[r];
        if (mover == DataMover::GpuKernel) {
          paced(gpu.receive_engine(), piece, [&] { transfer(switch_, env_.roles.ranks[r].gpu, piece, env_.traffic, rate_Bps_); });
        } else {
          GpuDevice::LoadScope dma(gpu, GpuDevice::LoadKind::NicDma);
          transfer(switch_, env_.roles.ranks[r].gpu, piece, env_.traffic, rate_Bps_);
        }
        arrived(r);
      });
  }

  double piece_wire_bytes(std::size_t round) const {
    const double wire_per_grad_byte = settings_.element_bytes / workloads::bytes_per_element(env_.trace.training.dtype);
    return rounds_[round].grad_bytes / settings_.pieces * wire_per_grad_byte;
  }
  int pieces() const { return settings_.pieces; }
  double rate_Bps() const { return rate_Bps_; }
  // A further bound on each worker's sending rate (a SmartNIC's push limit, models/smartnic.hpp).
  void cap_rate_Bps(double cap_Bps) { rate_Bps_ = std::min(rate_Bps_, cap_Bps); }
  simgrid::s4u::Host* switch_host() const { return switch_; }

 private:
  struct Round {
    double grad_bytes;
    std::vector<std::shared_ptr<Countdown>> arrivals;  // [piece]: workers arrived
  };
  ClusterEnv& env_;
  AggregationSettings settings_;
  simgrid::s4u::Host* switch_ = nullptr;
  double rate_Bps_ = 0;
  std::vector<Round> rounds_;
  OnSummed on_summed_;
};

}  // namespace luwu::sim
