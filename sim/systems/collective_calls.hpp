#pragma once
// The data-parallel collectives a system issues in one iteration and the flows each one makes in
// the engine, so that detailed mode's budget (sim/experiment/run_scenario.hpp) counts what will
// run: the system's own calls (System::collective_calls) under the algorithm its collectives run
// (DataParallelCollectives: flat ring, hierarchical, PAT, tree, in-network), folded or not.
//
// Flows are what TrafficMeter::flows counts.  Per call, over a data-parallel group of N ranks
// (represented), K of them simulated (K = N unless folded), G of them in each server, S = N / G:
//   ring all-gather, reduce-scatter  detailed K (N-1)   coarse K  (all-reduce: 2 K (N-1), coarse K)
//   reduces to each owner            the ring's whatever the algorithm (each rank is silent in
//                                    its own reduce's step: N steps, N-1 flows); with G > 1 in
//                                    S > 1 even servers the ring inside and K (S-1) across
//   hierarchical                     the ring inside the servers, K (G-1), and across them,
//                                    K (S-1) (all-reduce: K (G-1) + 2 K (S-1) + K (G-1)); coarse K
//                                    per ring; a ring over all when G = 1, S = 1 or uneven servers
//   PAT all-gather, reduce-scatter   detailed and not folded K ceil(log2 N), else K; with G > 1 PAT
//                                    across the servers (over S) and a ring inside them;
//                                    all-reduce is the ring's
//   tree all-reduce                  detailed and not folded: each of ceil(B / 4 MiB) chunks up and
//                                    down every tree edge, 2 (N-1) chunks; else the ring's
//   in-network                       2 per member of the switch group (up and down), with the
//                                    rings inside the servers when G > 1
//   "auto"                           the most of the algorithms its rule chooses between (ring,
//                                    PAT, hierarchical; tree for all-reduce): an upper bound
// Flows split over several routes (simulation.routing "spray", ECMP flow_splitting) count once
// per sub-flow in the engine and once here: the estimate is of the unsplit flows.
#include <vector>

#include "sim/engine/collective_tuning.hpp"
#include "sim/engine/collectives.hpp"
#include "sim/systems/gpu_collective.hpp"
#include "workloads/trace.hpp"

namespace luwu::sim {

// `count` calls of `op` on a buffer of `bytes`, by each rank of the group.
struct CollectiveCall {
  CollectiveOp op = CollectiveOp::AllGather;
  double bytes = 0;
  long double count = 1;
};

// The pattern ZeRO-3 issues at op granularity, the most a data-parallel system does: an
// all-gather of an op's parameters before every op that reads them (forward, recompute, backward)
// and a reduce-scatter of a backward op's gradients after it.  System::collective_calls' default.
std::vector<CollectiveCall> per_op_collective_calls(const workloads::Trace& trace);

struct DataParallelGroupShape {
  int ranks = 1;       // N, the group the collectives size themselves for
  int simulated = 1;   // K, its members simulated (N unless folded)
  int per_server = 1;  // G, its ranks in each server (0: not the same in every server)
};

// The flows one call makes, summed over the K simulated ranks.
long double flows_of_call(const CollectiveCall& call, CollectiveAlgorithm algorithm, CollectiveMode mode,
                          const DataParallelGroupShape& shape);

}  // namespace luwu::sim
