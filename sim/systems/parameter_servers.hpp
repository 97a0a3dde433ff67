#pragma once
// Parameter servers (Li et al., OSDI'14; BytePS, Jiang et al., OSDI'20): S CPU machines, each
// owning 1/S of every gradient (BytePS partitions each tensor across its servers).  A worker
// pushes each shard to its server; the server sums the workers' copies in its DRAM and then does
// what its system asks (hand the sum back: ATP and BytePS's summation service; or update its
// shard of the model on its CPU and hand the parameters back: model-in-server data parallelism);
// each worker pulls its shards from every server.  A PS has no multicast: it sends every worker
// its own copy.
//
// Placement: dedicated machines (the topology's ps<k>: the luwu-star builder's
// "parameter_servers") or colocated on the workers' servers (their CPUs, DRAM and NICs, BytePS's
// colocated mode), one per worker server.  A server's DRAM is a memory bus (pacing_host.hpp) that
// every byte it receives or sends and every byte its sums and updates read and write goes through.
//
// Folded (ClusterEnv::data_parallel_size() D > world() K, dedicated servers only): a server is not
// symmetric with the workers (its links and DRAM carry all D workers' shards), so each simulated
// server is the K/D slice of itself that the K simulated workers use: its own links (its NIC's, both
// directions, and its PCIe) and its memory bus run at K/D of their rates, the simulated workers'
// shards move in full, and the server's own work (a sum's and an update's DRAM traffic, a result it
// sends once) is scaled by K/D with them.  Where the workers are symmetric, the K flows into a
// server at K/D of its bandwidth each get what each of D gets at all of it, so every time is the
// whole group's; the server's link and memory-bus byte counts are the slice's (results count the
// simulated ranks' traffic), its reported link bandwidth the slice's too (utilization is exact).
// Colocated servers cannot be sliced (their links and DRAM are a worker server's); folded, only the
// simulated worker servers' are here, whole, and only work that does not grow with the workers may
// use them (ATP's relays of the switch's sums: represented_servers() says how many there stand for).
#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Link.hpp>

#include "common/choice.hpp"
#include "models/host.hpp"
#include "sim/engine/countdown.hpp"
#include "sim/engine/pacing_host.hpp"
#include "sim/engine/stream.hpp"
#include "sim/engine/transfers.hpp"
#include "sim/systems/schedule.hpp"
#include "sim/systems/system_entry.hpp"

namespace luwu::sim {

struct ParameterServerSettings {
  enum class Placement { Dedicated, Colocated };
  // Dedicated by default: the paper's plain parameter servers are "extra CPU machines".
  Placement placement = Placement::Dedicated;
  // How many servers: 0 = every dedicated machine the topology has, or one per worker server
  // colocated.  Fewer than those leaves the rest idle.
  int servers = 0;

  static std::vector<std::string> keys() { return {"ps_placement", "parameter_servers"}; }
  static ParameterServerSettings parse(const SystemEntry& entry, Placement default_placement) {
    ParameterServerSettings s;
    s.placement = default_placement;
    if (entry.has("ps_placement"))
      s.placement = static_cast<Placement>(entry.at("ps_placement").as_choice_index({"dedicated", "colocated"}, "ps_placement"));
    s.servers = static_cast<int>(entry.settings().get_int("parameter_servers", 0, 0, 1 << 16));
    return s;
  }
  static const char* placement_name(Placement p) { return p == Placement::Dedicated ? "dedicated" : "colocated"; }

  // How many servers run on a cluster with `dedicated_machines` ps<k> and `worker_servers`
  // servers; sets `problem` to a sentence when they cannot (no machine, or fewer than asked).
  int count(int dedicated_machines, int worker_servers, std::string& problem) const {
    const int available = placement == Placement::Dedicated ? dedicated_machines : worker_servers;
    const int n = servers == 0 ? available : servers;
    if (available == 0)
      problem = "does not run: dedicated parameter servers need CPU machines in the topology (luwu-star "
                "\"parameter_servers\": K), and this cluster has none";
    else if (n > available)
      problem = "does not run: " + std::to_string(n) + " parameter servers asked for, but the cluster has " +
                std::to_string(available) + (placement == Placement::Dedicated ? " parameter-server machines" : " worker servers");
    return n;
  }
};

class ParameterServerGroup {
 public:
  // `on_complete(round, server)` runs, in the actor of the last worker to push, when every
  // worker's shard of a round is at that server.
  using OnComplete = std::function<void(std::size_t round, int server)>;

  ParameterServerGroup(ClusterEnv& env, ParameterServerSettings settings, const std::string& system)
      : env_(env) {
    const bool dedicated = settings.placement == ParameterServerSettings::Placement::Dedicated;
    const bool folded = env.world() < env.data_parallel_size();
    if (folded && dedicated) share_ = static_cast<double>(env.world()) / env.data_parallel_size();
    colocated_and_folded_ = folded && !dedicated;
    // The group's worker servers: folded, whole servers are simulated, so D / (ranks per server).
    const int simulated_servers = server_count(env);
    const int worker_servers =
        folded ? env.data_parallel_size() / (env.world() / simulated_servers) : simulated_servers;
    std::string problem;
    const int n = settings.count(static_cast<int>(env.roles.parameter_servers.size()), worker_servers, problem);
    if (!problem.empty()) throw std::invalid_argument(system + " " + problem);
    // Colocated and folded, only the simulated worker servers' are here (hosts_, below).
    represented_servers_ = n;
    if (settings.placement == ParameterServerSettings::Placement::Dedicated) {
      hosts_.assign(env.roles.parameter_servers.begin(), env.roles.parameter_servers.begin() + n);
      spec_ = *env.hw.parameter_server;
    } else {
      for (const auto& rank : env.roles.ranks)
        if (static_cast<int>(hosts_.size()) < n && std::find(hosts_.begin(), hosts_.end(), rank.cpu) == hosts_.end())
          hosts_.push_back(rank.cpu);
      spec_ = env.hw.worker_host;
    }
    if (share_ < 1) {
      if (env.roles.network_switch == nullptr) throw std::invalid_argument(system + ": folded, but no switch to the servers");
      for (auto* server : hosts_) take_share_of_links(server, env.roles.network_switch);
    }
    for (std::size_t s = 0; s < hosts_.size(); ++s) {
      const std::string name = "ps" + std::to_string(s);
      memory_bus_.push_back(make_pacing_host(name + "/memory bus", {share_ * spec_.dram.achieved_Bps()}));
      cpu_.push_back(std::make_unique<Stream>(name, "sum / update (cpu)", "optimizer", hosts_[s], &env.timeline));
      send_.push_back(std::make_unique<Stream>(name, "send to workers", "communication", hosts_[s], &env.timeline));
    }
  }

  int servers() const { return static_cast<int>(hosts_.size()); }
  // The servers the whole group has: servers(), or, colocated and folded, also those of the worker
  // servers not simulated (which have no host here).
  int represented_servers() const { return represented_servers_; }
  simgrid::s4u::Host* host(int s) const { return hosts_[static_cast<std::size_t>(s)]; }
  simgrid::s4u::Host* memory_bus(int s) const { return memory_bus_[static_cast<std::size_t>(s)]; }
  const models::HostSpec& host_spec() const { return spec_; }
  // Work on server s's CPU, in order (sums, updates); and its sends, in order.
  Stream& cpu(int s) { return *cpu_[static_cast<std::size_t>(s)]; }
  Stream& sender(int s) { return *send_[static_cast<std::size_t>(s)]; }

  // A round is one gradient every worker pushes (a bucket); `bytes` is one worker's copy, split
  // evenly over the servers.  Returns its index.
  std::size_t add_round(double bytes) {
    rounds_.push_back({bytes / servers(), {}});
    for (int s = 0; s < servers(); ++s) rounds_.back().arrivals.push_back(std::make_shared<Countdown>(env_.world()));
    return rounds_.size() - 1;
  }
  void on_complete(OnComplete callback) { on_complete_ = std::move(callback); }
  double shard_bytes(std::size_t round) const { return rounds_[round].shard_bytes; }

  // One worker pushes `fraction` of its copy of the round, a shard to every server at once, from
  // GPU memory by its NIC (the caller's actor or stream waits until all are in).
  void push(RankEnv& env, std::size_t round, double fraction = 1) {
    require_whole_group("push");
    const double shard = rounds_[round].shard_bytes * fraction;
    std::vector<simgrid::s4u::ExecPtr> dram;
    std::vector<simgrid::s4u::CommPtr> flows;
    for (int s = 0; s < servers(); ++s) {
      dram.push_back(start_paced(memory_bus(s), shard));
      flows.push_back(start_transfer(env.gpu.host(), host(s), shard, env_.traffic));
    }
    for (auto& f : flows) f->wait();
    for (auto& d : dram) wait_paced(d);
    for (int s = 0; s < servers(); ++s) {
      auto& all = rounds_[round].arrivals[static_cast<std::size_t>(s)];
      all->arrive();
      if (all->done()->done()) on_complete_(round, s);
    }
  }

  // Server s sums the group's copies of a round's shard in DRAM: reads them and writes the sum.
  void sum(int s, std::size_t round) {
    require_whole_group("sum");
    const int copies = env_.data_parallel_size();
    wait_paced(start_paced(memory_bus(s), own_work_bytes((copies + 1) * rounds_[round].shard_bytes)));
  }

  // Bytes of a server's own work (its DRAM traffic for a sum or an update, a result it sends once)
  // as the folded slice of it moves them: scaled by K/D with its memory bus and links, so they take
  // the time they take on the whole server.  Unfolded: `bytes`.
  double own_work_bytes(double bytes) const { return share_ * bytes; }

  // Server s sends `bytes` to every worker's GPU, each its own copy, all at once;
  // `arrived(rank)` runs as each is in.  Runs in an actor on server s (its sender stream).
  void send_to_workers(int s, double bytes, const std::function<void(int rank)>& arrived) {
    require_whole_group("send to every worker");
    auto dram = start_paced(memory_bus(s), bytes * env_.world());
    std::vector<simgrid::s4u::CommPtr> flows;
    for (int r = 0; r < env_.world(); ++r) flows.push_back(start_transfer(host(s), env_.roles.ranks[r].gpu, bytes, env_.traffic));
    std::vector<int> rank_of(flows.size());
    for (std::size_t r = 0; r < rank_of.size(); ++r) rank_of[r] = static_cast<int>(r);
    while (!flows.empty()) {
      const auto i = static_cast<std::size_t>(simgrid::s4u::Comm::wait_any(flows));
      arrived(rank_of[i]);
      flows.erase(flows.begin() + static_cast<long>(i));
      rank_of.erase(rank_of.begin() + static_cast<long>(i));
    }
    wait_paced(dram);
  }

 private:
  static int server_count(const ClusterEnv& env) {
    auto servers = env.roles.servers();
    std::sort(servers.begin(), servers.end());
    return static_cast<int>(std::unique(servers.begin(), servers.end()) - servers.begin());
  }
  // Folded: the server's links between it and `sw` (its NIC's, both directions, and its PCIe) run
  // at share_ of their bandwidth, once (the groups of a model-parallel layout share the servers).
  void take_share_of_links(simgrid::s4u::Host* server, simgrid::s4u::Host* sw) {
    for (auto [from, to] : {std::pair{server, sw}, std::pair{sw, server}})
      for (auto* link : env_.traffic.route(from, to))
        if (link->get_property(kFoldedShare) == nullptr) {
          link->set_bandwidth(share_ * link->get_bandwidth());
          link->set_property(kFoldedShare, std::to_string(share_));
        }
  }
  static constexpr const char* kFoldedShare = "luwusim folded parameter-server share";
  // Work that grows with the workers needs every server: colocated and folded, most are missing.
  void require_whole_group(const char* what) const {
    if (colocated_and_folded_)
      throw std::logic_error(std::string("colocated parameter servers, folded: ") + what + " needs every worker server's");
  }

  struct Round {
    double shard_bytes;
    std::vector<std::shared_ptr<Countdown>> arrivals;  // [server]: workers' shards in
  };
  ClusterEnv& env_;
  double share_ = 1;  // dedicated and folded: K/D, else 1
  bool colocated_and_folded_ = false;
  int represented_servers_ = 0;
  std::vector<simgrid::s4u::Host*> hosts_;
  models::HostSpec spec_;
  std::vector<simgrid::s4u::Host*> memory_bus_;
  std::vector<std::unique_ptr<Stream>> cpu_, send_;
  std::vector<Round> rounds_;
  OnComplete on_complete_;
};

}  // namespace luwu::sim
