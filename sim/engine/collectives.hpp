#pragma once
// Collectives over the simulated platform, executed by every member of a group from its own
// actor (as NCCL runs one kernel per rank).  Rings move data between neighbours step by step:
//   detailed mode: every ring step of every rank is one flow (put to the next rank's mailbox,
//                  get from one's own), so stragglers, contention and skew appear as they would;
//   coarse mode:   each rank sends all of its steps as one flow to its neighbour, and the
//                  per-step latencies are added once; N flows per collective instead of N(N-1),
//                  for thousands of GPUs.  Validated against the detailed mode in tests.
// Sizes are the collective's buffer size in bytes (the whole gathered / reduced tensor).
#include <memory>
#include <string>
#include <vector>

#include <simgrid/s4u/Barrier.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include "models/nvlink.hpp"
#include "sim/engine/traffic_meter.hpp"

namespace luwu::sim {

enum class CollectiveMode { Detailed, Coarse };

// What NCCL's ring achieves on a fabric, measured (models/nvlink.hpp: the NVLink profile's nccl_ring_*
// fields): each ring step pays an overhead beyond its route's latency, the larger one from
// `large_buffer_bytes` of collective buffer on, and moves its bytes at no more than `bus_Bps`.
// Zero: the wire alone (a step costs its route's latency and its bytes).
struct NcclRingCost {
  double bus_Bps = 0;
  double step_overhead_s = 0;
  double small_step_overhead_s = 0;
  double large_buffer_bytes = 0;
  double overhead_s(double buffer_bytes) const {
    return buffer_bytes >= large_buffer_bytes ? step_overhead_s : small_step_overhead_s;
  }
  // The ring's cost on an NVLink fabric, from its profile (zero where it has no nccl_ring_* fields).
  static NcclRingCost on(const models::NvlinkSpec& nvlink) {
    return {nvlink.nccl_ring_bus_Bps, nvlink.nccl_ring_step_overhead_s, nvlink.nccl_ring_small_step_overhead_s,
            nvlink.nccl_ring_large_buffer_bytes};
  }
};

// A group of ranks in ring order.  `name` keeps the mailboxes of different groups and streams
// apart: one mailbox per (group, rank), used in FIFO order by identical collective sequences.
// `engines` (empty, or one per member, nullptr for none) pace each member's sends: a send of b
// bytes also executes b "flops" on the member's engine, a host whose speed in bytes/s the GPU
// lowers while a GEMM runs beside the collective kernel (GpuDevice::collective_engine).
//
// Folding (`represents`): the members simulated stand for a larger group of `represents` ranks
// that are symmetric on the topology (data-parallel folding, sim/experiment/simulate.cpp).  Sizes
// and step counts are the represented group's; the flows are the simulated members', each to its
// ring neighbour as in the whole group, so on a topology where a rank's flows meet only its own
// and its neighbour's links every simulated rank sees what it would in the whole group.  In
// detailed mode a folded ring passes the represented ring's steps, one flow each, between the
// members (rank i's step s from its simulated predecessor, as in the whole ring from its real
// one); the tree and PAT algorithms, whose partners are not ring neighbours, run as in coarse
// mode in a folded group (the tree as the ring, PAT as one flow to its first partner).
struct CommGroup {
  std::string name;
  std::vector<simgrid::s4u::Host*> members;
  std::vector<simgrid::s4u::Host*> engines;
  int represents = 0;  // 0: the members themselves
  NcclRingCost nccl = {};  // inside one server, NCCL's ring on its NVLink fabric; zero elsewhere
  // Folded on links the left-out ranks share (fold_share.hpp): one pacing host per member whose
  // speed is the represented rings' slowest flow; each ring send also moves its bytes through it,
  // after that flow's route latency (as more bytes at its speed).  Empty: none.
  std::vector<simgrid::s4u::Host*> fold_shares = {};
  double fold_share_latency_s = 0;  // the slowest represented flow's route latency
  int size() const { return static_cast<int>(members.size()); }
  // The collective's rank count: what sizes its shards and counts its steps.
  int ranks() const { return represents > 0 ? represents : size(); }
  simgrid::s4u::Host* engine_of(int index) const {
    return engines.empty() ? nullptr : engines[static_cast<std::size_t>(index)];
  }
  simgrid::s4u::Host* fold_share_of(int index) const {
    return fold_shares.empty() ? nullptr : fold_shares[static_cast<std::size_t>(index)];
  }
};

struct CollectiveContext {
  CollectiveMode mode = CollectiveMode::Detailed;
  TrafficMeter* traffic = nullptr;  // required: counts the bytes and knows route latencies
  NcclRingCost intra_server = {};   // what groups inside one server get (CommGroup::nccl)
};

// Each rank calls these with its index in the group; they return when its part is done.
void ring_all_gather(const CommGroup& group, int index, double buffer_bytes, const CollectiveContext& ctx);
void ring_reduce_scatter(const CommGroup& group, int index, double buffer_bytes, const CollectiveContext& ctx);
void ring_all_reduce(const CommGroup& group, int index, double buffer_bytes, const CollectiveContext& ctx);

// One reduce per shard's owner, issued back to back on one communicator (DeepSpeed's stage-1/2
// gradient reduction: stage_1_and_2.py average_tensor, a dist.reduce of each partition's slice to
// its owner): n reduces of buffer/n, reduce r along the ring from rank r+1 to its root r.  NCCL's
// Reduce runs as a ring only, a pipelined chain to the root: every link of the chain carries the
// reduce's bytes at once and the root's own link is idle, so a reduce lasts one ring step and the n
// of them n steps: buffer / b, where a reduce-scatter takes (n-1)/n buffer / b (nccl-tests'
// PERFORMANCE.md: Reduce's bus bandwidth is its algorithm bandwidth, ReduceScatter's (n-1)/n of
// it).  Each rank sends (n-1)/n of the buffer, as in the reduce-scatter.  The chain's pipeline
// fill (n-2 chunks of NCCL's buffer per reduce) is left out.  Here rank i is the root of step i.
void ring_reduce_to_owners(const CommGroup& group, int index, double buffer_bytes, const CollectiveContext& ctx);

// Pipelined binary-tree all-reduce: rank i's parent is (i-1)/2.  The buffer moves in chunks of
// at most `chunk_bytes` (NCCL's default staging buffer, NCCL_BUFFSIZE, is 4 MiB); each rank reduces
// a chunk from its children and sends it up while the next arrives, and the root broadcasts each
// reduced chunk back down the same way.  Coarse mode has no tree: it runs the ring all-reduce
// (a tree with few chunks would misstate the pipeline, one with many is not coarse).
constexpr double kTreeChunkBytes = 4.0 * 1024 * 1024;
void tree_all_reduce(const CommGroup& group, int index, double buffer_bytes, const CollectiveContext& ctx,
                     double chunk_bytes = kTreeChunkBytes);

// In-network reduction (SHARP: Graham et al., COMHPC 2016; NCCL's CollNet): each member sends its
// contribution to `aggregator` (the switch) and receives the result from it.  The switch reduces
// and multicasts as the data streams through, so a member's up and down flows run at once (full
// duplex); they start once every member has reached the collective, and a member's part ends when
// every contribution has arrived and its own result is back.  Per member:
//   all-reduce: B up, B down;  reduce-scatter: B up, B/N down;  all-gather: B/N up, B down.
// The members' collective engines pace what they send, as in the rings.
struct InNetworkGroup {
  CommGroup group;
  simgrid::s4u::Host* aggregator = nullptr;
  simgrid::s4u::BarrierPtr arrived;  // of group.size(), reused collective after collective
};
void in_network_all_reduce(const InNetworkGroup& group, int index, double buffer_bytes, const CollectiveContext& ctx);
void in_network_reduce_scatter(const InNetworkGroup& group, int index, double buffer_bytes,
                               const CollectiveContext& ctx);
void in_network_all_gather(const InNetworkGroup& group, int index, double buffer_bytes, const CollectiveContext& ctx);

// Hierarchical: reduce-scatter inside the server (NVLink/NVSwitch), all-reduce of the shard across
// servers among ranks with the same local index, all-gather inside the server.
void hierarchical_all_reduce(const CommGroup& local, int local_index, const CommGroup& cross, int cross_index,
                             double buffer_bytes, const CollectiveContext& ctx);
// Hierarchical all-gather of a buffer whose 1/N shards are spread over all ranks: gather across
// servers first (each server ends with its local rank's slice of every server), then inside.
void hierarchical_all_gather(const CommGroup& local, int local_index, const CommGroup& cross, int cross_index,
                             double buffer_bytes, const CollectiveContext& ctx);
void hierarchical_reduce_scatter(const CommGroup& local, int local_index, const CommGroup& cross,
                                 int cross_index, double buffer_bytes, const CollectiveContext& ctx);

// Closed forms, alpha-beta, for a ring of n ranks with per-hop latency a and bandwidth b:
inline double ring_all_reduce_closed_form_s(int n, double bytes, double a, double b) {
  return 2.0 * (n - 1) * (a + bytes / (n * b));
}
inline double ring_all_gather_closed_form_s(int n, double bytes, double a, double b) {
  return (n - 1) * (a + bytes / (n * b));
}
inline double ring_reduce_to_owners_closed_form_s(int n, double bytes, double a, double b) {
  return n * (a + bytes / (n * b));
}

}  // namespace luwu::sim
