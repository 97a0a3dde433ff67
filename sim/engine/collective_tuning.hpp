#pragma once
// The algorithms of the data-parallel collectives, and the rule that picks one per call
// ("auto"): NCCL's tuning (src/graph/tuning.cc, ncclTopoTuneModel and ncclTopoGetAlgoTime, NCCL
// 2.23 to 2.28) predicts each algorithm's time as a latency plus the bytes over a bandwidth and
// runs the least.  The rule does the same for the algorithms luwusim has, for NCCL's Simple
// protocol, with NCCL's latency constants and the cluster's own routes: their latency is added to
// every step, and their bottleneck bandwidth is the bus bandwidth.
//   ring (N ranks, buffer S):  base + (N-1)(step + a) + (N-1)/N S / b      (all-reduce: 2(N-1), 2(N-1)/N;
//                              a step inside a server costs NVLink's step latency, across NET's)
//   PAT:                       base + ceil(log2 N)(log_step + a) + N per_rank + S / (factor b)
//   hierarchical:              a ring inside the servers (NVLink step) plus one across them of S/G
// PAT is a candidate for reduce-scatter and all-gather with one GPU per server only, as NCCL
// enables it (ncclPatEnable: nNodes == nRanks); hierarchical where servers hold several GPUs.
// The constants are NCCL's defaults (ncclTunerConstantsDefaults), measured by NVIDIA on its
// systems; the simulated collectives do not pay them (a ring step costs its route's latency and
// its bytes, no more), so the rule predicts NCCL's choice, not luwusim's times.
#include <algorithm>
#include <cmath>

namespace luwu::sim {

// Tree applies to all-reduce (NCCL's tree algorithm); all-gather and reduce-scatter stay rings.
// InNetwork reduces in the switch (SHARP, collectives.hpp) across servers; inside a multi-GPU server
// the local steps stay rings over NVLink, as NCCL's CollNet does.  Pat applies to all-gather and
// reduce-scatter (pat_collectives.hpp); all-reduce stays a ring.  Auto picks per call (below).
enum class CollectiveAlgorithm { Ring, Hierarchical, Tree, InNetwork, Pat, Auto };

enum class CollectiveKind { AllGather, ReduceScatter, AllReduce };

// NCCL's tuning constants for the Simple protocol (src/graph/tuning.cc, ncclTunerConstantsDefaults).
struct CollectiveTuning {
  double ring_base_latency_s = 8.4e-6;      // baseLatencies[RING][SIMPLE], 8.4 us
  double pat_base_latency_s = 8.0e-6;       // baseLatencies[PAT][SIMPLE], 8.0 us
  double network_step_latency_s = 14e-6;    // hwLatencies[NET][RING][SIMPLE] (and [TREE], used at one GPU per node), 14 us
  double nvlink_step_latency_s = 3.4e-6;    // hwLatencies[NVLINK][RING][SIMPLE], 3.4 us
  double pat_log_step_latency_s = 4.0e-6;   // interLat / 3.5 per log2 step: 14 us / 3.5
  double pat_per_rank_latency_s = 2.8e-6;   // nRanks x 2.8 us: "still a linear part"
  double pat_bandwidth_factor = 0.75;       // busBw *= .75 for PAT
};

// What a group's routes offer: the longest latency and the narrowest bottleneck bandwidth among
// the routes its algorithm uses, and how many servers the group spans: a ring over N ranks in S
// servers takes S-1 steps over the network (NCCL's NET step latency) and N-S inside servers
// (NVLink's), as NCCL counts nInterSteps = nNodes - 1.
struct GroupRoutes {
  double latency_s = 0;
  double bandwidth_Bps = 0;
  int servers = 1;
};

inline int ceil_log2(int n) {
  int steps = 0;
  while ((1 << steps) < n) ++steps;
  return steps;
}

inline double predicted_ring_s(CollectiveKind kind, int n, double bytes, const GroupRoutes& r,
                               const CollectiveTuning& t) {
  if (n <= 1) return 0;
  const int passes = kind == CollectiveKind::AllReduce ? 2 : 1;
  const int network_steps = std::min(r.servers, n) - 1;
  const double steps_s = network_steps * t.network_step_latency_s + (n - 1 - network_steps) * t.nvlink_step_latency_s;
  return t.ring_base_latency_s + passes * (steps_s + (n - 1) * r.latency_s) +
         passes * (n - 1) * bytes / (static_cast<double>(n) * r.bandwidth_Bps);
}

inline double predicted_pat_s(int n, double bytes, const GroupRoutes& r, const CollectiveTuning& t) {
  if (n <= 1) return 0;
  return t.pat_base_latency_s + ceil_log2(n) * (t.pat_log_step_latency_s + r.latency_s) +
         n * t.pat_per_rank_latency_s + bytes / (t.pat_bandwidth_factor * r.bandwidth_Bps);
}

// The shape of the data-parallel world: servers of `per_server` GPUs each (0: uneven).
struct CollectiveShape {
  int world = 1;
  int servers = 1;
  int per_server = 1;
  GroupRoutes world_ring;  // the world's ring neighbours
  GroupRoutes world_pat;   // the world's PAT partners (2^d apart)
  GroupRoutes local;       // ring neighbours inside the servers
  GroupRoutes cross;       // ring neighbours across servers, same local index
};

inline double predicted_hierarchical_s(CollectiveKind kind, double bytes, const CollectiveShape& s,
                                       const CollectiveTuning& t) {
  // Reduce-scatter: inside, then S/G across; all-gather the reverse; all-reduce: reduce-scatter
  // inside, all-reduce across, all-gather inside (the inside passes as one all-reduce's).
  return predicted_ring_s(kind, s.per_server, bytes, s.local, t) +
         predicted_ring_s(kind, s.servers, bytes / s.per_server, s.cross, t);
}

// The algorithm with the least predicted time for one collective of `bytes` (ties: the ring).
inline CollectiveAlgorithm choose_collective_algorithm(CollectiveKind kind, double bytes, const CollectiveShape& s,
                                                       const CollectiveTuning& t = {}) {
  CollectiveAlgorithm best = CollectiveAlgorithm::Ring;
  double best_s = predicted_ring_s(kind, s.world, bytes, s.world_ring, t);
  if (kind != CollectiveKind::AllReduce && s.per_server == 1 && s.world > 1) {
    const double pat_s = predicted_pat_s(s.world, bytes, s.world_pat, t);
    if (pat_s < best_s) best = CollectiveAlgorithm::Pat, best_s = pat_s;
  }
  if (s.per_server > 1 && s.servers > 1) {
    const double hier_s = predicted_hierarchical_s(kind, bytes, s, t);
    if (hier_s < best_s) best = CollectiveAlgorithm::Hierarchical, best_s = hier_s;
  }
  return best;
}

}  // namespace luwu::sim
