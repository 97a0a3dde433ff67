#pragma once
// The collectives a data-parallel rank issues (all-reduce, all-gather, reduce-scatter over all
// ranks), choosing the algorithm for the cluster's shape: a flat ring, hierarchical (inside a
// multi-GPU server over NVLink/NVSwitch, across servers over the network), PAT, or per call by
// NCCL's tuning rule ("auto", collective_tuning.hpp).  Each stream tag gets its own groups, so
// collectives on different streams never share mailboxes.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <simgrid/s4u/Host.hpp>

#include "sim/engine/collective_tuning.hpp"
#include "sim/engine/collectives.hpp"
#include "sim/engine/fold_share.hpp"

namespace luwu::sim {

class DataParallelCollectives {
 public:
  // server_of_rank: which server each rank's GPU is in (ranks of a server are contiguous or not;
  // local order follows rank order).
  // engines: each rank's collective engine (GpuDevice::collective_engine, nullptr for none), which
  // paces the groups that cross the network (the whole world, and the cross-server groups);
  // empty for none.  Inside a server (NVLink) nothing paces: the measured drop is the network's.
  // aggregator: the switch that reduces for InNetwork (std::invalid_argument when it is needed and
  // nullptr).
  // Pat: one GPU per server (or uneven servers, or one server): PAT over all ranks; several GPUs
  // per server: rings inside the servers and PAT across them (as hierarchical does with rings).
  // Auto: the algorithm NCCL's tuning predicts fastest, per call (collective_tuning.hpp, `tuning`).
  DataParallelCollectives(std::vector<simgrid::s4u::Host*> gpu_hosts, std::vector<int> server_of_rank,
                          CollectiveAlgorithm algorithm, CollectiveContext context,
                          std::vector<simgrid::s4u::Host*> engines = {}, simgrid::s4u::Host* aggregator = nullptr,
                          CollectiveTuning tuning = {});

  void all_reduce(const std::string& tag, int rank, double buffer_bytes);
  void all_gather(const std::string& tag, int rank, double buffer_bytes);
  void reduce_scatter(const std::string& tag, int rank, double buffer_bytes);
  // One NCCL Reduce of each rank's shard to that rank, back to back (ring_reduce_to_owners),
  // whatever the algorithm, NCCL's Reduce having only the ring: over the ring of all ranks, or,
  // with several GPUs in each of several servers, a reduce-scatter inside each server and the
  // reduces across servers among the GPUs of one local index (NCCL's channels leave a server
  // through every GPU's NIC).
  void reduce_to_owners(const std::string& tag, int rank, double buffer_bytes);
  // An all-gather among the GPUs of the rank's server only (a ring over NVLink): each gets the
  // server's shards of a buffer of buffer_bytes (ZeRO++'s secondary partition, hpZ).
  void all_gather_in_server(const std::string& tag, int rank, double buffer_bytes);
  // A reduce-scatter among the GPUs of the rank's server only: each keeps the server's sum of its
  // 1/G of the buffer (hierarchical partitioning).
  void reduce_scatter_in_server(const std::string& tag, int rank, double buffer_bytes);
  // An all-reduce among the ranks of the same local index across servers (a ring, or reduced in
  // the switch with "in-network"): the servers' sums of one shard of buffer_bytes.
  void all_reduce_across_servers(const std::string& tag, int rank, double buffer_bytes);
  // A ring all-reduce among the ranks congruent to `rank` modulo `stride`: with experts spread over
  // `stride` consecutive ranks (expert parallelism), the ranks holding the same experts.
  void all_reduce_strided(const std::string& tag, int rank, int stride, double buffer_bytes);

  // Prefixes the names of its groups' mailboxes: several instances in one simulation (one per
  // tensor x pipeline slice of a model-parallel layout) must not share them.
  void set_group_prefix(std::string prefix) { prefix_ = std::move(prefix); }

  // Folding: these ranks stand for a data-parallel group of `ranks` that is symmetric on the
  // topology, in servers holding as many of its ranks as these do; collectives over the world and
  // across servers size their shards and count their steps for the whole group
  // (CommGroup::represents), the servers' own groups are unchanged.  std::invalid_argument unless
  // `ranks` >= the world fills whole servers and the world spans at least two servers evenly (a
  // cross-server ring needs a simulated neighbour).
  // `load`, on a network whose links the left-out ranks share (fold_share.hpp): every data-parallel
  // group whose rings load the links with this one's, this one included (the group whose first
  // host is this one's first).  A folded ring then moves no faster than its represented ring's
  // slowest flow among all those rings on their own routes.
  void represent(int ranks, std::shared_ptr<FoldLoad> load = nullptr);

  int world_size() const { return static_cast<int>(hosts_.size()); }
  // The group the collectives size themselves for: world_size(), or what it represents.
  int represented_size() const { return represented_ > 0 ? represented_ : world_size(); }
  const CollectiveContext& context() const { return context_; }
  CollectiveAlgorithm algorithm() const { return algorithm_; }
  // What Auto runs for one collective of `bytes` (the configured algorithm otherwise); the same on
  // every rank, so the ranks of a collective agree.
  CollectiveAlgorithm algorithm_for(CollectiveKind kind, double bytes);
  // The cluster's shape and routes as the Auto rule sees them (routes looked up on first use).
  const CollectiveShape& shape();

 private:
  // Which represented rings a folded group's shares stand for (CommGroup::fold_shares).
  enum class FoldRings { None, World, Cross };
  const CommGroup& group(const std::string& name, const std::vector<int>& ranks, bool paced, int represents = 0,
                         FoldRings rings = FoldRings::None);
  int per_server() const { return static_cast<int>(ranks_of_server_.begin()->second.size()); }
  const CommGroup& world(const std::string& tag);
  const CommGroup& local(const std::string& tag, int rank);
  const CommGroup& cross(const std::string& tag, int rank);
  // The group across servers (or the world, with one GPU per server), through the aggregator.
  const InNetworkGroup& in_network(const std::string& tag, int rank);
  bool one_per_server() const { return ranks_of_server_.begin()->second.size() == 1; }
  // PAT across servers with rings inside (several GPUs in each of several even servers).
  bool pat_across_servers() const { return several_gpus_in_several_even_servers(); }
  bool several_gpus_in_several_even_servers() const {
    return even_servers_ && !one_per_server() && ranks_of_server_.size() > 1;
  }
  // The longest latency and narrowest bandwidth of the routes from each rank of every group to the
  // ranks `distances` after it (in group order); the groups span `servers` servers each.
  GroupRoutes routes_of(const std::vector<std::vector<int>>& groups, const std::vector<int>& distances, int servers);

  std::vector<simgrid::s4u::Host*> hosts_;
  std::vector<simgrid::s4u::Host*> engines_;
  std::vector<int> server_of_rank_;
  std::vector<int> local_index_;                 // index of the rank inside its server
  std::vector<int> cross_index_;                 // index of the rank among ranks with its local index
  std::map<int, std::vector<int>> ranks_of_server_;
  std::map<int, std::vector<int>> ranks_of_local_index_;
  CollectiveAlgorithm algorithm_;
  CollectiveContext context_;
  std::map<std::string, CommGroup> groups_;
  std::string prefix_;
  simgrid::s4u::Host* aggregator_ = nullptr;
  std::map<std::string, InNetworkGroup> in_network_groups_;
  bool even_servers_ = true;
  CollectiveTuning tuning_;
  int represented_ = 0;  // folded: the group's ranks; 0: the world
  std::shared_ptr<FoldLoad> fold_load_;
  std::size_t fold_group_ = 0;  // this group's place in fold_load_
  // The share of simulated rank `rank`'s ring (world or cross), and the pacing host that gives it
  // (nullptr: no share, the ring's flows share nothing).
  const FoldShare& fold_share(int rank, bool cross);
  simgrid::s4u::Host* fold_share_host(int rank, bool cross);
  bool shape_known_ = false;
  CollectiveShape shape_;
};

// Why simulated ranks, `ranks_per_server` of them in each server they occupy, cannot stand for a
// data-parallel group of `represented` (folding), or "" when they can: they must fill two or more
// servers evenly (a ring across servers needs a simulated neighbour) and stand for whole servers.
// DataParallelCollectives::represent checks it on the platform; simulate checks it on the topology
// before a simulation process builds the platform.
std::string fold_problem(const std::map<int, int>& ranks_per_server, int represented);

}  // namespace luwu::sim
