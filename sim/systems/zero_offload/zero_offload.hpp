#pragma once
// ZeRO-Offload (Ren et al., arXiv 2101.06840).
#include "sim/systems/system.hpp"

namespace luwu::sim {

struct ZeroOffloadSettings {
  // Gradients are reduce-scattered in buckets of this many bytes.  DeepSpeed's reduce_bucket_size
  // default, 5e8 elements = 1e9 bytes at 16 bits.
  double reduce_bucket_bytes = 1e9;
  // The paper's one-step delayed parameter update (DPU): the CPU step, the copy back and the
  // all-gather of the previous step run under this step's forward and backward.  Off by default:
  // the paper enables it only after the first few steps, as an option.
  bool delayed_param_update = false;
  CollectiveSettings collectives;
};

SystemPtr parse_zero_offload(const SystemEntry& entry);

}  // namespace luwu::sim
