#pragma once
// PAT (Parallel Aggregated Trees; Jeaugey, arXiv 2506.20252; NCCL 2.23+, NCCL_ALGO_PAT): all-gather
// and reduce-scatter in ceil(log2 N) steps instead of the ring's N-1, with the ring's volume.
//
// All-gather is Bruck's algorithm with its dimensions reversed: every rank's shard is broadcast
// along a binomial tree shifted to start at that rank, the farthest dimension first.  At the step
// of dimension d a rank sends to the rank 2^d after it (mod N) every shard it holds that the
// receiver lacks, and receives as many from the rank 2^d before it: the first step sends one shard
// far away, the last about N/2 shards to the next rank.  Ranks are offsets s in [0, N); offsets
// N..2^L-1 do not exist and are skipped, so any N works (NCCL's `s >= nranks` skips) and a step
// carries the shards of the offsets that have bit d as their lowest bit set and stay below N.
// Reduce-scatter runs the same steps backwards in time: dimension 0 first, the partial sums of
// about N/2 shards to the rank before, the last step one shard from 2^(L-1) away.
// Every rank sends N-1 shards of S/N in all, as in a ring.
//
// What is left out: NCCL aggregates only as many shards as its staging buffer holds (NCCL_BUFFSIZE
// / NCCL_STEPS per step) and pipelines chunks of a large buffer through the tree; here each step's
// shards go as one flow, which is PAT as it runs for buffers whose aggregates fit (the sizes at
// which NCCL's tuning chooses it).  Its tuning derates PAT's bandwidth by 0.75 for that cost
// (collective_tuning.hpp uses the factor; the flows here do not).
//   detailed mode: each step of each rank is one flow to its partner, with the step's bytes;
//   coarse mode:   each rank sends all of its steps as one flow to its dimension-0 partner, and
//                  the other steps' latencies are added once, as the ring's coarse mode does; the
//                  far steps' bytes then take the near route, so on a multi-tier fabric coarse
//                  mode misses their collisions at the spines (docs/collectives.md).
#include <vector>

#include "sim/engine/collectives.hpp"

namespace luwu::sim {

// The number of steps: ceil(log2 n) (0 for n <= 1).
int pat_step_count(int n);
// Shards per message at each step of a PAT all-gather over n ranks, in step order (dimension
// L-1 first); they sum to n-1.  Reduce-scatter's steps are these in reverse order.
std::vector<int> pat_all_gather_shards_per_step(int n);

void pat_all_gather(const CommGroup& group, int index, double buffer_bytes, const CollectiveContext& ctx);
void pat_reduce_scatter(const CommGroup& group, int index, double buffer_bytes, const CollectiveContext& ctx);

// Closed form, alpha-beta, on ranks with a link each of bandwidth b and routes of latency a: every
// step's flows share no link, so a step of m shards takes a + m S/(N b).
inline double pat_all_gather_closed_form_s(int n, double bytes, double a, double b) {
  return n <= 1 ? 0.0 : pat_step_count(n) * a + (n - 1) * bytes / (n * b);
}
inline double pat_reduce_scatter_closed_form_s(int n, double bytes, double a, double b) {
  return pat_all_gather_closed_form_s(n, bytes, a, b);
}

}  // namespace luwu::sim
