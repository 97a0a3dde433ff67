#pragma once
// NVLink (point-to-point) or NVSwitch (all-to-all among the GPUs of a node): the bandwidth one GPU
// has into the fabric, per direction, full duplex, and a latency.  Where a profile gives what NCCL's
// ring achieves on the fabric (measured with nccl-tests), a collective ring inside the server runs
// as NCCL's does, not at the wire's rate:
//   a ring step of b bytes takes  step_overhead + b / min(wire, ring bus bandwidth)
// so an N-GPU all-reduce of S bytes takes about 2(N-1) step_overhead + 2(N-1)/N S / busbw: the
// alpha-beta form nccl-tests' busbw column is reported in.  NCCL runs small buffers with its
// low-latency protocols: below nccl_ring_large_buffer a step costs the small overhead instead.
#include "models/profile.hpp"

namespace luwu::models {

struct NvlinkSpec {
  double per_direction_Bps = 0;   // per GPU, per direction
  double latency_s = 0;
  int gpus = 0;                   // GPUs on the fabric (NVSwitch profiles); 0 = not stated
  double nccl_ring_bus_Bps = 0;               // NCCL ring's saturated bus bandwidth on it; 0 = not measured
  double nccl_ring_step_overhead_s = 0;       // its cost per step beyond the wire, large buffers
  double nccl_ring_small_step_overhead_s = 0; // the same below nccl_ring_large_buffer_bytes
  double nccl_ring_large_buffer_bytes = 0;    // the collective's buffer size from which the large overhead holds
};

NvlinkSpec nvlink_from_profile(const Profile& profile);  // kind "nvlink" or "nvswitch"

}  // namespace luwu::models
