#pragma once
// A host CPU as seen by an optimizer: cores, the memory bandwidth it can stream, and its FLOP/s.
// A CPU optimizer step is memory-bound (see optimizer_cost.hpp), so memory_Bps is the number that
// matters; flops bounds compute-heavy variants.
#include "models/profile.hpp"

namespace luwu::models {

// Defaults of the optional host fields (their meanings are in models/profile_schema.cpp).
inline constexpr double kDefaultNumaRemoteFraction = 0.5;       // pages interleaved, or first touched by one thread
inline constexpr double kDefaultOptimizerWriteAllocate = 1.0;  // ordinary stores (DeepSpeed's csrc/includes/simd.h)

struct CpuSpec {
  int cores = 0;
  double memory_Bps = 0;   // achieved DRAM bandwidth: dram_theoretical_bandwidth * dram_stream_efficiency
  double flops = 0;        // peak fp32 FLOP/s over all cores
  int sockets = 1;
  double upi_Bps = 0;                  // inter-socket links, all of them, both directions; 0 on one socket
  double numa_remote_fraction = 0;     // share of DRAM traffic crossing them; 0 on one socket
  double optimizer_write_allocate = kDefaultOptimizerWriteAllocate;  // share of unread-line stores read first

  // The DRAM rate a streaming optimizer achieves.  On several sockets with memory not bound per
  // socket a share r of the traffic crosses the inter-socket links, so bytes B take
  // max(B / memory_Bps, r B / upi_Bps):  effective = min(memory_Bps, upi_Bps / r).
  double optimizer_memory_Bps() const;
};

// Kind "host".  sockets >= 2 needs upi_bandwidth (InputError at that field otherwise).
CpuSpec cpu_from_profile(const Profile& profile);

}  // namespace luwu::models
