#pragma once
// A PCIe link, per direction (PCIe is full duplex: both directions run at this rate at once).
//   raw      = lanes * transfer_rate_per_lane * encoding_efficiency / 8         [bytes/s]
//   encoding_efficiency = payload bits / symbol bits (8b/10b for Gen1-2, 128b/130b for Gen3+)
//   protocol_efficiency = max_payload / (max_payload + tlp_overhead + dllp_overhead_per_tlp)
//   achieved = raw * protocol_efficiency
// TLP overhead: framing (2 B), sequence number (2 B), header (16 B with 64-bit addresses),
// LCRC (4 B) = 24 B; DLLPs (ACKs, flow-control updates) amortised per TLP on top.
#include "models/profile.hpp"

namespace luwu::models {

struct PcieSpec {
  int generation = 0;
  int lanes = 0;
  double transfer_rate_per_lane_Hz = 0;   // transfers (bits) per second per lane, e.g. 16e9 for Gen4
  double encoding_efficiency = 0;         // 128/130 or 8/10
  double protocol_efficiency = 0;         // TLP payload share, see above
  double latency_s = 0;

  double raw_Bps_per_direction() const {
    return lanes * transfer_rate_per_lane_Hz * encoding_efficiency / 8.0;
  }
  double achieved_Bps_per_direction() const { return raw_Bps_per_direction() * protocol_efficiency; }
};

PcieSpec pcie_from_profile(const Profile& profile);  // kind "pcie"

}  // namespace luwu::models
