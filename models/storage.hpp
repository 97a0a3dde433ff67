#pragma once
// NVMe SSDs, alone and striped: an array of `count` identical devices striped evenly (RAID-0 style,
// as ZeRO-Infinity and LuWu's out-of-core optimizer spread state over SSDs) reads and writes at
// count times one device's sequential bandwidth and holds count times its capacity.
//
// Reads and writes at once (an out-of-core optimizer reads its state while it writes the updated
// state back) share the device: the pair moves at most read_write_Bps in total, besides each
// direction's own limit.  Reading r bytes while writing w bytes then takes
//   latency + max(r / read_Bps, w / write_Bps, (r + w) / read_write_Bps)
// (what max-min sharing gives two backlogged streams of equal size, the in-place case; a lower
// bound otherwise).  Datasheets rarely
// give read_write_Bps; its default, max(read_Bps, write_Bps), is SimGrid's own for a disk
// (s4u::Disk::set_readwrite_bandwidth) and is what `luwusim calibrate` measures on a real device.
#include <algorithm>

#include "models/profile.hpp"

namespace luwu::models {

struct SsdSpec {
  double read_Bps = 0;        // sequential read
  double write_Bps = 0;       // sequential write
  double capacity_bytes = 0;
  double latency_s = 0;       // read access latency
  double read_write_Bps = 0;  // reads plus writes per second when both run at once; 0: the default (see above)
};

SsdSpec ssd_from_profile(const Profile& profile);  // kind "ssd"

struct SsdArray {
  SsdSpec device;
  int count = 1;

  double read_Bps() const { return count * device.read_Bps; }
  double write_Bps() const { return count * device.write_Bps; }
  double read_write_Bps() const {
    return count * (device.read_write_Bps > 0 ? device.read_write_Bps : std::max(device.read_Bps, device.write_Bps));
  }
  double capacity_bytes() const { return count * device.capacity_bytes; }
  // Time to read/write `bytes` striped over all devices: latency + bytes / aggregate bandwidth.
  double read_time_s(double bytes) const { return device.latency_s + bytes / read_Bps(); }
  double write_time_s(double bytes) const { return device.latency_s + bytes / write_Bps(); }
  // Reading `read_bytes` while writing `write_bytes`, both streaming (see the formula above).
  double stream_time_s(double read_bytes, double write_bytes) const {
    return device.latency_s + streaming_s(read_bytes, write_bytes);
  }
  // The same without the access latency: the bandwidth-bound part of a long pipelined stream.
  double streaming_s(double read_bytes, double write_bytes) const {
    return std::max({read_bytes / read_Bps(), write_bytes / write_Bps(), (read_bytes + write_bytes) / read_write_Bps()});
  }
};

}  // namespace luwu::models
