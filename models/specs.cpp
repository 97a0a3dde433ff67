// The typed specs built from profiles, and the few formulas that are not one-liners.
#include <cmath>
#include <algorithm>
#include <cstdio>
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

double GpuSpec::wave_efficiency(double tiles) const {
  if (!(tiles > 0)) throw std::invalid_argument("a kernel needs at least one tile");
  if (sm_count <= 0) return 1;
  const double waves = std::ceil(tiles / sm_count);
  return tiles / (waves * sm_count);
}

double GpuSpec::gemm_tiles(double m, double n, double batch) const {
  return batch * std::ceil(m / kernel_tile_elements) * std::ceil(n / kernel_tile_elements);
}

double GpuSpec::gemm_hbm_time_s(double m, double n, double k, Precision p, double batch) const {
  return batch * (m * k + k * n + m * n) * bytes_per_element(p) / achieved_hbm_Bps();
}

double GpuSpec::gemm_time_s(double m, double n, double k, Precision p, double batch) const {
  if (!(m > 0 && n > 0 && k > 0 && batch > 0)) throw std::invalid_argument("GEMM dimensions must be positive");
  const double compute_s = 2 * batch * m * n * k / (peak_flops(p) * gemm_efficiency_max);
  const double waves = gemm_wave_quantization ? wave_efficiency(gemm_tiles(m, n, batch)) : 1.0;
  return std::max(compute_s, gemm_hbm_time_s(m, n, k, p, batch)) / waves;
}

double GpuSpec::gemm_efficiency(double m, double n, double k, Precision p, double batch) const {
  return 2 * batch * m * n * k / (peak_flops(p) * gemm_time_s(m, n, k, p, batch));
}

double GpuSpec::matrix_kernel_time_s(double flops, double bytes, Precision p) const {
  return std::max(flops / (peak_flops(p) * gemm_efficiency_max), bytes / achieved_hbm_Bps());
}

double GpuSpec::kernel_sm_share(double output_elements) const {
  if (sm_count <= 0) return 1;
  const double blocks = std::ceil(output_elements / (kernel_tile_elements * kernel_tile_elements));
  return std::min(1.0, blocks / sm_count);
}

double GpuSpec::roofline_time_s(double flops, double bytes, Precision p) const {
  return std::max(flops / peak_flops(p), bytes / achieved_hbm_Bps());
}

double GpuSpec::elementwise_time_s(double flops, double bytes, double reduction_bytes, double broadcast_bytes,
                                   Precision p) const {
  // One rate for all: the plain roofline, to the last bit.
  const bool reductions = reduction_bytes > 0 && row_reduction_hbm_efficiency != hbm_efficiency;
  const bool broadcasts = broadcast_bytes > 0 && broadcast_hbm_efficiency != hbm_efficiency;
  if (!reductions && !broadcasts) return roofline_time_s(flops, bytes, p);
  const double reduced = reductions ? reduction_bytes : 0, broadcast = broadcasts ? broadcast_bytes : 0;
  const double streamed = std::max(0.0, bytes - reduced - broadcast);
  return std::max(flops / peak_flops(p), streamed / achieved_hbm_Bps() +
                                             reduced / (hbm_Bps * row_reduction_hbm_efficiency) +
                                             broadcast / (hbm_Bps * broadcast_hbm_efficiency));
}

GpuSpec gpu_from_profile(const Profile& p) {
  require_kind(p, spec_kinds::gpu);
  GpuSpec g;
  g.name = p.name;
  g.peak_fp16_flops = p.get("peak_fp16_flops");
  g.peak_bf16_flops = p.get_or("peak_bf16_flops", 0);
  g.peak_fp32_flops = p.get("peak_fp32_flops");
  g.hbm_bytes = p.get("hbm_capacity");
  g.hbm_Bps = p.get("hbm_bandwidth");
  g.gemm_efficiency_max = p.get("gemm_efficiency_max");
  g.hbm_efficiency = p.get_or("hbm_efficiency", 1);
  g.row_reduction_hbm_efficiency = p.get_or("row_reduction_hbm_efficiency", g.hbm_efficiency);
  g.broadcast_hbm_efficiency = p.get_or("broadcast_hbm_efficiency", g.hbm_efficiency);
  g.collective_interference = p.get("collective_interference");
  g.dma_interference = p.get("dma_interference");
  g.sm_count = static_cast<int>(p.get_or("sm_count", 0));
  g.kernel_tile_elements = p.get_or("kernel_tile", 128);
  g.gemm_wave_quantization = p.get_or("gemm_wave_quantization", 1) != 0;
  g.collective_sm_share = p.get_or("collective_sm_share", 0);
  g.collective_bandwidth_drop = p.get_or("collective_bandwidth_drop_under_gemm", 0);
  return g;
}

// ---- links ----

PcieSpec pcie_from_profile(const Profile& p) {
  require_kind(p, spec_kinds::pcie);
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
  require_kind(p, spec_kinds::nvlink);
  return NvlinkSpec{p.get("per_direction_bandwidth"), p.get("latency"), static_cast<int>(p.get_or("gpus", 0)),
                    p.get_or("nccl_ring_bus_bandwidth", 0), p.get_or("nccl_ring_step_overhead", 0),
                    p.get_or("nccl_ring_small_step_overhead", 0), p.get_or("nccl_ring_large_buffer", 0)};
}

NicSpec nic_from_profile(const Profile& p) {
  require_kind(p, spec_kinds::nic);
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
  require_kind(p, spec_kinds::smartnic);
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
  require_kind(p, spec_kinds::network_switch);
  SwitchSpec s;
  s.ports = static_cast<int>(p.get("ports"));
  s.port_Bps = p.get("port_rate");
  s.pipeline_latency_s = p.get("pipeline_latency");
  s.multicast = p.get_or("multicast", 0) != 0;
  // The aggregation group: all (a switch that aggregates) or none (a conventional switch).
  const char* group[] = {"aggregation_slots", "elements_per_packet", "element_size", "aggregation_packet_rate",
                         "sram_capacity"};
  std::string given, missing;
  for (const char* field : group) (p.has(field) ? given : missing) = field;
  if (!given.empty() && !missing.empty())
    throw InputError(p.file, p.json_path + ".fields." + missing,
                     "switch \"" + p.name + "\" has " + given + " but not " + missing +
                         ": a switch that aggregates gives every aggregation field (aggregation_slots, "
                         "elements_per_packet, element_size, aggregation_packet_rate, sram_capacity), a "
                         "conventional switch none");
  if (given.empty()) return s;
  s.aggregates = true;
  s.aggregation_slots = p.get("aggregation_slots");
  s.elements_per_packet = p.get("elements_per_packet");
  s.element_bytes = p.get("element_size");
  s.aggregation_packets_per_s = p.get("aggregation_packet_rate");
  s.sram_bytes = p.get("sram_capacity");
  return s;
}

// ---- storage, memory, CPU ----

namespace {
std::string fmt_count(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
}  // namespace

double queued_Bps(double sequential_Bps, double latency_s, double request_bytes, double queue_depth) {
  if (!(sequential_Bps > 0 && request_bytes > 0 && queue_depth > 0 && latency_s >= 0))
    throw std::invalid_argument("queued bandwidth needs a positive bandwidth, request size and queue depth");
  return std::min(sequential_Bps, queue_depth * request_bytes / (latency_s + request_bytes / sequential_Bps));
}

SsdSpec behind_interface(SsdSpec s, double interface_Bps) {
  if (!(interface_Bps > 0)) throw std::invalid_argument("an SSD's interface bandwidth must be positive");
  s.read_Bps = std::min(s.read_Bps, interface_Bps);
  s.write_Bps = std::min(s.write_Bps, interface_Bps);
  s.read_write_Bps = std::min(s.shared_Bps(), 2 * interface_Bps);
  s.interface_Bps = interface_Bps;
  return s;
}

namespace {

// The achieved rate of the PCIe slot an SSD profile names (pcie_generation and pcie_lanes), per direction.
double slot_Bps_per_direction(const Profile& p) {
  // The lane rate and line code of that generation are the shipped x16 profile's; only the lanes differ.
  const std::string link = "pcie-gen" + std::to_string(static_cast<int>(p.get("pcie_generation"))) + "-x16";
  const auto shipped = shipped_profile_names();
  if (std::find(shipped.begin(), shipped.end(), link) == shipped.end())
    throw InputError(p.file, p.json_path + ".fields.pcie_generation",
                     "no shipped PCIe profile \"" + link + "\" gives that generation's lane rate");
  const double lanes_field = p.get("pcie_lanes");
  const int lanes = lanes_field > 32 ? 0 : static_cast<int>(lanes_field);
  if (lanes == 0 || (lanes & (lanes - 1)) != 0)
    throw InputError(p.file, p.json_path + ".fields.pcie_lanes",
                     "a PCIe link has 1, 2, 4, 8, 16 or 32 lanes, found " + fmt_count(lanes_field));
  PcieSpec pcie = pcie_from_profile(find_profile(link));
  pcie.lanes = lanes;
  return pcie.achieved_Bps_per_direction();
}

}  // namespace

SsdSpec ssd_from_profile(const Profile& p) {
  require_kind(p, spec_kinds::ssd);
  SsdSpec s{p.get("read_bandwidth"), p.get("write_bandwidth"), p.get("capacity"), p.get("latency")};
  s.read_write_Bps = p.get_or("read_write_bandwidth", std::max(s.read_Bps, s.write_Bps));
  if (p.has("pcie_generation") != p.has("pcie_lanes")) {
    const std::string given = p.has("pcie_generation") ? "pcie_generation" : "pcie_lanes";
    throw InputError(p.file, p.json_path + ".fields." + given,
                     "an SSD's interface needs both pcie_generation and pcie_lanes, found only " + given);
  }
  // The narrower of the slot and the host's path caps the device.
  double interface_Bps = HUGE_VAL;
  if (p.has("pcie_generation")) interface_Bps = slot_Bps_per_direction(p);
  if (p.has("host_path_bandwidth")) interface_Bps = std::min(interface_Bps, p.get("host_path_bandwidth"));
  return interface_Bps < HUGE_VAL ? behind_interface(s, interface_Bps) : s;
}

MemorySpec memory_from_profile(const Profile& p) {
  require_kind(p, spec_kinds::memory);
  std::string prefix = p.kind == "host" ? "dram_" : "";
  return MemorySpec{p.get(prefix + "capacity"), p.get(prefix + "theoretical_bandwidth"),
                    p.get(prefix + "stream_efficiency"), p.get_or(prefix + "latency", 0)};
}

CpuSpec cpu_from_profile(const Profile& p) {
  require_kind(p, spec_kinds::host);
  CpuSpec c;
  c.cores = static_cast<int>(p.get("cores"));
  c.memory_Bps = memory_from_profile(p).achieved_Bps();
  c.flops = p.get("cpu_peak_fp32_flops");
  c.sockets = static_cast<int>(p.get_or("sockets", 1));
  c.optimizer_write_allocate = p.get_or("optimizer_write_allocate", kDefaultOptimizerWriteAllocate);
  if (c.sockets >= 2) {
    if (!p.has("upi_bandwidth"))
      throw InputError(p.file, p.json_path + ".fields.upi_bandwidth",
                       "host \"" + p.name + "\" has " + std::to_string(c.sockets) +
                           " sockets: give upi_bandwidth, the inter-socket links' bandwidth (all links, both "
                           "directions), e.g. from the CPU's datasheet (links x GT/s x 2 B x 2)");
    c.upi_Bps = p.get("upi_bandwidth");
    c.numa_remote_fraction = p.get_or("numa_remote_fraction", kDefaultNumaRemoteFraction);
  }
  return c;
}

double CpuSpec::optimizer_memory_Bps() const {
  if (sockets < 2 || numa_remote_fraction <= 0) return memory_Bps;
  return std::min(memory_Bps, upi_Bps / numa_remote_fraction);
}

}  // namespace luwu::models
