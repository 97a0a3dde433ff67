#pragma once
// A SmartNIC: a NIC plus on-board processing, DMA engines and memory, with a GPUDirect path (it can
// DMA straight into GPU memory).  Per direction, its hardware data path carries
//   throughput(packet_bytes) = min(line goodput at that packet size,
//                                  packets_per_s * packet_bytes,
//                                  processing_Bps)
// Two kinds differ in how push (host -> network) and pull (network -> host) share the device
// (the LuWu paper, arXiv 2409.00918, on its SmartNIC choice):
//  - fpga (e.g. Xilinx Alveo U50): packets are processed on-path in hardware pipelines with
//    separate push and pull units, so push and pull each run at throughput() at once.
//  - soc (BlueField-2/3): traffic is forwarded through the Arm cores, which adds two limits for a
//    rate r of each stream:
//      (a) the Arm-to-internal-switch link, arm_link_Bps per direction, carries every stream once
//          each way:      push + pull: 2r <= arm_link_Bps        one alone: r <= arm_link_Bps
//      (b) every byte is written into Arm DRAM and read out again:
//                         push + pull: 4r <= arm_memory_Bps * arm_memory_efficiency
//                         one alone:   2r <= arm_memory_Bps * arm_memory_efficiency
//    and r = min(throughput(packet_bytes), (a), (b)).
#include <string>
#include <vector>

#include "models/nic.hpp"

namespace luwu::models {

enum class SmartNicKind { Fpga, Soc };

// The profile field that names the kind, and its values (models/profile_schema.cpp).
inline const char* const kSmartNicKindField = "smartnic_kind";
inline const std::vector<std::string>& smartnic_kind_names() {
  static const std::vector<std::string> names = {"fpga", "soc"};  // index = SmartNicKind
  return names;
}

struct SmartNicSpec {
  NicSpec nic;
  SmartNicKind kind = SmartNicKind::Fpga;
  double packets_per_s = 0;      // packet processing rate
  double processing_Bps = 0;     // on-NIC data processing rate (bytes/s)
  int dma_engines = 0;
  double memory_bytes = 0;
  bool gpudirect = false;
  // soc only: the Arm complex's link to the internal switch (per direction) and its DRAM.
  double arm_link_Bps = 0;
  double arm_memory_Bps = 0;         // theoretical (wire) bandwidth
  double arm_memory_efficiency = 1;  // achievable streaming share of it

  // Payload bytes/s of the hardware data path, per direction, for packets carrying `packet_bytes`.
  double throughput_Bps(double packet_bytes) const;

  // The rate of each of push and pull (bytes/s of payload) when both stream at once (LuWu's worker
  // in backward: gradients out, parameters in), and of one stream alone.
  double push_pull_each_Bps(double packet_bytes) const { return stream_Bps(packet_bytes, 2); }
  double one_direction_Bps(double packet_bytes) const { return stream_Bps(packet_bytes, 1); }

 private:
  double stream_Bps(double packet_bytes, int streams) const;
};

// Kind "smartnic".  A profile without smartnic_kind is an fpga (the on-path model, which every
// SmartNIC was before kinds existed); a soc needs arm_link_bandwidth, arm_memory_bandwidth and
// arm_memory_stream_efficiency (InputError naming the missing field's path).
SmartNicSpec smartnic_from_profile(const Profile& profile);

}  // namespace luwu::models
