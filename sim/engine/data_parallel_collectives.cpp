#include "sim/engine/data_parallel_collectives.hpp"

#include <numeric>
#include <stdexcept>

namespace luwu::sim {

DataParallelCollectives::DataParallelCollectives(std::vector<simgrid::s4u::Host*> gpu_hosts,
                                                 std::vector<int> server_of_rank, CollectiveAlgorithm algorithm,
                                                 CollectiveContext context,
                                                 std::vector<simgrid::s4u::Host*> engines,
                                                 simgrid::s4u::Host* aggregator)
    : hosts_(std::move(gpu_hosts)),
      engines_(std::move(engines)),
      server_of_rank_(std::move(server_of_rank)),
      algorithm_(algorithm),
      context_(context),
      aggregator_(aggregator) {
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
      if (algorithm_ == CollectiveAlgorithm::Hierarchical) algorithm_ = CollectiveAlgorithm::Ring;
      if (algorithm_ == CollectiveAlgorithm::InNetwork)
        throw std::invalid_argument("collective_algorithm \"in-network\" needs the same number of GPUs in every server");
    }
  if (algorithm_ == CollectiveAlgorithm::Hierarchical && (per_server == 1 || ranks_of_server_.size() == 1))
    algorithm_ = CollectiveAlgorithm::Ring;
}

const CommGroup& DataParallelCollectives::group(const std::string& name, const std::vector<int>& ranks, bool paced) {
  auto it = groups_.find(name);
  if (it != groups_.end()) return it->second;
  CommGroup g{name, {}, {}};
  for (int r : ranks) {
    g.members.push_back(hosts_[r]);
    if (paced && !engines_.empty()) g.engines.push_back(engines_[r]);
  }
  return groups_.emplace(name, std::move(g)).first->second;
}

const CommGroup& DataParallelCollectives::world(const std::string& tag) {
  std::vector<int> all(hosts_.size());
  std::iota(all.begin(), all.end(), 0);
  return group(tag + "/world", all, ranks_of_server_.size() > 1);
}
const CommGroup& DataParallelCollectives::local(const std::string& tag, int rank) {
  int s = server_of_rank_[rank];
  return group(tag + "/server" + std::to_string(s), ranks_of_server_.at(s), false);
}
const CommGroup& DataParallelCollectives::cross(const std::string& tag, int rank) {
  int l = local_index_[rank];
  return group(tag + "/cross" + std::to_string(l), ranks_of_local_index_.at(l), true);
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
  if (algorithm_ == CollectiveAlgorithm::InNetwork) {
    if (one_per_server()) return in_network_all_reduce(in_network(tag, rank), rank, bytes, context_);
    ring_reduce_scatter(local(tag, rank), local_index_[rank], bytes, context_);
    in_network_all_reduce(in_network(tag, rank), cross_index_[rank], bytes / local(tag, rank).size(), context_);
    return ring_all_gather(local(tag, rank), local_index_[rank], bytes, context_);
  }
  if (algorithm_ == CollectiveAlgorithm::Tree) return tree_all_reduce(world(tag), rank, bytes, context_);
  if (algorithm_ == CollectiveAlgorithm::Ring) return ring_all_reduce(world(tag), rank, bytes, context_);
  hierarchical_all_reduce(local(tag, rank), local_index_[rank], cross(tag, rank),
                          cross_index_[rank], bytes, context_);
}

void DataParallelCollectives::all_gather(const std::string& tag, int rank, double bytes) {
  if (algorithm_ == CollectiveAlgorithm::InNetwork) {
    if (one_per_server()) return in_network_all_gather(in_network(tag, rank), rank, bytes, context_);
    in_network_all_gather(in_network(tag, rank), cross_index_[rank], bytes / local(tag, rank).size(), context_);
    return ring_all_gather(local(tag, rank), local_index_[rank], bytes, context_);
  }
  if (algorithm_ != CollectiveAlgorithm::Hierarchical) return ring_all_gather(world(tag), rank, bytes, context_);
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

void DataParallelCollectives::reduce_scatter(const std::string& tag, int rank, double bytes) {
  if (algorithm_ == CollectiveAlgorithm::InNetwork) {
    if (one_per_server()) return in_network_reduce_scatter(in_network(tag, rank), rank, bytes, context_);
    ring_reduce_scatter(local(tag, rank), local_index_[rank], bytes, context_);
    return in_network_reduce_scatter(in_network(tag, rank), cross_index_[rank], bytes / local(tag, rank).size(),
                                     context_);
  }
  if (algorithm_ != CollectiveAlgorithm::Hierarchical) return ring_reduce_scatter(world(tag), rank, bytes, context_);
  hierarchical_reduce_scatter(local(tag, rank), local_index_[rank], cross(tag, rank),
                              cross_index_[rank], bytes, context_);
}

}  // namespace luwu::sim
