#include "models/derived.hpp"

#include "models/models.hpp"

namespace luwu::models {

std::vector<DerivedQuantity> derived_quantities(const Profile& p) {
  std::vector<DerivedQuantity> out;
  if (p.kind == "gpu") {
    GpuSpec g = gpu_from_profile(p);
    out.push_back({"ridge_point_fp16", g.peak_fp16_flops / g.hbm_Bps, "FLOP/B", "peak_fp16_flops / hbm_bandwidth"});
    out.push_back({"achieved_hbm_bandwidth", g.achieved_hbm_Bps(), "B/s", "hbm_bandwidth * hbm_efficiency"});
    const char* formula =
        g.gemm_wave_quantization
            ? "max(2mnk / (peak_fp16_flops * gemm_efficiency_max), 2(mk + kn + mn) / achieved_hbm_bandwidth) / waves, "
              "waves = tiles / (ceil(tiles / sm_count) sm_count), tiles = ceil(m / kernel_tile) ceil(n / kernel_tile); "
              "as a fraction of peak"
            : "max(2mnk / (peak_fp16_flops * gemm_efficiency_max), 2(mk + kn + mn) / achieved_hbm_bandwidth) "
              "(gemm_wave_quantization false: no wave loss); as a fraction of peak";
    out.push_back({"gemm_efficiency_1024", g.gemm_efficiency(1024, 1024, 1024), "fraction",
                   std::string(formula) + ", m = n = k = 1024"});
    out.push_back({"gemm_efficiency_12288", g.gemm_efficiency(12288, 12288, 12288), "fraction",
                   std::string(formula) + ", m = n = k = 12288"});
  } else if (p.kind == "pcie") {
    PcieSpec s = pcie_from_profile(p);
    out.push_back({"encoding_efficiency", s.encoding_efficiency, "fraction", "encoding_payload_bits / encoding_symbol_bits"});
    out.push_back({"protocol_efficiency", s.protocol_efficiency, "fraction",
                   "max_payload / (max_payload + tlp_overhead + dllp_overhead_per_tlp)"});
    out.push_back({"raw_bandwidth_per_direction", s.raw_Bps_per_direction(), "B/s",
                   "lanes * transfer_rate_per_lane * encoding_efficiency / 8"});
    out.push_back({"achieved_bandwidth_per_direction", s.achieved_Bps_per_direction(), "B/s",
                   "raw_bandwidth_per_direction * protocol_efficiency"});
  } else if (p.kind == "nic" || p.kind == "smartnic") {
    NicSpec n = nic_from_profile(p);
    out.push_back({"goodput", n.goodput_Bps(), "B/s", "line_rate * mtu / (mtu + header_overhead)"});
    if (p.kind == "smartnic") {
      SmartNicSpec s = smartnic_from_profile(p);
      out.push_back({"throughput_256B_packets", s.throughput_Bps(256), "B/s",
                     "min(line goodput at 256 B, packet_rate * 256 B, processing_bandwidth)"});
      out.push_back({"throughput_mtu_packets", s.throughput_Bps(n.mtu_bytes), "B/s",
                     "min(goodput, packet_rate * mtu, processing_bandwidth)"});
      const bool soc = s.kind == SmartNicKind::Soc;
      out.push_back({"push_and_pull_each_mtu_packets", s.push_pull_each_Bps(n.mtu_bytes), "B/s",
                     soc ? "min(throughput_mtu_packets, arm_link_bandwidth / 2, arm_memory_bandwidth * "
                           "arm_memory_stream_efficiency / 4)"
                         : "throughput_mtu_packets (fpga: separate push and pull units)"});
      out.push_back({"one_direction_mtu_packets", s.one_direction_Bps(n.mtu_bytes), "B/s",
                     soc ? "min(throughput_mtu_packets, arm_link_bandwidth, arm_memory_bandwidth * "
                           "arm_memory_stream_efficiency / 2)"
                         : "throughput_mtu_packets"});
    }
  } else if (p.kind == "switch") {
    SwitchSpec s = switch_from_profile(p);
    if (s.aggregates) {
      out.push_back({"payload", s.payload_bytes(), "B", "elements_per_packet * element_size"});
      out.push_back({"slot_pool", s.slot_pool_bytes(), "B", "aggregation_slots * payload"});
    }
  } else if (p.kind == "ssd") {
    SsdSpec s = ssd_from_profile(p);
    if (s.interface_Bps > 0)
      out.push_back({"interface_bandwidth_per_direction", s.interface_Bps, "B/s",
                     "min(achieved rate of pcie-gen<pcie_generation>-x16 scaled to pcie_lanes, host_path_bandwidth) "
                     "(caps each direction)"});
    out.push_back({"mixed_bandwidth_per_direction", s.mixed_Bps_per_direction(), "B/s",
                   "min(read_bandwidth, write_bandwidth, read_write_bandwidth / 2): 1:1 mixed read/write"});
    out.push_back({"read_bandwidth_1MiB_qd1", s.read_Bps_at(1048576, 1), "B/s",
                   "min(read_bandwidth, d q / (latency + q / read_bandwidth)), q = 1 MiB, d = 1"});
  } else if (p.kind == "memory" || p.kind == "host") {
    MemorySpec m = memory_from_profile(p);
    out.push_back({"achieved_memory_bandwidth", m.achieved_Bps(), "B/s", "theoretical bandwidth * stream efficiency"});
  }
  return out;
}

}  // namespace luwu::models
