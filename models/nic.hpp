#pragma once
// An RDMA NIC (RoCEv2 over Ethernet, or InfiniBand), per direction, full duplex.
//   goodput = line_rate * mtu / (mtu + header_bytes)
// mtu is the transport payload per packet (the RDMA path MTU, e.g. 4096 B); header_bytes is all
// the per-packet cost on the wire: for RoCEv2, preamble+SFD 8 + Ethernet header 14 + IPv4 20 +
// UDP 8 + BTH 12 + ICRC 4 + FCS 4 + inter-frame gap 12 = 82 B.
#include "models/profile.hpp"

namespace luwu::models {

struct NicSpec {
  double line_rate_Bps = 0;    // per direction
  double mtu_bytes = 0;        // payload per packet
  double header_bytes = 0;     // per-packet wire overhead
  double latency_s = 0;        // small-message one-way latency

  double goodput_Bps() const { return line_rate_Bps * mtu_bytes / (mtu_bytes + header_bytes); }
  // Payload goodput when sending packets of `payload_bytes` (<= mtu), e.g. 256 B SwitchML packets.
  double goodput_Bps(double payload_bytes) const {
    return line_rate_Bps * payload_bytes / (payload_bytes + header_bytes);
  }
};

NicSpec nic_from_profile(const Profile& profile);  // kind "nic" (or the NIC part of a "smartnic")

}  // namespace luwu::models
