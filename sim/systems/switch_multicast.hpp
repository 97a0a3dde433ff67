#pragma once
// A switch replicating data to the workers (LuWu's parameter multicast, SwitchML's and ATP's
// results): each piece becomes one leg per worker, from the switch into the worker GPU's memory by
// its NIC's DMA.  With racks (ClusterRoles::racked) the cluster switch sends one leg per rack to
// its top-of-rack switch, which replicates it to the rack's workers as soon as it is in (the
// paper's multi-rack LuWu: parameters multicast down the aggregation tree).  With pods
// (ClusterRoles::podded) the cluster switch sends one leg per occupied pod to its pod switch, which
// sends one leg per occupied rack of the pod to the rack's switch.
// Long-lived actors carry the legs, so a multicast costs flows, not actors:
// - each switch's replicator starts a piece's legs the moment it is handed the piece (a rate-capped
//   leg must be started on its source: sim/engine/transfers.hpp);
// - each destination's receive port takes its legs in the order they were sent, holds a worker
//   GPU's DMA load (GpuDevice::LoadKind::NicDma) while any is in flight, and reports each arrival.
// Taking them in order is exact for what a worker waits on: it consumes what it is sent in that
// order (a layer's pieces, then the next layer's), and while an earlier leg still flows the DMA
// load is on anyway.
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Mutex.hpp>

#include "sim/engine/gpu_device.hpp"
#include "sim/engine/transfers.hpp"
#include "sim/systems/schedule.hpp"

namespace luwu::sim {

class SwitchMulticast {
 public:
  // Runs, in the worker's receive port, once rank's leg of a piece is in its GPU's memory.
  using Arrived = std::function<void(int rank)>;

  SwitchMulticast(ClusterEnv& env, simgrid::s4u::Host* top_switch, const std::string& name) {
    const auto& roles = env.roles;
    if (!roles.racked()) {
      top_ = make_replicator(env, top_switch, all_ranks(env), name, {});
      return;
    }
    std::vector<std::vector<int>> racks(roles.rack_switches.size());
    for (int r = 0; r < env.world(); ++r) racks[static_cast<std::size_t>(roles.ranks[r].rack)].push_back(r);
    // A model-parallel layout's data-parallel group may leave racks (and pods) empty: they get no leg.
    std::vector<std::vector<Replicator*>> pod_tors(roles.pod_switches.size());
    for (std::size_t k = 0; k < racks.size(); ++k)
      if (!racks[k].empty()) {
        tors_.push_back(make_replicator(env, roles.rack_switches[k], racks[k], name + " rack" + std::to_string(k), {}));
        if (roles.podded()) pod_tors[static_cast<std::size_t>(roles.pod_of_rack[k])].push_back(tors_.back().get());
      }
    // The trunk legs, one per rack (or pod), go at their max-min share: the workers' SmartNIC caps
    // apply to the last hop.
    std::vector<Replicator*> below;
    if (!roles.podded()) {
      for (auto& tor : tors_) below.push_back(tor.get());
    } else {
      for (std::size_t j = 0; j < pod_tors.size(); ++j)
        if (!pod_tors[j].empty()) {
          pods_.push_back(make_replicator(env, roles.pod_switches[j], {}, name + " pod" + std::to_string(j), pod_tors[j]));
          below.push_back(pods_.back().get());
        }
    }
    top_ = make_replicator(env, top_switch, {}, name, below);
  }

  // The top switch holds a piece of `bytes`: one leg per worker, the last hop at most rate_Bps
  // (<= 0: its max-min share of the route).  Any actor may call it.
  void send(double bytes, double rate_Bps, Arrived arrived) {
    top_->send(Piece{bytes, rate_Bps, std::make_shared<Arrived>(std::move(arrived))});
  }

 private:
  struct Piece {
    double bytes = 0;
    double rate_Bps = -1;
    std::shared_ptr<Arrived> arrived;
  };

  // One switch: its destinations are ranks (workers) or, at the top of racks, the racks' switches.
  class Replicator {
   public:
    struct Leg {
      simgrid::s4u::CommPtr flow;
      Piece piece;
    };
    struct Port {
      simgrid::s4u::Host* host = nullptr;
      GpuDevice* gpu = nullptr;  // its DMA load while legs are in flight (workers only)
      int rank = -1;             // the worker's rank, or -1 for a rack switch
      Replicator* below = nullptr;  // a rack switch's own replicator
      simgrid::s4u::MutexPtr mutex = simgrid::s4u::Mutex::create();
      simgrid::s4u::ConditionVariablePtr leg_ready = simgrid::s4u::ConditionVariable::create();
      std::deque<Leg> legs;
    };

    Replicator(ClusterEnv& env, simgrid::s4u::Host* sw) : env_(env), switch_(sw) {}
    simgrid::s4u::Host* switch_host() const { return switch_; }

    void add_port(std::unique_ptr<Port> port, const std::string& name) {
      Port* p = port.get();
      ports_.push_back(std::move(port));
      simgrid::s4u::Actor::create(name, p->host, [p] { receive(*p); })->daemonize();
    }
    void start(const std::string& name) {
      simgrid::s4u::Actor::create(name, switch_, [this] { replicate(); })->daemonize();
    }
    void send(Piece piece) {
      std::unique_lock lock(*mutex_);
      pieces_.push_back(std::move(piece));
      piece_ready_->notify_all();
    }

   private:
    void replicate() {
      for (;;) {
        Piece piece;
        {
          std::unique_lock lock(*mutex_);
          piece_ready_->wait(lock, [this] { return !pieces_.empty(); });
          piece = std::move(pieces_.front());
          pieces_.pop_front();
        }
        for (auto& port : ports_) {
          const double rate = port->rank >= 0 ? piece.rate_Bps : -1;
          auto flow = start_transfer(switch_, port->host, piece.bytes, env_.traffic, rate);
          std::unique_lock lock(*port->mutex);
          port->legs.push_back(Leg{std::move(flow), piece});
          port->leg_ready->notify_all();
        }
      }
    }

    static void receive(Port& port) {
      std::optional<GpuDevice::LoadScope> dma;
      for (;;) {
        Leg leg;
        {
          std::unique_lock lock(*port.mutex);
          if (port.legs.empty()) {
            dma.reset();
            port.leg_ready->wait(lock, [&port] { return !port.legs.empty(); });
          }
          leg = std::move(port.legs.front());
          port.legs.pop_front();
        }
        if (port.gpu != nullptr && !dma) dma.emplace(*port.gpu, GpuDevice::LoadKind::NicDma);
        leg.flow->wait();
        if (port.below != nullptr)
          port.below->send(std::move(leg.piece));
        else
          (*leg.piece.arrived)(port.rank);
      }
    }

    ClusterEnv& env_;
    simgrid::s4u::Host* switch_;
    simgrid::s4u::MutexPtr mutex_ = simgrid::s4u::Mutex::create();
    simgrid::s4u::ConditionVariablePtr piece_ready_ = simgrid::s4u::ConditionVariable::create();
    std::deque<Piece> pieces_;
    std::vector<std::unique_ptr<Port>> ports_;
  };

  static std::vector<int> all_ranks(const ClusterEnv& env) {
    std::vector<int> ranks(static_cast<std::size_t>(env.world()));
    for (int r = 0; r < env.world(); ++r) ranks[static_cast<std::size_t>(r)] = r;
    return ranks;
  }

  // A replicator to these ranks and to the switches below it (racks', or pods').
  static std::unique_ptr<Replicator> make_replicator(ClusterEnv& env, simgrid::s4u::Host* sw, const std::vector<int>& ranks,
                                                     const std::string& name, const std::vector<Replicator*>& below) {
    auto replicator = std::make_unique<Replicator>(env, sw);
    for (std::size_t k = 0; k < below.size(); ++k) {
      auto port = std::make_unique<Replicator::Port>();
      // The switch's own host: racks a group leaves empty have no replicator, so the k-th
      // replicator is not always rack k's.
      port->host = below[k]->switch_host();
      port->below = below[k];
      replicator->add_port(std::move(port), name + " rack port " + std::to_string(k));
    }
    for (int r : ranks) {
      auto port = std::make_unique<Replicator::Port>();
      port->host = env.gpus[r]->host();
      port->gpu = env.gpus[r];
      port->rank = r;
      replicator->add_port(std::move(port), name + " receive port " + std::to_string(r));
    }
    replicator->start(name + " replicator");
    return replicator;
  }

  std::vector<std::unique_ptr<Replicator>> tors_;  // with racks: one per occupied rack switch
  std::vector<std::unique_ptr<Replicator>> pods_;  // with pods: one per occupied pod switch
  std::unique_ptr<Replicator> top_;
};

}  // namespace luwu::sim
