#include "sim/engine/data_parallel_collectives.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>
#include <simgrid/s4u/Link.hpp>

#include "sim/engine/fold_share.hpp"
#include "sim/engine/pacing_host.hpp"
#include "sim/engine/pat_collectives.hpp"

namespace luwu::sim {

DataParallelCollectives::DataParallelCollectives(std::vector<simgrid::s4u::Host*> gpu_hosts,
                                                 std::vector<int> server_of_rank, CollectiveAlgorithm algorithm,
                                                 CollectiveContext context,
                                                 std::vector<simgrid::s4u::Host*> engines,
                                                 simgrid::s4u::Host* aggregator, CollectiveTuning tuning)
    : hosts_(std::move(gpu_hosts)),
      engines_(std::move(engines)),
      server_of_rank_(std::move(server_of_rank)),
      algorithm_(algorithm),
      context_(context),
      aggregator_(aggregator),
      tuning_(tuning) {
  if (algorithm_ == CollectiveAlgorithm::InNetwork && aggregator_ == nullptr)
    throw std::invalid_argument(
        "collective_algorithm \"in-network\" needs a switch that reduces between the workers (SHARP-capable or "
        "programmable); this cluster's workers reach none");
  if (server_of_rank_.size() != hosts_.size()) throw std::invalid_argument("one server index per rank expected");
  if (!engines_.empty() && engines_.size() != hosts_.size()) throw std::invalid_argument("one engine per rank expected");
  for (int r = 0; r < world_size(); ++r) {
    auto& local = ranks_of_server_[server_of_rank_[r]];
    local_index_.push_back(static_cast<int>(local.size()));
    local.push_back(r);
  }
  for (int r = 0; r < world_size(); ++r) {
    auto& cross = ranks_of_local_index_[local_index_[r]];
    cross_index_.push_back(static_cast<int>(cross.size()));
    cross.push_back(r);
  }
  // Hierarchical needs every server to hold the same number of ranks; otherwise use the ring.
  std::size_t per_server = ranks_of_server_.begin()->second.size();
  for (auto& [server, ranks] : ranks_of_server_)
    if (ranks.size() != per_server) {
      even_servers_ = false;
      if (algorithm_ == CollectiveAlgorithm::Hierarchical) algorithm_ = CollectiveAlgorithm::Ring;
      if (algorithm_ == CollectiveAlgorithm::InNetwork)
        throw std::invalid_argument("collective_algorithm \"in-network\" needs the same number of GPUs in every server");
    }
  if (algorithm_ == CollectiveAlgorithm::Hierarchical && (per_server == 1 || ranks_of_server_.size() == 1))
    algorithm_ = CollectiveAlgorithm::Ring;
}

void DataParallelCollectives::represent(int ranks, std::shared_ptr<FoldLoad> load) {
  if (!groups_.empty()) throw std::logic_error("represent() after the first collective");
  if (ranks == world_size()) return;
  const std::string what = "a data-parallel group folded to " + std::to_string(world_size()) + " ranks: ";
  if (ranks < world_size()) throw std::invalid_argument(what + "cannot stand for " + std::to_string(ranks));
  std::map<int, int> ranks_per_server;
  for (const auto& [server, ranks_there] : ranks_of_server_) ranks_per_server[server] = static_cast<int>(ranks_there.size());
  if (const std::string why = fold_problem(ranks_per_server, ranks); !why.empty()) throw std::invalid_argument(what + why);
  represented_ = ranks;
  shape_known_ = false;
  if (!load) return;
  const auto& groups = load->groups();
  fold_group_ = groups.size();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].hosts.size() != static_cast<std::size_t>(ranks) || groups[g].servers.size() != groups[g].hosts.size())
      throw std::invalid_argument(what + "a represented group's load must list each of its " + std::to_string(ranks) +
                                  " ranks with its server");
    if (groups[g].hosts.front() == hosts_.front()) fold_group_ = g;
  }
  if (fold_group_ == groups.size()) throw std::logic_error("a folded group's load does not list the group itself");
  fold_load_ = std::move(load);
  // The pacing hosts must exist before the simulation starts: made here, looked up by name later.
  // Every algorithm's reduces to each owner run the world's ring or the cross-server ones
  // (reduce_to_owners: NCCL's Reduce is a ring only), so both kinds are made whatever the algorithm.
  for (int r = 0; r < world_size(); ++r) {
    fold_share_host(r, false);
    if (!one_per_server()) fold_share_host(r, true);
  }
}

const FoldShare& DataParallelCollectives::fold_share(int rank, bool cross) {
  return fold_load_->shares(fold_group_, cross, *context_.traffic)
      .at(cross ? static_cast<std::size_t>(local_index_[static_cast<std::size_t>(rank)]) : 0);
}

simgrid::s4u::Host* DataParallelCollectives::fold_share_host(int rank, bool cross) {
  if (!fold_load_) return nullptr;
  const FoldShare& share = fold_share(rank, cross);
  if (!std::isfinite(share.rate_Bps)) return nullptr;
  return make_pacing_host(fmt::format("fold-share/{}/{}", cross ? "cross" : "world",
                                      hosts_[static_cast<std::size_t>(rank)]->get_name()),
                          {share.rate_Bps});
}

const CommGroup& DataParallelCollectives::group(const std::string& name, const std::vector<int>& ranks, bool paced,
                                                int represents, FoldRings rings) {
  auto it = groups_.find(name);
  if (it != groups_.end()) return it->second;
  CommGroup g{prefix_ + name, {}, {}, represents};
  bool one_server = represents == 0 || represents == static_cast<int>(ranks.size());
  for (int r : ranks) {
    g.members.push_back(hosts_[r]);
    if (paced && !engines_.empty()) g.engines.push_back(engines_[r]);
    one_server = one_server && server_of_rank_[r] == server_of_rank_[ranks.front()];
  }
  if (one_server) g.nccl = context_.intra_server;  // a ring on the server's NVLink fabric
  if (represents > 0 && rings != FoldRings::None && fold_load_) {
    const bool across = rings == FoldRings::Cross;  // a cross group's members share their local index
    for (int r : ranks) g.fold_shares.push_back(fold_share_host(r, across));
    if (g.fold_shares.front() == nullptr) g.fold_shares.clear();
    g.fold_share_latency_s = fold_share(ranks.front(), across).latency_s;
  }
  return groups_.emplace(name, std::move(g)).first->second;
}

const CommGroup& DataParallelCollectives::world(const std::string& tag) {
  std::vector<int> all(hosts_.size());
  std::iota(all.begin(), all.end(), 0);
  return group(tag + "/world", all, ranks_of_server_.size() > 1, represented_, FoldRings::World);
}
const CommGroup& DataParallelCollectives::local(const std::string& tag, int rank) {
  int s = server_of_rank_[rank];
  return group(tag + "/server" + std::to_string(s), ranks_of_server_.at(s), false);
}
const CommGroup& DataParallelCollectives::cross(const std::string& tag, int rank) {
  int l = local_index_[rank];
  // Folded: one rank of each represented server.
  return group(tag + "/cross" + std::to_string(l), ranks_of_local_index_.at(l), true,
               represented_ > 0 ? represented_ / per_server() : 0, FoldRings::Cross);
}

const InNetworkGroup& DataParallelCollectives::in_network(const std::string& tag, int rank) {
  const CommGroup& members = one_per_server() ? world(tag) : cross(tag, rank);
  auto it = in_network_groups_.find(members.name);
  if (it != in_network_groups_.end()) return it->second;
  InNetworkGroup g{members, aggregator_, simgrid::s4u::Barrier::create(static_cast<unsigned>(members.size()))};
  return in_network_groups_.emplace(members.name, std::move(g)).first->second;
}

// In a cross group, a rank's index is its server's position; in a local group, its local index.
void DataParallelCollectives::all_reduce(const std::string& tag, int rank, double bytes) {
  const CollectiveAlgorithm algorithm = algorithm_for(CollectiveKind::AllReduce, bytes);
  if (algorithm == CollectiveAlgorithm::InNetwork) {
    if (one_per_server()) return in_network_all_reduce(in_network(tag, rank), rank, bytes, context_);
    ring_reduce_scatter(local(tag, rank), local_index_[rank], bytes, context_);
    in_network_all_reduce(in_network(tag, rank), cross_index_[rank], bytes / local(tag, rank).size(), context_);
    return ring_all_gather(local(tag, rank), local_index_[rank], bytes, context_);
  }
  if (algorithm == CollectiveAlgorithm::Tree) return tree_all_reduce(world(tag), rank, bytes, context_);
  if (algorithm != CollectiveAlgorithm::Hierarchical) return ring_all_reduce(world(tag), rank, bytes, context_);
  hierarchical_all_reduce(local(tag, rank), local_index_[rank], cross(tag, rank),
                          cross_index_[rank], bytes, context_);
}

void DataParallelCollectives::all_gather(const std::string& tag, int rank, double bytes) {
  const CollectiveAlgorithm algorithm = algorithm_for(CollectiveKind::AllGather, bytes);
  if (algorithm == CollectiveAlgorithm::InNetwork) {
    if (one_per_server()) return in_network_all_gather(in_network(tag, rank), rank, bytes, context_);
    in_network_all_gather(in_network(tag, rank), cross_index_[rank], bytes / local(tag, rank).size(), context_);
    return ring_all_gather(local(tag, rank), local_index_[rank], bytes, context_);
  }
  if (algorithm == CollectiveAlgorithm::Pat) {
    if (!pat_across_servers()) return pat_all_gather(world(tag), rank, bytes, context_);
    pat_all_gather(cross(tag, rank), cross_index_[rank], bytes / local(tag, rank).size(), context_);
    return ring_all_gather(local(tag, rank), local_index_[rank], bytes, context_);
  }
  if (algorithm != CollectiveAlgorithm::Hierarchical) return ring_all_gather(world(tag), rank, bytes, context_);
  hierarchical_all_gather(local(tag, rank), local_index_[rank], cross(tag, rank),
                          cross_index_[rank], bytes, context_);
}

void DataParallelCollectives::all_gather_in_server(const std::string& tag, int rank, double bytes) {
  ring_all_gather(local(tag, rank), local_index_[rank], bytes, context_);
}

void DataParallelCollectives::reduce_scatter_in_server(const std::string& tag, int rank, double bytes) {
  ring_reduce_scatter(local(tag, rank), local_index_[rank], bytes, context_);
}

void DataParallelCollectives::all_reduce_across_servers(const std::string& tag, int rank, double bytes) {
  if (algorithm_ == CollectiveAlgorithm::InNetwork) return in_network_all_reduce(in_network(tag, rank), cross_index_[rank], bytes, context_);
  ring_all_reduce(cross(tag, rank), cross_index_[rank], bytes, context_);
}

void DataParallelCollectives::all_reduce_strided(const std::string& tag, int rank, int stride, double bytes) {
  if (represented_ > 0) throw std::logic_error("a strided all-reduce in a folded group");
  std::vector<int> ranks;
  for (int r = rank % stride; r < world_size(); r += stride) ranks.push_back(r);
  if (ranks.size() < 2) return;
  const CommGroup& g = group(tag + "/stride" + std::to_string(stride) + "/" + std::to_string(rank % stride), ranks, true);
  ring_all_reduce(g, rank / stride, bytes, context_);
}

void DataParallelCollectives::reduce_scatter(const std::string& tag, int rank, double bytes) {
  const CollectiveAlgorithm algorithm = algorithm_for(CollectiveKind::ReduceScatter, bytes);
  if (algorithm == CollectiveAlgorithm::InNetwork) {
    if (one_per_server()) return in_network_reduce_scatter(in_network(tag, rank), rank, bytes, context_);
    ring_reduce_scatter(local(tag, rank), local_index_[rank], bytes, context_);
    return in_network_reduce_scatter(in_network(tag, rank), cross_index_[rank], bytes / local(tag, rank).size(),
                                     context_);
  }
  if (algorithm == CollectiveAlgorithm::Pat) {
    if (!pat_across_servers()) return pat_reduce_scatter(world(tag), rank, bytes, context_);
    ring_reduce_scatter(local(tag, rank), local_index_[rank], bytes, context_);
    return pat_reduce_scatter(cross(tag, rank), cross_index_[rank], bytes / local(tag, rank).size(), context_);
  }
  if (algorithm != CollectiveAlgorithm::Hierarchical) return ring_reduce_scatter(world(tag), rank, bytes, context_);
  hierarchical_reduce_scatter(local(tag, rank), local_index_[rank], cross(tag, rank),
                              cross_index_[rank], bytes, context_);
}

void DataParallelCollectives::reduce_to_owners(const std::string& tag, int rank, double bytes) {
  // Several GPUs in each of several even servers: NCCL runs a ring per channel, each leaving a
  // server through its own GPU's NIC, so a server's NICs all carry their share of the reduces.
  // Taken as a reduce-scatter inside the server and the reduces to each owner among the GPUs of
  // one local index across servers (one NIC each), as the cross-server part of hierarchical.
  if (!several_gpus_in_several_even_servers()) return ring_reduce_to_owners(world(tag), rank, bytes, context_);
  ring_reduce_scatter(local(tag, rank), local_index_[rank], bytes, context_);
  ring_reduce_to_owners(cross(tag, rank), cross_index_[rank], bytes / local(tag, rank).size(), context_);
}

CollectiveAlgorithm DataParallelCollectives::algorithm_for(CollectiveKind kind, double bytes) {
  if (algorithm_ != CollectiveAlgorithm::Auto) return algorithm_;
  return choose_collective_algorithm(kind, bytes, shape(), tuning_);
}

GroupRoutes DataParallelCollectives::routes_of(const std::vector<std::vector<int>>& groups,
                                               const std::vector<int>& distances, int servers) {
  GroupRoutes out;
  out.servers = servers;
  double bandwidth = std::numeric_limits<double>::infinity();
  for (const auto& ranks : groups) {
    const int m = static_cast<int>(ranks.size());
    for (int i = 0; i < m; ++i)
      for (int distance : distances) {
        if (distance >= m) continue;
        const auto* src = hosts_[static_cast<std::size_t>(ranks[static_cast<std::size_t>(i)])];
        const auto* dst = hosts_[static_cast<std::size_t>(ranks[static_cast<std::size_t>((i + distance) % m)])];
        out.latency_s = std::max(out.latency_s, context_.traffic->route_latency_s(src, dst));
        for (const auto* link : context_.traffic->route(src, dst)) bandwidth = std::min(bandwidth, link->get_bandwidth());
      }
  }
  out.bandwidth_Bps = bandwidth;
  return out;
}

const CollectiveShape& DataParallelCollectives::shape() {
  if (shape_known_) return shape_;
  CollectiveShape s;
  s.world = represented_size();
  s.servers = represented_ > 0 ? represented_ / per_server() : static_cast<int>(ranks_of_server_.size());
  s.per_server = even_servers_ ? static_cast<int>(ranks_of_server_.begin()->second.size()) : 0;
  std::vector<int> all(hosts_.size());
  std::iota(all.begin(), all.end(), 0);
  std::vector<int> pat_distances;
  for (int d = 1; d < s.world; d *= 2) pat_distances.push_back(d);
  s.world_ring = routes_of({all}, {1}, s.servers);
  s.world_pat = routes_of({all}, pat_distances, s.servers);
  std::vector<std::vector<int>> locals, crosses;
  for (const auto& [server, ranks] : ranks_of_server_) locals.push_back(ranks);
  for (const auto& [index, ranks] : ranks_of_local_index_) crosses.push_back(ranks);
  s.local = routes_of(locals, {1}, 1);
  s.cross = routes_of(crosses, {1}, s.servers);
  shape_ = s;
  shape_known_ = true;
  return shape_;
}

}  // namespace luwu::sim

namespace luwu::sim {

std::string fold_problem(const std::map<int, int>& ranks_per_server, int represented) {
  if (ranks_per_server.empty()) return "no simulated ranks";
  const int per_server = ranks_per_server.begin()->second;
  bool even = true;
  for (const auto& [server, ranks] : ranks_per_server) even = even && ranks == per_server;
  if (ranks_per_server.size() < 2 || !even)
    return fmt::format("the simulated ranks of a data-parallel group sit in {} server(s){}; they must fill two or more "
                       "servers evenly (a ring across servers needs a simulated neighbour): fold to a multiple of the "
                       "GPUs per server, at least two servers' worth",
                       ranks_per_server.size(), even ? "" : ", unevenly");
  if (represented % per_server != 0)
    return fmt::format("{} ranks per server cannot stand for a group of {} (not whole servers)", per_server, represented);
  return "";
}

}  // namespace luwu::sim
