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
// At 1:1 (as much read as written, the in-place stream) each direction then moves
//   mixed_Bps_per_direction = min(read_Bps, write_Bps, read_write_Bps / 2)
// which is what a "GB/s per direction at 1:1 mixed read/write" measurement (the LuWu paper's
// sizing of its SSDs) states.
//
// The host interface caps a device: PCIe is full duplex, so each direction moves at most the
// link's per-direction rate and both together at most twice that (behind_interface).  The slot is
// one such cap; the host's path behind it can be narrower (host_path_bandwidth: a shared uplink,
// fewer lanes wired, a chipset link), and is a cap of the same kind: a host that measures lower per
// direction at 1:1 mixed than the same drive elsewhere limits a read-only or write-only stream
// as much.
//
// Requests of q bytes with d of them in flight (an asynchronous I/O queue) move, by Little's law,
//   min(sequential_Bps, d * q / (latency + q / sequential_Bps))
// per direction: each request holds a queue slot for its access latency plus its transfer.  Over an
// array the d requests spread evenly (each lands on one device: a stripe unit of at least q), so
// each device sees d / count of them.
#include <algorithm>

#include "models/profile.hpp"

namespace luwu::models {

// One direction's achieved bandwidth for requests of `request_bytes` at `queue_depth` in flight
// (Little's law, see above).  std::invalid_argument unless bandwidth, request size and queue depth
// are positive and the latency non-negative.
double queued_Bps(double sequential_Bps, double latency_s, double request_bytes, double queue_depth);

struct SsdSpec {
  double read_Bps = 0;        // sequential read
  double write_Bps = 0;       // sequential write
  double capacity_bytes = 0;
  double latency_s = 0;       // access latency (a read's; writes are taken to wait as long)
  double read_write_Bps = 0;  // reads plus writes per second when both run at once; 0: the default (see above)
  double interface_Bps = 0;   // host interface per direction (slot or host path, the narrower), already
                              // applied to the rates above; 0: none stated

  double shared_Bps() const { return read_write_Bps > 0 ? read_write_Bps : std::max(read_Bps, write_Bps); }
  double mixed_Bps_per_direction() const { return std::min({read_Bps, write_Bps, shared_Bps() / 2}); }
  double read_Bps_at(double request_bytes, double queue_depth) const {
    return queued_Bps(read_Bps, latency_s, request_bytes, queue_depth);
  }
  double write_Bps_at(double request_bytes, double queue_depth) const {
    return queued_Bps(write_Bps, latency_s, request_bytes, queue_depth);
  }
};

// `device` behind a full-duplex link of `interface_Bps_per_direction`: each direction at most the
// link, reads and writes together at most twice it.
SsdSpec behind_interface(SsdSpec device, double interface_Bps_per_direction);

// Kind "ssd".  With pcie_generation and pcie_lanes, the device sits behind that link: the shipped
// profile pcie-gen<generation>-x16 gives the lane rate, line code and TLP efficiency (pcie.hpp),
// scaled to the lanes, and behind_interface caps the rates; with host_path_bandwidth, behind that
// too where it is narrower.  InputError at the field when only
// one of the two is given or no such PCIe profile is shipped.
SsdSpec ssd_from_profile(const Profile& profile);

struct SsdArray {
  SsdSpec device;
  int count = 1;

  double read_Bps() const { return count * device.read_Bps; }
  double write_Bps() const { return count * device.write_Bps; }
  double read_write_Bps() const { return count * device.shared_Bps(); }
  double mixed_Bps_per_direction() const { return count * device.mixed_Bps_per_direction(); }
  double capacity_bytes() const { return count * device.capacity_bytes; }
  // The array as a queue of `queue_depth` requests of `request_bytes` sees it: each device at
  // d / count requests in flight (see above); the shared limit is the devices' own.
  SsdArray at_requests(double request_bytes, double queue_depth) const {
    SsdArray a = *this;
    a.device.read_Bps = device.read_Bps_at(request_bytes, queue_depth / count);
    a.device.write_Bps = device.write_Bps_at(request_bytes, queue_depth / count);
    a.device.read_write_Bps = device.shared_Bps();
    return a;
  }
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
