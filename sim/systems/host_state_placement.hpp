#pragma once
// Where a CPU optimizer's state lives on a worker server with two memory tiers: its local DRAM and
// CXL-attached memory expanders (models/memory.hpp; a cluster's "cxl_per_server").  Written once
// for every system whose optimizer state sits in host memory and is stepped by the CPU
// (ZeRO-Offload, Deep Optimizer States).
//
// The placed bytes are the optimizer state the CPU step streams (fp32 master, m and v: S per
// parameter, model_state.hpp); everything else the system keeps in host memory (gradient
// partitions, 16-bit copies, offloaded activation checkpoints, pinned buffers) stays in DRAM: the
// DMA engines of the GPUs read and write it, and arXiv 2507.03305 (Liaw and Chen, "Analysis and
// Optimized CXL-Attached Memory Allocation for Long-Context LLM Fine-Tuning") keeps such
// latency-sensitive tensors in local DRAM.  With X = the state bytes of a server, R = its other
// host bytes, C_d, C_c the tiers' capacities and B_d, B_c their streaming bandwidths
// (CpuSpec::optimizer_memory_Bps() for DRAM, the striped expanders' achieved rate for CXL):
//
//   "dram-first" (default; Linux's default policy: pages come from the local node while it has
//                 free memory, then from the next node, the CXL one):
//                 in DRAM min(X, C_d - R), the rest X - that in CXL
//   "interleave"  pages spread over both tiers in proportion to their bandwidth (Linux's weighted
//                 interleave, MPOL_WEIGHTED_INTERLEAVE since 6.9, weights set to the bandwidths),
//                 (B_c = 0 on a server without CXL: all in DRAM):
//                 in CXL X * B_c / (B_d + B_c), the rest in DRAM.  The DRAM also carries the
//                 gradient read and the 16-bit copy-out, so the tiers do not finish together
//   "cxl-only"    all of X in CXL (numactl --membind to the expanders' node)
//
// Each tier's share must fit it (DRAM holds R besides its share): a placement that does not fit is
// a result that says why (PlacedState::problem), not an error.  The CPU step then takes
//   max(DRAM bytes / B_d, CXL bytes / B_c, FLOPs / CPU) (models::cpu_optimizer_step_times): the
//   CPU optimizer is memory bound, each tier streams its share of the state in and out at its
//   bandwidth while the other does, and the DRAM also carries the gradient read and the 16-bit
//   copy-out.  CXL's latency (2-5x DRAM's) is not charged: a streaming kernel's prefetchers hide
//   it at full bandwidth, which is what the expander's STREAM-share efficiency already states.
#include <algorithm>
#include <string>
#include <vector>

#include "common/choice.hpp"
#include "models/host.hpp"
#include "sim/systems/system.hpp"
#include "sim/systems/system_entry.hpp"

namespace luwu::sim {

enum class StatePlacementPolicy { DramFirst, Interleave, CxlOnly };

struct StatePlacementSettings {
  StatePlacementPolicy policy = StatePlacementPolicy::DramFirst;

  static std::vector<std::string> keys() { return {"state_placement"}; }
  static StatePlacementSettings parse(const SystemEntry& entry) {
    static const Choices<StatePlacementPolicy> names = {{"dram-first", StatePlacementPolicy::DramFirst},
                                                        {"interleave", StatePlacementPolicy::Interleave},
                                                        {"cxl-only", StatePlacementPolicy::CxlOnly}};
    StatePlacementSettings s;
    if (entry.has("state_placement")) s.policy = entry.at("state_placement").as_choice(names, "state placement");
    return s;
  }
};

struct PlacedState {
  double dram_bytes = 0;  // of the optimizer state, per server
  double cxl_bytes = 0;
  models::StatePlacement shares;  // the same split as shares of the state (no SSD share)
  std::string problem;            // "" when it fits, else one sentence
};

// X = `state_bytes`, R = `other_dram_bytes`, per server, on `host` (see above).
inline PlacedState place_host_state(const StatePlacementSettings& s, const models::HostSpec& host, double state_bytes,
                                    double other_dram_bytes) {
  PlacedState p;
  const double dram_capacity = host.dram.capacity_bytes;
  const double cxl_capacity = host.cxl ? host.cxl->capacity_bytes : 0;
  switch (s.policy) {
    case StatePlacementPolicy::DramFirst:
      p.dram_bytes = std::clamp(dram_capacity - other_dram_bytes, 0.0, state_bytes);
      p.cxl_bytes = state_bytes - p.dram_bytes;
      break;
    case StatePlacementPolicy::Interleave: {
      const double b_cxl = host.cxl ? host.cxl->achieved_Bps() : 0;
      p.cxl_bytes = state_bytes * b_cxl / (host.cpu.optimizer_memory_Bps() + b_cxl);
      p.dram_bytes = state_bytes - p.cxl_bytes;
      break;
    }
    case StatePlacementPolicy::CxlOnly:
      p.cxl_bytes = state_bytes;
      break;
  }
  if (state_bytes > 0) {
    p.shares.cxl_share = p.cxl_bytes / state_bytes;
    p.shares.dram_share = 1 - p.shares.cxl_share;
  }
  if (p.cxl_bytes > 0 && !host.cxl) {
    // dram-first spilled past the DRAM, or cxl-only (interleave puts nothing in a tier that is not there)
    p.problem = s.policy == StatePlacementPolicy::DramFirst
                    ? does_not_fit("a worker server's DRAM", state_bytes + other_dram_bytes, dram_capacity)
                    : "does not run: state_placement \"cxl-only\" needs CXL memory on the worker servers (cluster "
                      "\"cxl_per_server\"); they have none";
    return p;
  }
  if (p.dram_bytes + other_dram_bytes > dram_capacity)
    p.problem = does_not_fit("a worker server's DRAM (its share of the optimizer state and the rest it holds)",
                             p.dram_bytes + other_dram_bytes, dram_capacity);
  else if (p.cxl_bytes > cxl_capacity)
    p.problem = does_not_fit("a worker server's CXL memory (its share of the optimizer state)", p.cxl_bytes,
                             cxl_capacity);
  return p;
}

}  // namespace luwu::sim
