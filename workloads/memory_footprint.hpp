#pragma once
// Where each training system keeps model state and activations, in bytes per GPU, per worker's
// host and on LuWu's optimizer node, for one trace (model + training config) and N workers.
// A reading of docs systems.md; per parameter, mixed-precision Adam keeps a 16-bit param and grad
// and 12 B of fp32 master param, m and v (fp32 training: 4 + 4 + 8 B, no separate master copy).
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/trace.hpp"

namespace luwu::workloads {

enum class SystemKind { Ddp, Zero3, ZeroOffload, ZeroInfinity, SwitchMl, Luwu };
// "ddp", "zero3", "zero-offload", "zero-infinity", "switchml", "luwu"; std::invalid_argument otherwise.
SystemKind parse_system(const std::string& text);
std::string to_string(SystemKind system);
std::vector<SystemKind> all_systems();

struct MemoryOptions {
  // ZeRO-3 / ZeRO-Infinity / LuWu: layers whose full params (and grads) are on the GPU besides the
  // one computing: the prefetched next layer.  Default 1 (one layer ahead, DeepSpeed's prefetch
  // and LuWu's per-layer multicast both overlap the next layer's transfer with this one's compute).
  int prefetch_layers = 1;
  // DDP / SwitchML: gradient bucket staged for communication.  25 MB = PyTorch DDP's bucket_cap_mb
  // default; gradients are assumed to live in their buckets (gradient_as_bucket_view=True).
  double ddp_bucket_bytes = 25e6;
  // ZeRO-Offload: GPU reduce bucket.  DeepSpeed's reduce_bucket_size default is 5e8 elements,
  // 1e9 bytes at 16 bits.
  double zero_reduce_bucket_bytes = 1e9;
  // Every system: CUDA context, cuBLAS/NCCL workspaces and allocator slack per GPU.  Project
  // assumption (a CUDA context alone is a few hundred MB on an A100), not a measurement.
  double runtime_reserved_bytes = 1e9;
  // Every system, with recompute only: block checkpoints go to host memory after the block's
  // forward and come back for its recompute (DeepSpeed activation_checkpointing.cpu_checkpointing;
  // ZeRO-Infinity offloads activation checkpoints this way).  Off by default.
  bool offload_activation_checkpoints = false;
};

// Peak activation bytes on the GPU and in host memory over the trace's ops.  Without offloading
// the host holds none and the GPU peak is Trace::peak_activation_bytes().
struct ActivationPeaks {
  std::uint64_t gpu_bytes = 0;
  std::uint64_t host_bytes = 0;
};
ActivationPeaks activation_peaks(const Trace& trace, bool offload_checkpoints);

struct MemoryFootprint {
  std::uint64_t gpu_params_bytes = 0;      // persistent parameters (a replica or a shard)
  std::uint64_t gpu_grads_bytes = 0;       // persistent gradients (a replica or a shard)
  std::uint64_t gpu_optimizer_bytes = 0;   // fp32 master + Adam state on the GPU
  std::uint64_t gpu_activation_bytes = 0;  // peak activations kept for backward (trace)
  std::uint64_t gpu_buffer_bytes = 0;      // working set of gathered layers, communication buckets
  std::uint64_t gpu_runtime_bytes = 0;     // MemoryOptions::runtime_reserved_bytes
  std::uint64_t gpu_total_bytes() const {
    return gpu_params_bytes + gpu_grads_bytes + gpu_optimizer_bytes + gpu_activation_bytes + gpu_buffer_bytes +
           gpu_runtime_bytes;
  }
  std::uint64_t host_bytes_per_worker = 0;  // CPU DRAM (and NVMe for ZeRO-Infinity) of one worker, incl. offloaded checkpoints
  std::uint64_t optimizer_node_bytes = 0;   // LuWu's in-network optimizer node (DRAM + SSD)
  bool fits = false;                        // gpu_total_bytes() <= the GPU's memory
  std::string reason;                       // one sentence: what fits or what is too large
};

// Per-worker model state: ceil(P/N) parameters per shard, as DeepSpeed pads its flat partitions.
std::uint64_t shard_params(std::uint64_t params, int workers);

// Bytes of params + grads of the (1 + prefetch_layers) largest layers at the trace's dtype, using
// LayerInfo::params_used (a gathered layer holds every parameter its compute reads).
std::uint64_t layer_working_set_bytes(const Trace& trace, int prefetch_layers);

// Throws std::invalid_argument for workers < 1, a non-positive GPU memory or bad options.
MemoryFootprint memory_footprint(const Trace& trace, SystemKind system, int workers, double gpu_memory_bytes,
                                 const MemoryOptions& options = {});

luwu::Json footprint_to_json(const MemoryFootprint& footprint);

}  // namespace luwu::workloads
