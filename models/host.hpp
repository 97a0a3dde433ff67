#pragma once
// A host (an optimizer node or a worker's server) assembled from profiles: CPU and DRAM (kind
// "host"), optionally an SSD array, a CXL memory tier and GPUs.  And the time of an out-of-core
// optimizer step whose state is spread over DRAM, CXL memory and SSDs.
//
// Out-of-core step, per parameter, state S = cost.state_bytes_per_param (read, and written back):
//   SSD tier   : SsdArray::streaming_s(ssd_share * S, ssd_share * S)        (read and written back at once)
//   CXL tier   : cxl_share * S * 2 / cxl_Bps                                 (the CPU reads and writes in place)
//   DRAM       : (bytes_read + bytes_written + a * bytes_written_unread
//                 - 2 * cxl_share * S + 2 * ssd_share * S) / dram_Bps
//                (everything not in CXL passes through DRAM; SSD-resident state is staged into DRAM
//                 and back out, so it crosses the DRAM bus twice more; a = the host's
//                 optimizer_write_allocate: the share of stores to unread lines, the 16-bit copy-out,
//                 that read the line first)
//                dram_Bps = CpuSpec::optimizer_memory_Bps(): on sockets >= 2, min(DRAM, UPI / r)
//                with r the share of the traffic that crosses the inter-socket links
//   compute    : flops / cpu_flops
//   time       = params * max(SSD, CXL, DRAM, compute)
// The max assumes the step streams in chunks with double buffering, so tiers and compute overlap
// (as ZeRO-Infinity's and LuWu's out-of-core optimizers do).
#include <optional>

#include "models/cpu.hpp"
#include "models/gpu.hpp"
#include "models/memory.hpp"
#include "models/optimizer_cost.hpp"
#include "models/optimizer_node.hpp"
#include "models/storage.hpp"

namespace luwu::models {

struct HostSpec {
  std::string name;
  CpuSpec cpu;
  MemorySpec dram;
  std::optional<SsdArray> ssds;
  std::optional<MemorySpec> cxl;  // all the host's CXL expanders as one striped tier
  int cxl_devices = 0;            // how many expanders `cxl` stripes over
  std::optional<GpuSpec> gpu;
  int gpu_count = 0;
  // Per-thread step rates, when the host profile gives them (LuWu's optimizer node's threads).
  std::optional<NodeThreadRates> thread_rates;
  // The rate NCCL's kernels reach through a host-memory bounce buffer when GPUDirect RDMA is off
  // (profile field nccl_host_staged_bandwidth); 0: not known for this host.
  double nccl_host_staged_Bps = 0;
  // The host thread's time to launch one GPU kernel from eager PyTorch (profile field
  // eager_kernel_launch_time); 0: launches take no time.
  double eager_kernel_launch_s = 0;
};

// `host` must be of kind "host"; the others are optional (nullptr) and checked for their kinds.
HostSpec host_from_profiles(const Profile& host, const Profile* ssd = nullptr, int ssd_count = 0,
                            const Profile* cxl = nullptr, const Profile* gpu = nullptr, int gpu_count = 0);

// Shares of the optimizer state in each tier; they must be non-negative and sum to 1.
struct StatePlacement {
  double dram_share = 1;
  double cxl_share = 0;
  double ssd_share = 0;
};

// Per-tier times of an out-of-core CPU optimizer step (see the formula above), and the step time.
struct OptimizerStepTimes {
  double dram_s = 0;
  double cxl_s = 0;
  double ssd_s = 0;
  double compute_s = 0;
  double total_s = 0;  // the max of the above
};

// std::invalid_argument if the placement is not a split of 1, or uses a tier the host lacks.
OptimizerStepTimes cpu_optimizer_step_times(const HostSpec& host, double params, const OptimizerCost& cost,
                                            const StatePlacement& placement);

}  // namespace luwu::models
