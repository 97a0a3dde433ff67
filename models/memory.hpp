#pragma once
// A memory tier (server DRAM, or a CXL memory expander): capacity, theoretical bandwidth and the
// share of it a streaming kernel achieves (STREAM triad is typically 72-78% of the wire rate).
//   achieved = theoretical * stream_efficiency
#include "models/profile.hpp"

namespace luwu::models {

struct MemorySpec {
  double capacity_bytes = 0;
  double theoretical_Bps = 0;
  double stream_efficiency = 0;
  double latency_s = 0;        // idle load-to-use latency; 0 = not stated

  double achieved_Bps() const { return theoretical_Bps * stream_efficiency; }
  // `count` such devices with pages striped across them (a host's CXL expanders as one tier):
  // count x the capacity and bandwidth, the same efficiency and latency.  Striping over several
  // add-in cards is what arXiv 2507.03305 measures to relieve one card's bandwidth contention.
  MemorySpec striped(int count) const {
    MemorySpec m = *this;
    m.capacity_bytes *= count;
    m.theoretical_Bps *= count;
    return m;
  }
};

// kind "memory" (fields capacity, theoretical_bandwidth, stream_efficiency, latency), or the DRAM
// of a kind "host" profile (dram_capacity, dram_theoretical_bandwidth, dram_stream_efficiency,
// dram_latency).
MemorySpec memory_from_profile(const Profile& profile);

}  // namespace luwu::models
