#include "sim/systems/collective_calls.hpp"

#include <algorithm>
#include <cmath>

#include "sim/engine/pat_collectives.hpp"

namespace luwu::sim {

std::vector<CollectiveCall> per_op_collective_calls(const workloads::Trace& trace) {
  std::vector<CollectiveCall> calls;
  for (const auto& op : trace.ops) {
    if (op.param_bytes > 0) calls.push_back({CollectiveOp::AllGather, static_cast<double>(op.param_bytes), 1});
    if (op.kind == workloads::OpKind::Backward && op.grad_bytes > 0)
      calls.push_back({CollectiveOp::ReduceScatter, static_cast<double>(op.grad_bytes), 1});
  }
  return calls;
}

namespace {

using L = long double;

// A ring over groups of `ranks` (represented), `members` simulated in all: `passes` of ranks - 1
// steps each (2 for all-reduce).
L ring(CollectiveMode mode, L members, L ranks, int passes) {
  if (ranks <= 1 || members <= 0) return 0;
  return mode == CollectiveMode::Detailed ? members * passes * (ranks - 1) : members;
}

L pat(CollectiveMode mode, L members, int ranks, bool folded) {
  if (ranks <= 1 || members <= 0) return 0;
  return mode == CollectiveMode::Detailed && !folded ? members * pat_step_count(ranks) : members;
}

}  // namespace

long double flows_of_call(const CollectiveCall& call, CollectiveAlgorithm algorithm, CollectiveMode mode,
                          const DataParallelGroupShape& s) {
  const L k = s.simulated, n = s.ranks;
  const int g = s.per_server > 0 ? s.per_server : 1;
  const bool even = s.per_server > 0;
  const int servers = even ? s.ranks / g : 1;
  const bool folded = s.simulated < s.ranks;
  const bool one_per_server = even && g == 1;
  const bool several_servers = !even || servers > 1;
  const L local_ring = ring(mode, k, g, 1);  // inside each server: G ranks, never folded
  auto once = [&](CollectiveAlgorithm a) -> L {
    switch (call.op) {
      case CollectiveOp::AllGatherInServer:
      case CollectiveOp::ReduceScatterInServer: return local_ring;
      case CollectiveOp::ReduceToOwners:  // whatever the algorithm (DataParallelCollectives::reduce_to_owners)
        return even && g > 1 && servers > 1 ? ring(mode, k, servers, 1) + local_ring : ring(mode, k, n, 1);
      case CollectiveOp::AllReduceAcrossServers:
        return a == CollectiveAlgorithm::InNetwork ? (servers > 1 ? 2 * k : 0) : ring(mode, k, servers, 2);
      default: break;
    }
    const bool all_reduce = call.op == CollectiveOp::AllReduce;
    if (a == CollectiveAlgorithm::InNetwork) {
      if (one_per_server) return n > 1 ? 2 * k : 0;
      const L switch_group = servers > 1 ? 2 * k : 0;  // one switch group per local index, S members each
      return switch_group + (all_reduce ? 2 : 1) * local_ring;
    }
    if (a == CollectiveAlgorithm::Hierarchical && (!even || g == 1 || servers == 1)) a = CollectiveAlgorithm::Ring;
    if (all_reduce) {
      if (a == CollectiveAlgorithm::Tree && mode == CollectiveMode::Detailed && !folded && n > 1) {
        const L chunks = std::ceil(call.bytes / kTreeChunkBytes);
        return chunks > 0 ? 2 * (n - 1) * chunks : 0;
      }
      if (a == CollectiveAlgorithm::Hierarchical) return 2 * local_ring + ring(mode, k, servers, 2);
      return ring(mode, k, n, 2);
    }
    if (a == CollectiveAlgorithm::Pat) {
      if (!even || one_per_server || !several_servers) return pat(mode, k, s.ranks, folded);
      return pat(mode, k, servers, folded) + local_ring;  // across the servers, then inside
    }
    if (a == CollectiveAlgorithm::Hierarchical) return ring(mode, k, servers, 1) + local_ring;
    return ring(mode, k, n, 1);
  };
  L flows = 0;
  if (algorithm == CollectiveAlgorithm::Auto) {
    for (auto a : {CollectiveAlgorithm::Ring, CollectiveAlgorithm::Pat, CollectiveAlgorithm::Hierarchical,
                   CollectiveAlgorithm::Tree})
      flows = std::max(flows, once(a));
  } else {
    flows = once(algorithm);
  }
  return flows * call.count;
}

}  // namespace luwu::sim
