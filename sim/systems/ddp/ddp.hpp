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

}  // namespace luwu::sim
