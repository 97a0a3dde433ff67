#pragma once
// What one parameter of the model costs wherever a system keeps it, by training precision, and the
// Adam step over it.  Written once, for every system's memory footprint, capacity check and
// optimizer step (they disagreed before: the simulation streamed 12 B of optimizer state per
// parameter whatever the dtype, while the memory accounting followed it).
//   16-bit training (fp16, bf16): a 2 B parameter and gradient; the optimizer keeps an fp32 master
//     parameter, m and v (12 B) and writes the 2 B parameter back (mixed precision, Micikevicius et
//     al. 2018, arXiv 1710.03740).
//   fp32 training: a 4 B parameter and gradient; the parameter is the master, so the optimizer
//     keeps m and v (8 B) beside it and writes no second copy.
#include <cstdint>

#include "models/optimizer_cost.hpp"
#include "workloads/training_config.hpp"

namespace luwu::sim {

struct ModelStateBytes {
  std::uint64_t param = 0;      // the parameter in training precision (what the GPUs compute with)
  std::uint64_t grad = 0;       // its gradient
  std::uint64_t optimizer = 0;  // optimizer state beyond `param`: master + m + v, or m + v in fp32
};

inline ModelStateBytes model_state_bytes(workloads::DType dtype) {
  const auto element = static_cast<std::uint64_t>(workloads::bytes_per_element(dtype));
  return {element, element, dtype == workloads::DType::Fp32 ? 8u : 12u};
}

// Adam over one parameter in this precision: the bytes it reads and writes, its FLOPs and the state
// it streams (models/optimizer_cost.hpp).  In fp32 the streamed state is parameter + m + v and
// nothing low-precision is written back.
inline models::OptimizerCost adam_cost(workloads::DType dtype) {
  models::OptimizerPrecision precision;
  if (dtype == workloads::DType::Fp32) precision = {/*grad*/ 4, /*state*/ 4, /*low precision param*/ 0};
  return models::adam_mixed_precision_cost(precision);
}

// DeepSpeed's CPU Adam (ZeRO-Offload, ZeRO-Infinity): the 16-bit gradient is widened to fp32 on
// the GPU before it is copied to host (models/optimizer_cost.hpp, GradientConversion::on_gpu), so
// the kernel reads a 4 B gradient.
inline models::OptimizerCost deepspeed_cpu_adam_cost(workloads::DType dtype) {
  models::OptimizerPrecision precision;
  precision.grad_conversion = models::GradientConversion::on_gpu;
  if (dtype == workloads::DType::Fp32) precision = {/*grad*/ 4, /*state*/ 4, /*low precision param*/ 0};
  return models::adam_mixed_precision_cost(precision);
}

// What DeepSpeed 0.9.3's offloaded optimizer step streams through DRAM per parameter besides CPU
// Adam's own bytes (the DRAM part only: what is read from or written to NVMe stays Adam's).  The
// 16-bit copy of each updated parameter is made in a pass of its own that reads the fp32 master
// again (stage 3: _partitioned_params_swap_out's insert_tensor, or the copy into
// fp16_partitioned_groups_flat; stages 1 and 2: bit16_partitions[...].copy_(fp32_partition), a
// blocking copy that converts on the CPU); its 2 B write is the low-precision write Adam's cost
// already counts, and in fp32 there is none to make.  And unscale_and_clip_grads multiplies the
// fp32 gradient in place (4 B read and written): at stage 3 always, even at bf16's loss scale of 1;
// at stages 1 and 2 only in fp16 (stage_1_and_2.py step).
enum class DeepSpeedStage { OneOrTwo, Three };
inline models::OptimizerCost deepspeed_offloaded_step_dram_cost(workloads::DType dtype, DeepSpeedStage stage) {
  constexpr double kFp32Bytes = 4;
  auto cost = deepspeed_cpu_adam_cost(dtype);
  if (stage == DeepSpeedStage::Three || dtype == workloads::DType::Fp16) {
    cost.bytes_read_per_param += kFp32Bytes;
    cost.bytes_written_per_param += kFp32Bytes;
  }
  if (dtype != workloads::DType::Fp32) cost.bytes_read_per_param += kFp32Bytes;
  return cost;
}

}  // namespace luwu::sim
