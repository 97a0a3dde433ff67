#pragma once
// A host CPU as seen by an optimizer: cores, the memory bandwidth it can stream, and its FLOP/s.
// A CPU optimizer step is memory-bound (see optimizer_cost.hpp), so memory_Bps is the number that
// matters; flops bounds compute-heavy variants.
#include "models/profile.hpp"

namespace luwu::models {

struct CpuSpec {
  int cores = 0;
  double memory_Bps = 0;   // achieved DRAM bandwidth: dram_theoretical_bandwidth * dram_stream_efficiency
  double flops = 0;        // peak fp32 FLOP/s over all cores
};

CpuSpec cpu_from_profile(const Profile& profile);  // kind "host"

}  // namespace luwu::models
