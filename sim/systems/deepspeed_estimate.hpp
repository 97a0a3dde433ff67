#pragma once
// DeepSpeed's own estimators of ZeRO's model-state memory, reimplemented from DeepSpeed 0.9.3
// (deepspeed/runtime/zero/stage3.py estimate_zero3_model_states_mem_needs and
// stage_1_and_2.py estimate_zero2_model_states_mem_needs): what DeepSpeed tells its users a
// configuration needs.  `luwusim memory` shows them beside its own accounting (docs/baselines.md,
// "Memory: luwusim's accounting and DeepSpeed's estimators").
//   ZeRO-3, no offload:          GPU 4 L + 18 P / G,  host 4 L g f
//   ZeRO-3, optimizer offload:   GPU 4 L + 2 P / G,   host 16 P / n f
//   ZeRO-3, params + optimizer:  GPU 4 L,             host 18 P / n f
//   ZeRO-2, optimizer offload:   GPU 2 P,             host P max(4 G, 16) f
//   ZeRO-2, no offload:          GPU 4 P + 16 P / G,  host 4 P g f
// P parameters, L those of the largest module (its own, not its children's), G GPUs, g GPUs per
// node, n nodes, f additional_buffer_factor (1.5); DeepSpeed's zero_init default (true), and its
// int() truncations kept.
#include <algorithm>
#include <cmath>
#include <string>

#include "workloads/trace.hpp"

namespace luwu::sim {

struct DeepSpeedEstimate {
  double gpu_bytes = 0;           // per GPU
  double cpu_bytes_per_node = 0;  // per server; 0 where the estimator does not apply (NVMe offload)
  std::string estimator;          // the function and its options, for the reader
};

inline constexpr double kDeepSpeedBufferFactor = 1.5;  // additional_buffer_factor's default

inline DeepSpeedEstimate estimate_zero3_model_states(double total_params, double largest_layer_params, int gpus_per_node,
                                                     int nodes, bool cpu_offload, bool cpu_offload_params,
                                                     double factor = kDeepSpeedBufferFactor) {
  const double gpus = static_cast<double>(gpus_per_node) * nodes, per_node = 1.0 / nodes;
  const double largest = 4 * largest_layer_params;
  DeepSpeedEstimate e;
  if (cpu_offload && cpu_offload_params) {
    e.gpu_bytes = largest;
    e.cpu_bytes_per_node = total_params * 18 * per_node * factor;
    e.estimator = "estimate_zero3_model_states_mem_needs(offload_optimizer=cpu, offload_param=cpu)";
  } else if (cpu_offload) {
    e.gpu_bytes = largest + std::floor(2 * total_params / gpus);
    e.cpu_bytes_per_node = total_params * 16 * per_node * factor;
    e.estimator = "estimate_zero3_model_states_mem_needs(offload_optimizer=cpu, offload_param=none)";
  } else {
    e.gpu_bytes = largest + std::floor(18 * total_params / gpus);
    e.cpu_bytes_per_node = largest_layer_params * 4 * gpus_per_node * factor;
    e.estimator = "estimate_zero3_model_states_mem_needs(offload_optimizer=none, offload_param=none)";
  }
  e.gpu_bytes = std::floor(e.gpu_bytes);
  e.cpu_bytes_per_node = std::floor(e.cpu_bytes_per_node);
  return e;
}

inline DeepSpeedEstimate estimate_zero2_model_states(double total_params, int gpus_per_node, int nodes, bool cpu_offload,
                                                     double factor = kDeepSpeedBufferFactor) {
  const double gpus = static_cast<double>(gpus_per_node) * nodes;
  DeepSpeedEstimate e;
  if (cpu_offload) {
    e.gpu_bytes = 2 * total_params;
    e.cpu_bytes_per_node = std::floor(total_params * std::max(4 * gpus, 16.0) * factor);
    e.estimator = "estimate_zero2_model_states_mem_needs(offload_optimizer=cpu)";
  } else {
    e.gpu_bytes = 4 * total_params + std::floor(16 * total_params / gpus);
    e.cpu_bytes_per_node = std::floor(total_params * 4 * gpus_per_node * factor);
    e.estimator = "estimate_zero2_model_states_mem_needs(offload_optimizer=none)";
  }
  return e;
}

// DeepSpeed's largest_layer_params (model_to_params: the most parameters one module holds itself):
// the trace's largest sub-module, as its kernels name them (workloads/kernels.hpp).
inline double largest_submodule_params(const workloads::Trace& trace) {
  double largest = 0;
  for (const auto& list : trace.kernel_lists)
    for (const auto& k : list) largest = std::max(largest, static_cast<double>(k.params));
  return largest;
}

}  // namespace luwu::sim
