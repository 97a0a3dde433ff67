// The typed specs built from profiles, and the few formulas that are not one-liners.
#include <algorithm>
#include <stdexcept>

#include "models/cpu.hpp"
#include "models/gpu.hpp"
#include "models/memory.hpp"
#include "models/nic.hpp"
#include "models/nvlink.hpp"
#include "models/pcie.hpp"
#include "models/programmable_switch.hpp"
#include "models/smartnic.hpp"
#include "models/storage.hpp"

namespace luwu::models {

// ---- GPU ----

double GpuSpec::peak_flops(Precision p) const {
  double peak = p == Precision::Fp16 ? peak_fp16_flops : p == Precision::Bf16 ? peak_bf16_flops : peak_fp32_flops;
  if (!(peak > 0)) throw std::invalid_argument("GPU \"" + name + "\" does not support " + to_string(p));
  return peak;
}

double GpuSpec::gemm_efficiency(double m, double n, double k) const {
  if (!(m > 0 && n > 0 && k > 0)) throw std::invalid_argument("GEMM dimensions must be positive");
  double harmonic_dim = 3.0 / (1.0 / m + 1.0 / n + 1.0 / k);
  return gemm_efficiency_max * harmonic_dim / (harmonic_dim + gemm_half_efficiency_dim);
}

double GpuSpec::compute_time_s(double flops, double m, double n, double k, Precision p) const {
  return flops / (peak_flops(p) * gemm_efficiency(m, n, k));
}

double GpuSpec::roofline_time_s(double flops, double bytes, Precision p) const {
  return std::max(flops / peak_flops(p), bytes / hbm_Bps);
}

GpuSpec gpu_from_profile(const Profile& p) {
  require_kind(p, {"gpu"});
  GpuSpec g;
  g.name = p.name;
  g.peak_fp16_flops = p.get("peak_fp16_flops");
  g.peak_bf16_flops = p.get_or("peak_bf16_flops", 0);
  g.peak_fp32_flops = p.get("peak_fp32_flops");
  g.hbm_bytes = p.get("hbm_capacity");
  g.hbm_Bps = p.get("hbm_bandwidth");
  g.gemm_efficiency_max = p.get("gemm_efficiency_max");
  g.gemm_half_efficiency_dim = p.get("gemm_half_efficiency_dim");
  g.collective_interference = p.get("collective_interference");
  g.dma_interference = p.get("dma_interference");
  return g;
}

// ---- links ----

PcieSpec pcie_from_profile(const Profile& p) {
  require_kind(p, {"pcie"});
  PcieSpec s;
  s.generation = static_cast<int>(p.get("generation"));
  s.lanes = static_cast<int>(p.get("lanes"));
  s.transfer_rate_per_lane_Hz = p.get("transfer_rate_per_lane");
  double payload_bits = p.get("encoding_payload_bits"), symbol_bits = p.get("encoding_symbol_bits");
  if (payload_bits > symbol_bits)
    throw InputError(p.file, p.json_path + ".fields.encoding_payload_bits",
                     "a line code cannot carry more payload bits than it sends");
  s.encoding_efficiency = payload_bits / symbol_bits;
  double max_payload = p.get("max_payload");
  s.protocol_efficiency = max_payload / (max_payload + p.get("tlp_overhead") + p.get("dllp_overhead_per_tlp"));
  s.latency_s = p.get("latency");
  return s;
}

NvlinkSpec nvlink_from_profile(const Profile& p) {
  require_kind(p, {"nvlink", "nvswitch"});
  return NvlinkSpec{p.get("per_direction_bandwidth"), p.get("latency"), static_cast<int>(p.get_or("gpus", 0))};
}

NicSpec nic_from_profile(const Profile& p) {
  require_kind(p, {"nic", "smartnic"});
  return NicSpec{p.get("line_rate"), p.get("mtu"), p.get("header_overhead"), p.get("latency")};
}

double SmartNicSpec::throughput_Bps(double packet_bytes) const {
  if (!(packet_bytes > 0)) throw std::invalid_argument("packet size must be positive");
  return std::min({nic.goodput_Bps(packet_bytes), packets_per_s * packet_bytes, processing_Bps});
}

double SmartNicSpec::stream_Bps(double packet_bytes, int streams) const {
  const double hardware = throughput_Bps(packet_bytes);
  if (kind == SmartNicKind::Fpga) return hardware;  // a push unit and a pull unit, each at line rate
  // Each stream crosses the Arm link once per direction and Arm DRAM twice (in, then out).
  const double arm_link = arm_link_Bps / streams;
  const double arm_memory = arm_memory_Bps * arm_memory_efficiency / (2.0 * streams);
  return std::min({hardware, arm_link, arm_memory});
}

SmartNicSpec smartnic_from_profile(const Profile& p) {
  require_kind(p, {"smartnic"});
  SmartNicSpec s;
  s.nic = nic_from_profile(p);
  s.packets_per_s = p.get("packet_rate");
  s.processing_Bps = p.get("processing_bandwidth");
  s.dma_engines = static_cast<int>(p.get("dma_engines"));
  s.memory_bytes = p.get("memory_capacity");
  s.gpudirect = p.get("gpudirect") != 0;
  s.kind = static_cast<SmartNicKind>(static_cast<int>(p.get_or(kSmartNicKindField, 0)));
  if (s.kind == SmartNicKind::Soc) {
    auto soc_field = [&p](const char* field) {
      if (!p.has(field))
        throw InputError(p.file, p.json_path + ".fields." + field,
                         "profile \"" + p.name + "\" is a soc SmartNIC (its traffic crosses the Arm cores): it needs \"" +
                             field + "\"");
      return p.get(field);
    };
    s.arm_link_Bps = soc_field("arm_link_bandwidth");
    s.arm_memory_Bps = soc_field("arm_memory_bandwidth");
    s.arm_memory_efficiency = soc_field("arm_memory_stream_efficiency");
  }
  return s;
}

// ---- programmable switch ----

double SwitchSpec::aggregation_throughput_Bps(double rtt_s, double line_rate_Bps) const {
  if (!(rtt_s > 0)) throw std::invalid_argument("round-trip time must be positive");
  return std::min(line_rate_Bps, aggregation_slots * payload_bytes() / rtt_s);
}

double SwitchSpec::aggregation_throughput_Bps(double rtt_s, double line_rate_Bps, int workers) const {
  if (workers < 1) throw std::invalid_argument("aggregation needs at least one worker");
  return std::min(aggregation_throughput_Bps(rtt_s, line_rate_Bps),
                  aggregation_packets_per_s * payload_bytes() / workers);
}

SwitchSpec switch_from_profile(const Profile& p) {
  require_kind(p, {"switch"});
  SwitchSpec s;
  s.ports = static_cast<int>(p.get("ports"));
  s.port_Bps = p.get("port_rate");
  s.aggregation_slots = p.get("aggregation_slots");
  s.elements_per_packet = p.get("elements_per_packet");
  s.element_bytes = p.get("element_size");
  s.aggregation_packets_per_s = p.get("aggregation_packet_rate");
  s.pipeline_latency_s = p.get("pipeline_latency");
  s.sram_bytes = p.get("sram_capacity");
  s.multicast = p.get("multicast") != 0;
  return s;
}

// ---- storage, memory, CPU ----

SsdSpec ssd_from_profile(const Profile& p) {
  require_kind(p, {"ssd"});
  SsdSpec s{p.get("read_bandwidth"), p.get("write_bandwidth"), p.get("capacity"), p.get("latency")};
  s.read_write_Bps = p.get_or("read_write_bandwidth", std::max(s.read_Bps, s.write_Bps));
  return s;
}

MemorySpec memory_from_profile(const Profile& p) {
  require_kind(p, {"memory", "host"});
  std::string prefix = p.kind == "host" ? "dram_" : "";
  return MemorySpec{p.get(prefix + "capacity"), p.get(prefix + "theoretical_bandwidth"),
                    p.get(prefix + "stream_efficiency"), p.get_or(prefix + "latency", 0)};
}

CpuSpec cpu_from_profile(const Profile& p) {
  require_kind(p, {"host"});
  return CpuSpec{static_cast<int>(p.get("cores")), memory_from_profile(p).achieved_Bps(), p.get("cpu_peak_fp32_flops")};
}

}  // namespace luwu::models
