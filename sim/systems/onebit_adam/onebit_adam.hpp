#pragma once
// 1-bit Adam (Tang et al., arXiv 2102.02888; DeepSpeed's OnebitAdam with its NCCL backend).
#include "sim/systems/ddp/ddp.hpp"
#include "sim/systems/system.hpp"

namespace luwu::sim {

struct OnebitAdamSettings {
  // Which stage one iteration is in: the warm-up of plain Adam with full-precision gradient
  // all-reduce (DDP's schedule) until DeepSpeed's freeze_step, or the compression stage after it
  // (variance frozen, the momentum exchanged as 1-bit signs with error compensation).  A run's
  // time is freeze_step warm-up iterations plus the rest compressed: simulate both stages.
  enum class Stage { Warmup, Compressed } stage = Stage::Compressed;
  DdpSettings warmup;  // the warm-up's buckets and collectives
  // HBM bytes per parameter of the compression stage's elementwise kernels around the exchange
  // (momentum update, worker-side error compensation and sign packing, unpacking and averaging
  // the gathered signs): the momentum (fp32) read and written, the worker error (fp32) read and
  // written, the packed signs written and read back.  Project assumption from the algorithm's
  // buffers, about 4 x 4 B + 2 x 1/8 B; a measurement would replace it.
  double codec_hbm_bytes_per_param = 16.25;
};

SystemPtr parse_onebit_adam(const SystemEntry& entry);

}  // namespace luwu::sim
