#pragma once
// NVMe SSDs, alone and striped: an array of `count` identical devices striped evenly (RAID-0 style,
// as ZeRO-Infinity and LuWu's out-of-core optimizer spread state over SSDs) reads and writes at
// count times one device's sequential bandwidth and holds count times its capacity.
#include "models/profile.hpp"

namespace luwu::models {

struct SsdSpec {
  double read_Bps = 0;        // sequential read
  double write_Bps = 0;       // sequential write
  double capacity_bytes = 0;
  double latency_s = 0;       // read access latency
};

SsdSpec ssd_from_profile(const Profile& profile);  // kind "ssd"

struct SsdArray {
  SsdSpec device;
  int count = 1;

  double read_Bps() const { return count * device.read_Bps; }
  double write_Bps() const { return count * device.write_Bps; }
  double capacity_bytes() const { return count * device.capacity_bytes; }
  // Time to read/write `bytes` striped over all devices: latency + bytes / aggregate bandwidth.
  double read_time_s(double bytes) const { return device.latency_s + bytes / read_Bps(); }
  double write_time_s(double bytes) const { return device.latency_s + bytes / write_Bps(); }
};

}  // namespace luwu::models
