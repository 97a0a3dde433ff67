#pragma once
// In-switch gradient aggregation (SwitchML, Sapio et al. NSDI'21; LuWu's switch): each worker's NIC
// streams a gradient into the programmable switch by DMA, as packets of integer elements
// (`element_bytes` each on the wire), in `pieces` pieces.  The switch keeps a pool of aggregation
// slots and each worker keeps at most that many packets in flight, clocked by the results coming
// back, so a worker sends at
//   min(line rate at the packet's payload, slots x payload / RTT)
// (also bounded by the switch's packet rate shared by the workers: models/switch.hpp).  Once every
// worker's copy of a piece has arrived, the switch holds its sum and hands it on: multicast back to
// the workers (SwitchML) or forward to the optimizer node (LuWu).  With racks (ClusterRoles::racked)
// aggregation is hierarchical (the paper's multi-rack LuWu): a top-of-rack switch sums its rack's
// copies and streams the sum into the cluster switch, which sums the racks'.  With pods
// (ClusterRoles::podded) there are three levels: the rack's sum goes to its pod switch, which sums
// its racks' and streams one sum per piece into the cluster switch, which sums the pods'.
#include <cmath>
#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <simgrid/s4u/Actor.hpp>

#include "sim/engine/countdown.hpp"
#include "sim/engine/pacing_host.hpp"
#include "sim/engine/stream.hpp"
#include "sim/systems/data_mover.hpp"
#include "sim/systems/schedule.hpp"
#include "sim/systems/switch_multicast.hpp"
#include "sim/engine/transfers.hpp"
#include "sim/systems/system_entry.hpp"

namespace luwu::sim {

struct AggregationSettings {
  // A gradient crosses the switch in this many pieces, so sending, summing and handing on
  // pipeline (a piece is handed on once it has fully arrived).
  int pieces = 16;
  // Bytes per gradient element on the wire.  4: 32-bit fixed point, which the switch's integer
  // ALUs add (SwitchML, section 4).  LuWu parses its own default (luwu.cpp: 2).
  double element_bytes = 4;

  // Each piece is a flow per worker (and a multicast leg per worker): past 1024 pieces a gradient's
  // pipelining gains nothing and the flows only cost simulation time.
  static constexpr int kMaxPieces = 1024;

  static std::vector<std::string> keys() { return {"pipeline_chunks", "aggregation_element_bytes"}; }
  static AggregationSettings parse(const SystemEntry& entry, double default_element_bytes = 4) {
    AggregationSettings s;
    s.element_bytes = default_element_bytes;
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
    multicast_ = std::make_unique<SwitchMulticast>(env, switch_, system + " multicast");
    const auto& sw = *env.hw.network_switch;
    const double payload = sw.payload_bytes();
    const double goodput = env.hw.worker_nic.goodput_Bps(payload);
    if (!env.roles.racked()) {
      const double rtt = 2 * env.traffic.route_latency_s(env.roles.ranks.front().gpu, switch_);
      rate_Bps_ = sw.aggregation_throughput_Bps(rtt, goodput, env.data_parallel_size());
      return;
    }
    // Two levels, each switch with its own slot pool: a rack's workers stream into their
    // top-of-rack switch, which streams the rack's sum into the cluster switch as one sender of
    // many.  Trunks run at the workers' line rate (topologies/builders.hpp, luwu-star racks).
    const auto& roles = env.roles;
    racks_.resize(roles.rack_switches.size());
    for (int r = 0; r < env.world(); ++r) racks_[static_cast<std::size_t>(roles.ranks[r].rack)].ranks.push_back(r);
    // A data-parallel group of a model-parallel layout may leave racks empty: they send nothing.
    std::size_t largest = 0;
    for (const auto& rack : racks_) {
      largest = std::max(largest, rack.ranks.size());
      if (!rack.ranks.empty()) ++occupied_racks_;
    }
    const double rtt = 2 * env.traffic.route_latency_s(roles.ranks.front().gpu, roles.rack_switches.front());
    rate_Bps_ = sw.aggregation_throughput_Bps(rtt, goodput, static_cast<int>(largest));
    // A folded group (ClusterEnv::data_parallel_size) stands for that many times its racks.
    const auto represented = [&env](int count) {
      return static_cast<int>(std::ceil(static_cast<double>(count) * env.data_parallel_size() / env.world()));
    };
    const int represented_racks = represented(occupied_racks_);
    if (!roles.podded()) {
      const double trunk_rtt = 2 * env.traffic.route_latency_s(roles.rack_switches.front(), switch_);
      trunk_rate_Bps_ = sw.aggregation_throughput_Bps(trunk_rtt, goodput, represented_racks);
    } else {
      // Three levels: the racks' sums into their pod switch, the pods' into the cluster switch.
      pods_.resize(roles.pod_switches.size());
      for (std::size_t k = 0; k < racks_.size(); ++k)
        if (!racks_[k].ranks.empty()) pods_[static_cast<std::size_t>(roles.pod_of_rack[k])].occupied_racks++;
      int largest_pod = 0;
      for (const auto& pod : pods_) {
        largest_pod = std::max(largest_pod, pod.occupied_racks);
        if (pod.occupied_racks > 0) ++occupied_pods_;
      }
      const int represented_pods = represented(occupied_pods_);
      // A pod switch's senders: its occupied racks; folded, the represented racks spread over the
      // represented pods (at least the largest pod's).
      const int racks_per_pod = std::max(largest_pod, (represented_racks + represented_pods - 1) / represented_pods);
      const double trunk_rtt = 2 * env.traffic.route_latency_s(roles.rack_switches.front(), roles.pod_switches.front());
      trunk_rate_Bps_ = sw.aggregation_throughput_Bps(trunk_rtt, goodput, racks_per_pod);
      const double pod_rtt = 2 * env.traffic.route_latency_s(roles.pod_switches.front(), switch_);
      pod_trunk_rate_Bps_ = sw.aggregation_throughput_Bps(pod_rtt, goodput, represented_pods);
      for (std::size_t j = 0; j < pods_.size(); ++j)
        if (pods_[j].occupied_racks > 0)
          pods_[j].uplink = std::make_unique<Stream>("pod" + std::to_string(j), "pod sum -> cluster switch", "communication",
                                                   roles.pod_switches[j], &env.timeline);
    }
    // Streams (an actor each) only for racks with ranks: a folded group of a large cluster leaves
    // most of its racks empty, and an actor per rack per group exceeds the process's memory maps.
    for (std::size_t k = 0; k < racks_.size(); ++k)
      if (!racks_[k].ranks.empty())
        racks_[k].uplink = std::make_unique<Stream>("tor" + std::to_string(k),
                                                  pods_.empty() ? "rack sum -> cluster switch" : "rack sum -> pod switch",
                                                  "communication", roles.rack_switches[k], &env.timeline);
  }

  // A round is one gradient every worker sends (a bucket, a layer's gradient); returns its index.
  std::size_t add_round(double grad_bytes) {
    Round round{grad_bytes, {}, {}, {}};
    const int senders = racks_.empty() ? env_.world() : pods_.empty() ? occupied_racks_ : occupied_pods_;
    for (int c = 0; c < settings_.pieces; ++c) {
      round.arrivals.push_back(std::make_shared<Countdown>(senders));
      for (const auto& rack : racks_)
        round.rack_arrivals.push_back(
            rack.ranks.empty() ? nullptr : std::make_shared<Countdown>(static_cast<int>(rack.ranks.size())));
      for (const auto& pod : pods_)
        round.pod_arrivals.push_back(pod.occupied_racks == 0 ? nullptr : std::make_shared<Countdown>(pod.occupied_racks));
    }
    rounds_.push_back(std::move(round));
    return rounds_.size() - 1;
  }
  void on_summed(OnSummed callback) { on_summed_ = std::move(callback); }

  // One worker sends its copy of the round, piece by piece (from the worker's actor or stream), by
  // its NIC's DMA or by a GPU kernel issued when `issued_after` kernels had launched (data_mover.hpp).
  // With racks, its top-of-rack switch forwards the rack's sum of each piece once the rack's
  // copies are in.
  void send(RankEnv& env, std::size_t round, DataMover mover = DataMover::NicDma, std::uint64_t issued_after = 0) {
    const double piece = piece_wire_bytes(round);
    const int rack = env.hosts.rack;
    simgrid::s4u::Host* first_hop = rack < 0 ? switch_ : env_.roles.rack_switches[static_cast<std::size_t>(rack)];
    DataMoverScope moving(env.gpu, mover, issued_after);
    for (int c = 0; c < settings_.pieces; ++c) {
      paced(moving.pace(), piece, [&] { transfer(env.gpu.host(), first_hop, piece, env_.traffic, rate_Bps_); });
      if (rack < 0) {
        arrive_at_top(round, c, piece);
        continue;
      }
      auto& in_rack = rounds_[round].rack_arrivals[static_cast<std::size_t>(c) * racks_.size() + static_cast<std::size_t>(rack)];
      in_rack->arrive();
      if (!in_rack->done()->done()) continue;
      racks_[static_cast<std::size_t>(rack)].uplink->enqueue("rack sum", [this, round, c, piece, rack] {
        const auto k = static_cast<std::size_t>(rack);
        if (pods_.empty()) {
          transfer(env_.roles.rack_switches[k], switch_, piece, env_.traffic, trunk_rate_Bps_);
          arrive_at_top(round, c, piece);
          return;
        }
        const int pod = env_.roles.pod_of_rack[k];
        const auto j = static_cast<std::size_t>(pod);
        transfer(env_.roles.rack_switches[k], env_.roles.pod_switches[j], piece, env_.traffic, trunk_rate_Bps_);
        auto& in_pod = rounds_[round].pod_arrivals[static_cast<std::size_t>(c) * pods_.size() + j];
        in_pod->arrive();
        if (!in_pod->done()->done()) return;
        pods_[j].uplink->enqueue("pod sum", [this, round, c, piece, j] {
          transfer(env_.roles.pod_switches[j], switch_, piece, env_.traffic, pod_trunk_rate_Bps_);
          arrive_at_top(round, c, piece);
        });
      });
    }
  }

  // The switch multicasts a piece of a sum to every worker, each leg at the aggregation rate
  // (SwitchML's and ATP's all-reduce), written into GPU memory by the NIC's DMA or received by a
  // GPU kernel (paced by the GPU's receive engine; the caller's kernel holds the SMs);
  // `arrived(rank)` runs once the worker's leg is in.
  void multicast_to_workers(double piece, DataMover mover, SwitchMulticast::Arrived arrived) {
    if (mover == DataMover::NicDma) {
      multicast_->send(piece, rate_Bps_, std::move(arrived));
      return;
    }
    for (int r = 0; r < env_.world(); ++r)
      simgrid::s4u::Actor::create("multicast leg", switch_, [this, r, piece, arrived] {
        paced(env_.gpus[r]->receive_engine(), piece,
              [&] { transfer(switch_, env_.roles.ranks[r].gpu, piece, env_.traffic, rate_Bps_); });
        arrived(r);
      });
  }

  // Every sender's copy of piece c (a worker's, or with racks a rack's sum) is in the top switch.
  void arrive_at_top(std::size_t round, int c, double piece) {
    auto& all = rounds_[round].arrivals[static_cast<std::size_t>(c)];
    all->arrive();
    if (all->done()->done()) on_summed_(round, c, piece);
  }

  // Anything else the top switch holds (LuWu's parameters from the optimizer node) to every
  // worker, the last hop at most rate_Bps (<= 0: its max-min share).
  void multicast(double bytes, double rate_Bps, SwitchMulticast::Arrived arrived) {
    multicast_->send(bytes, rate_Bps, std::move(arrived));
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
    std::vector<std::shared_ptr<Countdown>> arrivals;       // [piece]: workers (or racks) in the top switch
    std::vector<std::shared_ptr<Countdown>> rack_arrivals;  // [piece * racks + rack]: the rack's workers in its switch
    std::vector<std::shared_ptr<Countdown>> pod_arrivals;   // [piece * pods + pod]: the pod's occupied racks in its switch
  };
  struct Rack {
    std::vector<int> ranks;
    std::unique_ptr<Stream> uplink;  // the top-of-rack switch's sums to the cluster (or its pod) switch, in order
  };
  struct Pod {
    int occupied_racks = 0;          // its racks with at least one rank
    std::unique_ptr<Stream> uplink;  // the pod switch's sums to the cluster switch, in order
  };
  ClusterEnv& env_;
  AggregationSettings settings_;
  simgrid::s4u::Host* switch_ = nullptr;
  double rate_Bps_ = 0;        // per worker into its first switch
  double trunk_rate_Bps_ = 0;  // per rack switch into the cluster (or its pod) switch
  double pod_trunk_rate_Bps_ = 0;  // per pod switch into the cluster switch
  std::vector<Rack> racks_;    // empty without racks
  std::vector<Pod> pods_;      // empty without pods
  int occupied_racks_ = 0;     // racks with at least one rank
  int occupied_pods_ = 0;      // pods with at least one occupied rack
  std::vector<Round> rounds_;
  OnSummed on_summed_;
  std::unique_ptr<SwitchMulticast> multicast_;
};

}  // namespace luwu::sim
