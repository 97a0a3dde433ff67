#pragma once
// A SmartNIC (e.g. BlueField-2): a NIC plus on-board processing, DMA engines and memory, with a
// GPUDirect path (it can DMA straight into GPU memory).
//   throughput(packet_bytes) = min(line goodput at that packet size,
//                                  packets_per_s * packet_bytes,
//                                  processing_Bps)
#include "models/nic.hpp"

namespace luwu::models {

struct SmartNicSpec {
  NicSpec nic;
  double packets_per_s = 0;      // packet processing rate
  double processing_Bps = 0;     // on-NIC data processing rate (bytes/s)
  int dma_engines = 0;
  double memory_bytes = 0;
  bool gpudirect = false;

  // Payload bytes/s for packets carrying `packet_bytes` of payload each.
  double throughput_Bps(double packet_bytes) const;
};

SmartNicSpec smartnic_from_profile(const Profile& profile);  // kind "smartnic"

}  // namespace luwu::models
