#pragma once
// DDP (PyTorch DistributedDataParallel, NCCL all-reduce).
#include "sim/systems/system.hpp"

namespace luwu::sim {

struct DdpSettings {
  // Gradient bucket size.  PyTorch DDP's bucket_cap_mb default, 25 MB.
  double bucket_bytes = 25e6;
  CollectiveSettings collectives;
};

SystemPtr parse_ddp(const SystemEntry& entry);

// DDP's iteration (bucketed all-reduce overlapped with backward, Adam on the GPU), which 1-bit
// Adam's warm-up stage runs too.
std::unique_ptr<Schedule> make_ddp_schedule(const DdpSettings& settings);

}  // namespace luwu::sim
