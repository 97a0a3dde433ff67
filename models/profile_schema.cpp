// The fields each kind of hardware profile may hold.  Names carry no unit: the profile states the
// unit of each value, and the loader checks it has the dimension listed here.
#include "models/profile_schema.hpp"

#include <algorithm>

#include "models/smartnic.hpp"

namespace luwu::models {

namespace {

using units::Dim;
constexpr bool kRequired = true;
constexpr bool kOptional = false;
constexpr bool kInteger = true;
constexpr bool kReal = false;

std::vector<FieldSpec> nic_fields() {
  return {
      {"line_rate", Dim::BytesPerSecond, FieldRange::Positive, kRequired, kReal, "line rate per port, per direction"},
      {"mtu", Dim::Bytes, FieldRange::Positive, kRequired, kReal, "transport payload per packet (RDMA path MTU)"},
      {"header_overhead", Dim::Bytes, FieldRange::NonNegative, kRequired, kReal,
       "per-packet bytes on the wire besides the payload (headers, CRCs, preamble, inter-frame gap)"},
      {"latency", Dim::Seconds, FieldRange::NonNegative, kRequired, kReal, "small-message one-way latency"},
      {"ports", Dim::Count, FieldRange::Positive, kOptional, kInteger, "network ports on the card"},
  };
}

std::vector<FieldSpec> fabric_fields() {
  return {
      {"per_direction_bandwidth", Dim::BytesPerSecond, FieldRange::Positive, kRequired, kReal,
       "bandwidth per GPU into the fabric, per direction"},
      {"latency", Dim::Seconds, FieldRange::NonNegative, kRequired, kReal, "one-way latency of a small transfer"},
      {"gpus", Dim::Count, FieldRange::Positive, kOptional, kInteger, "GPUs the fabric connects"},
      {"links", Dim::Count, FieldRange::Positive, kOptional, kInteger, "NVLink links per GPU"},
      {"nccl_ring_bus_bandwidth", Dim::BytesPerSecond, FieldRange::Positive, kOptional, kReal,
       "NCCL ring's saturated bus bandwidth on the fabric (nccl-tests busbw)"},
      {"nccl_ring_step_overhead", Dim::Seconds, FieldRange::NonNegative, kOptional, kReal,
       "NCCL ring's fixed cost per ring step beyond the wire (an all-reduce's latency over its 2(N-1) steps), large buffers"},
      {"nccl_ring_small_step_overhead", Dim::Seconds, FieldRange::NonNegative, kOptional, kReal,
       "the same for buffers below nccl_ring_large_buffer (NCCL's low-latency protocols)"},
      {"nccl_ring_large_buffer", Dim::Bytes, FieldRange::NonNegative, kOptional, kReal,
       "the collective buffer size from which nccl_ring_step_overhead holds"},
  };
}

std::vector<KindSpec> build_kinds() {
  std::vector<KindSpec> kinds;
  kinds.push_back({"gpu", "a GPU accelerator",
      {
          {"peak_fp16_flops", Dim::FlopsPerSecond, FieldRange::Positive, kRequired, kReal, "dense fp16 tensor-core peak"},
          {"peak_bf16_flops", Dim::FlopsPerSecond, FieldRange::Positive, kOptional, kReal, "dense bf16 tensor-core peak (absent: unsupported)"},
          {"peak_fp32_flops", Dim::FlopsPerSecond, FieldRange::Positive, kRequired, kReal, "fp32 (non-tensor) peak"},
          {"hbm_capacity", Dim::Bytes, FieldRange::Positive, kRequired, kReal, "device memory capacity"},
          {"hbm_bandwidth", Dim::BytesPerSecond, FieldRange::Positive, kRequired, kReal, "device memory bandwidth"},
          {"gemm_efficiency_max", Dim::Fraction, FieldRange::UnitInterval, kRequired, kReal,
           "measured rate of large GEMMs over peak, at full waves (models/gpu.hpp)"},
          {"gemm_wave_quantization", Dim::Count, FieldRange::Flag, kOptional, kReal,
           "GEMMs lose the idle SMs of their last wave of kernel_tile tiles (absent: true); false where a "
           "measured shape sweep shows no such loss (Hopper's cuBLAS)"},
          {"hbm_efficiency", Dim::Fraction, FieldRange::UnitInterval, kOptional, kReal,
           "share of hbm_bandwidth a streaming kernel achieves (absent: 1)"},
          {"row_reduction_hbm_efficiency", Dim::Fraction, FieldRange::UnitInterval, kOptional, kReal,
           "share of hbm_bandwidth a row reduction achieves: layer norm, the softmax over attention scores "
           "(absent: hbm_efficiency)"},
          {"broadcast_hbm_efficiency", Dim::Fraction, FieldRange::UnitInterval, kOptional, kReal,
           "share of hbm_bandwidth an elementwise kernel with a broadcast operand achieves (PyTorch's "
           "non-vectorized TensorIterator kernel: an attention mask applied over every head; absent: hbm_efficiency)"},
          {"collective_interference", Dim::Fraction, FieldRange::HalfOpenFraction, kRequired, kReal,
           "share of compute throughput lost while a GPU-executed collective kernel runs"},
          {"dma_interference", Dim::Fraction, FieldRange::HalfOpenFraction, kRequired, kReal,
           "share of compute throughput lost while a NIC DMA-writes into GPU memory"},
          {"sm_count", Dim::Count, FieldRange::Positive, kOptional, kInteger,
           "streaming multiprocessors (absent: every kernel fills the GPU)"},
          {"kernel_tile", Dim::Count, FieldRange::Positive, kOptional, kInteger,
           "edge, in elements, of the output tile one thread block computes (absent: 128)"},
          {"collective_sm_share", Dim::Fraction, FieldRange::HalfOpenFraction, kOptional, kReal,
           "share of the SMs a collective kernel needs free to launch (absent: 0, it always launches)"},
          {"collective_bandwidth_drop_under_gemm", Dim::Fraction, FieldRange::HalfOpenFraction, kOptional, kReal,
           "share of a GPU-executed collective's bandwidth lost while a GEMM runs beside it (absent: 0)"},
          {"tdp", Dim::Watts, FieldRange::Positive, kOptional, kReal, "thermal design power"},
          {"nvlink_bandwidth_per_direction", Dim::BytesPerSecond, FieldRange::Positive, kOptional, kReal,
           "total NVLink bandwidth per direction"},
          {"pcie_generation", Dim::Count, FieldRange::Positive, kOptional, kInteger, "host interface PCIe generation"},
          {"pcie_lanes", Dim::Count, FieldRange::Positive, kOptional, kInteger, "host interface PCIe lanes"},
      }});
  kinds.push_back({"host", "a server: CPUs and DRAM (an optimizer node or a worker host)",
      {
          {"sockets", Dim::Count, FieldRange::Positive, kOptional, kInteger, "CPU sockets"},
          {"cores", Dim::Count, FieldRange::Positive, kRequired, kInteger, "CPU cores over all sockets"},
          {"core_clock", Dim::Hertz, FieldRange::Positive, kOptional, kReal, "base clock"},
          {"cpu_peak_fp32_flops", Dim::FlopsPerSecond, FieldRange::Positive, kRequired, kReal,
           "fp32 peak over all cores (vector FMA)"},
          {"dram_capacity", Dim::Bytes, FieldRange::Positive, kRequired, kReal, "DRAM capacity"},
          {"nccl_host_staged_bandwidth", Dim::BytesPerSecond, FieldRange::Positive, kOptional, kReal,
           "bus bandwidth NCCL reaches through a host-memory bounce buffer when GPUDirect RDMA is off"},
          {"eager_kernel_launch_time", Dim::Seconds, FieldRange::NonNegative, kOptional, kReal,
           "host time to launch one GPU kernel from eager PyTorch (Python, dispatcher, CUDA launch); absent: 0"},
          {"dram_theoretical_bandwidth", Dim::BytesPerSecond, FieldRange::Positive, kRequired, kReal,
           "DRAM wire bandwidth over all channels and sockets"},
          {"dram_stream_efficiency", Dim::Fraction, FieldRange::UnitInterval, kRequired, kReal,
           "achieved streaming share of the DRAM wire bandwidth"},
          {"dram_latency", Dim::Seconds, FieldRange::NonNegative, kOptional, kReal, "idle DRAM load latency"},
          {"upi_bandwidth", Dim::BytesPerSecond, FieldRange::Positive, kOptional, kReal,
           "inter-socket links (UPI), all links and both directions together; required with sockets >= 2"},
          {"numa_remote_fraction", Dim::Fraction, FieldRange::Share, kOptional, kReal,
           "share of a CPU optimizer's DRAM traffic that crosses the inter-socket links (memory not bound "
           "per socket); with sockets >= 2 (absent: 0.5, interleaved pages or first touch by one thread)"},
          {"optimizer_write_allocate", Dim::Fraction, FieldRange::Share, kOptional, kReal,
           "share of the CPU optimizer's stores to unread lines (the 16-bit parameter copy-out) that read "
           "the line first (absent: 1, ordinary stores as DeepSpeed's cpu_adam; 0: non-temporal stores)"},
          {"adam_thread_update_rate", Dim::Hertz, FieldRange::Positive, kOptional, kReal,
           "mixed-precision Adam updates one thread runs per second (unit param/s; LuWu's optimizer node "
           "sizes its threads with it, models/optimizer_node.hpp)"},
          {"io_thread_bandwidth", Dim::BytesPerSecond, FieldRange::Positive, kOptional, kReal,
           "bytes per second one thread drives through a data-moving step (SSD I/O, NIC DMA) of the optimizer node"},
      }});
  kinds.push_back({"memory", "a memory tier (DRAM or a CXL memory expander)",
      {
          {"capacity", Dim::Bytes, FieldRange::Positive, kRequired, kReal, "capacity"},
          {"theoretical_bandwidth", Dim::BytesPerSecond, FieldRange::Positive, kRequired, kReal, "wire bandwidth"},
          {"stream_efficiency", Dim::Fraction, FieldRange::UnitInterval, kRequired, kReal,
           "achieved streaming share of the wire bandwidth"},
          {"latency", Dim::Seconds, FieldRange::NonNegative, kOptional, kReal, "idle load latency"},
      }});
  kinds.push_back({"nic", "an RDMA NIC (RoCEv2 or InfiniBand)", nic_fields()});
  kinds.push_back({"nvlink", "an NVLink point-to-point fabric", fabric_fields()});
  kinds.push_back({"nvswitch", "an NVSwitch fabric connecting a node's GPUs all-to-all", fabric_fields()});
  kinds.push_back({"pcie", "a PCIe link",
      {
          {"generation", Dim::Count, FieldRange::Positive, kRequired, kInteger, "PCIe generation"},
          {"lanes", Dim::Count, FieldRange::Positive, kRequired, kInteger, "lanes"},
          {"transfer_rate_per_lane", Dim::Hertz, FieldRange::Positive, kRequired, kReal, "raw transfer rate per lane"},
          {"encoding_payload_bits", Dim::Count, FieldRange::Positive, kRequired, kInteger, "payload bits per line-code block"},
          {"encoding_symbol_bits", Dim::Count, FieldRange::Positive, kRequired, kInteger, "bits on the wire per line-code block"},
          {"max_payload", Dim::Bytes, FieldRange::Positive, kRequired, kReal, "maximum TLP payload size"},
          {"tlp_overhead", Dim::Bytes, FieldRange::NonNegative, kRequired, kReal,
           "per-TLP framing, sequence number, header and LCRC"},
          {"dllp_overhead_per_tlp", Dim::Bytes, FieldRange::NonNegative, kRequired, kReal,
           "ACK and flow-control DLLP bytes amortised per TLP"},
          {"latency", Dim::Seconds, FieldRange::NonNegative, kRequired, kReal, "one-way latency of a small transfer"},
      }});
  {
    auto fields = nic_fields();
    std::vector<FieldSpec> extra = {
        {"packet_rate", Dim::PacketsPerSecond, FieldRange::Positive, kRequired, kReal, "packets processed per second"},
        {"processing_bandwidth", Dim::BytesPerSecond, FieldRange::Positive, kRequired, kReal,
         "bytes per second the on-NIC data path processes"},
        {"dma_engines", Dim::Count, FieldRange::Positive, kRequired, kInteger, "DMA engines"},
        {"memory_capacity", Dim::Bytes, FieldRange::Positive, kRequired, kReal, "on-board memory"},
        {"gpudirect", Dim::Count, FieldRange::Flag, kRequired, kReal, "can DMA directly into GPU memory"},
        {"arm_cores", Dim::Count, FieldRange::Positive, kOptional, kInteger, "on-board general-purpose cores"},
        {kSmartNicKindField, Dim::Count, FieldRange::Choice, kOptional, kInteger,
         "fpga: on-path hardware pipelines, push and pull each at line rate; soc: traffic forwarded through "
         "the Arm cores (absent: fpga)",
         smartnic_kind_names()},
        {"arm_link_bandwidth", Dim::BytesPerSecond, FieldRange::Positive, kOptional, kReal,
         "soc: the Arm complex's link to the on-chip switch, per direction (required for soc)"},
        {"arm_memory_bandwidth", Dim::BytesPerSecond, FieldRange::Positive, kOptional, kReal,
         "soc: Arm DRAM wire bandwidth (required for soc)"},
        {"arm_memory_stream_efficiency", Dim::Fraction, FieldRange::UnitInterval, kOptional, kReal,
         "soc: achieved streaming share of the Arm DRAM bandwidth (required for soc)"},
    };
    fields.insert(fields.end(), extra.begin(), extra.end());
    kinds.push_back({"smartnic", "a SmartNIC / DPU", fields});
  }
  kinds.push_back({"ssd", "an NVMe SSD",
      {
          {"read_bandwidth", Dim::BytesPerSecond, FieldRange::Positive, kRequired, kReal, "sequential read"},
          {"write_bandwidth", Dim::BytesPerSecond, FieldRange::Positive, kRequired, kReal, "sequential write"},
          {"capacity", Dim::Bytes, FieldRange::Positive, kRequired, kReal, "capacity"},
          {"latency", Dim::Seconds, FieldRange::NonNegative, kRequired, kReal, "read access latency"},
          {"read_write_bandwidth", Dim::BytesPerSecond, FieldRange::Positive, kOptional, kReal,
           "bytes read plus written per second while reads and writes run at once (an in-place "
           "read -> write-back stream); default max(read_bandwidth, write_bandwidth)"},
          {"pcie_generation", Dim::Count, FieldRange::Positive, kOptional, kInteger,
           "PCIe generation of the device's slot (with pcie_lanes: the link caps each direction)"},
          {"pcie_lanes", Dim::Count, FieldRange::Positive, kOptional, kInteger, "PCIe lanes of the device's slot"},
          {"host_path_bandwidth", Dim::BytesPerSecond, FieldRange::Positive, kOptional, kReal,
           "per direction: the host's path to the device where it is narrower than the slot (a shared "
           "uplink, fewer lanes wired, a chipset link), as a measurement on that host shows; caps each "
           "direction and both together at twice it, as the slot does"},
      }});
  // A network switch.  One that aggregates (a programmable switch, SwitchML-style) has every
  // field of the aggregation group (aggregation_slots ... sram_capacity: all or none, checked by
  // switch_from_profile); a conventional switch (e.g. the Mellanox SN2700) has none of them.
  kinds.push_back({"switch", "a network switch; a programmable one with in-network aggregation has the aggregation fields",
      {
          {"ports", Dim::Count, FieldRange::Positive, kRequired, kInteger, "ports at port_rate"},
          {"port_rate", Dim::BytesPerSecond, FieldRange::Positive, kRequired, kReal, "per port, per direction"},
          {"pipeline_latency", Dim::Seconds, FieldRange::NonNegative, kRequired, kReal, "port-to-port latency"},
          {"aggregation_slots", Dim::Count, FieldRange::Positive, kOptional, kInteger,
           "aggregator pool size (a switch that aggregates; with the other aggregation fields)"},
          {"elements_per_packet", Dim::Count, FieldRange::Positive, kOptional, kInteger,
           "elements aggregated per packet (with aggregation_slots)"},
          {"element_size", Dim::Bytes, FieldRange::Positive, kOptional, kReal,
           "bytes per aggregated element (with aggregation_slots)"},
          {"aggregation_packet_rate", Dim::PacketsPerSecond, FieldRange::Positive, kOptional, kReal,
           "aggregation packets processed per second, switch-wide (with aggregation_slots)"},
          {"sram_capacity", Dim::Bytes, FieldRange::Positive, kOptional, kReal,
           "on-chip SRAM for the aggregator pool (with aggregation_slots)"},
          {"multicast", Dim::Count, FieldRange::Flag, kOptional, kReal,
           "replicates packets to many ports in the data plane (absent: false)"},
          {"switching_capacity", Dim::BytesPerSecond, FieldRange::Positive, kOptional, kReal, "aggregate switching capacity"},
      }});
  std::sort(kinds.begin(), kinds.end(), [](const KindSpec& a, const KindSpec& b) { return a.kind < b.kind; });
  return kinds;
}

}  // namespace

const std::vector<KindSpec>& profile_kinds() {
  static const std::vector<KindSpec> kinds = build_kinds();
  return kinds;
}

const KindSpec* find_kind(const std::string& kind) {
  for (const auto& k : profile_kinds())
    if (k.kind == kind) return &k;
  return nullptr;
}

const FieldSpec* find_field(const KindSpec& kind, const std::string& field) {
  for (const auto& f : kind.fields)
    if (f.name == field) return &f;
  return nullptr;
}

bool profile_unit(const std::string& unit, units::Dim& dim, double& to_base) {
  // Units profiles use that common/units.hpp lacks.
  static const std::map<std::string, units::Unit> extra = {
      {"Bpkt/s", {units::Dim::PacketsPerSecond, 1e9}},
      // Rates of items per second (parameters updated) have the dimension of Hz.
      {"param/s", {units::Dim::Hertz, 1}},
      {"Mparam/s", {units::Dim::Hertz, 1e6}},
      {"Gparam/s", {units::Dim::Hertz, 1e9}},
  };
  if (auto u = units::find_unit(unit)) {
    dim = u->dim, to_base = u->to_base;
    return true;
  }
  auto it = extra.find(unit);
  if (it == extra.end()) return false;
  dim = it->second.dim, to_base = it->second.to_base;
  return true;
}

std::string dim_name(units::Dim dim) {
  switch (dim) {
    case Dim::Bytes: return "B";
    case Dim::BytesPerSecond: return "B/s";
    case Dim::Seconds: return "s";
    case Dim::FlopsPerSecond: return "FLOP/s";
    case Dim::Flops: return "FLOP";
    case Dim::Count: return "count";
    case Dim::Fraction: return "fraction";
    case Dim::Watts: return "W";
    case Dim::Hertz: return "Hz";
    case Dim::PacketsPerSecond: return "pkt/s";
  }
  return "?";
}

}  // namespace luwu::models
