#pragma once
// NVLink (point-to-point) or NVSwitch (all-to-all among the GPUs of a node): the bandwidth one GPU
// has into the fabric, per direction, full duplex, and a latency.
#include "models/profile.hpp"

namespace luwu::models {

struct NvlinkSpec {
  double per_direction_Bps = 0;   // per GPU, per direction
  double latency_s = 0;
  int gpus = 0;                   // GPUs on the fabric (NVSwitch profiles); 0 = not stated
};

NvlinkSpec nvlink_from_profile(const Profile& profile);  // kind "nvlink" or "nvswitch"

}  // namespace luwu::models
