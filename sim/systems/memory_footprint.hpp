#pragma once
// Where a training system keeps model state and activations, in bytes per GPU, per worker's host
// and on network-side nodes, for one trace and N workers; whether that fits the GPU.  Each system
// fills one in its home (its rules are a reading of docs systems.md); the accounting shared by all
// of them is here.
#include <cstdint>
#include <string>

#include "common/json_input.hpp"
#include "workloads/trace.hpp"

namespace luwu::sim {

// Every system: CUDA context, cuBLAS/NCCL workspaces and allocator slack per GPU.  Project
// assumption (a CUDA context alone is a few hundred MB on an A100), not a measurement.
inline constexpr double kRuntimeReservedBytes = 1e9;

struct MemoryFootprint {
  std::uint64_t gpu_params_bytes = 0;      // persistent parameters (a replica or a shard)
  std::uint64_t gpu_grads_bytes = 0;       // persistent gradients (a replica or a shard)
  std::uint64_t gpu_optimizer_bytes = 0;   // fp32 master + Adam state on the GPU
  std::uint64_t gpu_activation_bytes = 0;  // peak activations kept for backward (trace)
  std::uint64_t gpu_buffer_bytes = 0;      // working set of gathered layers, communication buckets
  std::uint64_t gpu_runtime_bytes = 0;     // kRuntimeReservedBytes
  std::uint64_t gpu_total_bytes() const {
    return gpu_params_bytes + gpu_grads_bytes + gpu_optimizer_bytes + gpu_activation_bytes + gpu_buffer_bytes +
           gpu_runtime_bytes;
  }
  // A worker's share of its server's DRAM: offloaded checkpoints, pinned buffers, model state kept
  // in DRAM (LuWu's colocated parameter server: its state, DRAM and SSDs together, as its split
  // depends on the server's hardware).
  std::uint64_t host_bytes_per_worker = 0;
  std::uint64_t worker_ssd_bytes = 0;       // a worker's share of its server's SSDs (ZeRO-Infinity's NVMe offload)
  std::uint64_t optimizer_node_bytes = 0;   // an in-network optimizer node (DRAM + SSD)
  bool fits = false;                        // gpu_total_bytes() <= the GPU's memory
  std::string reason;                       // one sentence: what fits or what is too large
  // What the system gave up to fit this GPU (LuWu streaming fewer layers ahead), "" if nothing;
  // also in `reason`.  `run` reports it beside the times it explains.
  std::string fitted_by;
};

// Peak activation bytes on the GPU and in host memory over the trace's ops.  Without offloading
// the host holds none and the GPU peak is Trace::peak_activation_bytes().
struct ActivationPeaks {
  std::uint64_t gpu_bytes = 0;
  std::uint64_t host_bytes = 0;
};
ActivationPeaks activation_peaks(const workloads::Trace& trace, bool offload_checkpoints);

// Per-worker model state: ceil(P/N) parameters per shard, as DeepSpeed pads its flat partitions.
std::uint64_t shard_params(std::uint64_t params, int workers);

// Bytes of params + grads of the (1 + prefetch_layers) largest layers at the trace's dtype, using
// LayerInfo::params_used (a gathered layer holds every parameter its compute reads).
std::uint64_t layer_working_set_bytes(const workloads::Trace& trace, int prefetch_layers);

// A footprint with its activations (offloaded or not) and the runtime reserve filled in; the
// system adds its model state and buffers, then calls judge_footprint.  std::invalid_argument for
// workers < 1 or a non-positive GPU memory.
MemoryFootprint base_footprint(const workloads::Trace& trace, int workers, double gpu_memory_bytes,
                               bool offload_checkpoints);
// Sets fits and the reason ("fits: <system> needs ... per GPU (largest part: ...) of ..."), with
// `note` appended when it does not matter whether it fits.
void judge_footprint(MemoryFootprint& footprint, const std::string& system, double gpu_memory_bytes,
                     const std::string& note = "");

// The footprint of a system whose GPUs each hold a full replica of parameters, gradients and
// optimizer state (DDP, SwitchML), gradients living in their buckets (PyTorch's
// gradient_as_bucket_view=True) and one bucket staged for communication.
MemoryFootprint replica_footprint(const workloads::Trace& trace, int workers, double gpu_memory_bytes,
                                  double bucket_bytes, const std::string& system);

luwu::Json footprint_to_json(const MemoryFootprint& footprint);

}  // namespace luwu::sim
