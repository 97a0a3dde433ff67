#pragma once
// Deep Optimizer States (Maurya, Ye, Rafique, Cappello, Nicolae, arXiv 2410.21316): interleaved
// offloading of the optimizer's update between the CPU and the GPU.
#include <optional>
#include <string>
#include <vector>

#include "sim/systems/system.hpp"
#include "sim/systems/zero_offload/zero_offload.hpp"

namespace luwu::sim {

struct DeepOptimizerStatesSettings {
  // The iteration it builds on: ZeRO-Offload's (its bucket size, fp32 gradient copy, checkpoint
  // offload, collectives, state placement), without the delayed parameter update (the paper
  // compares with DeepSpeed's synchronous CPU update).
  ZeroOffloadSettings offload;
  // Parameters per subgroup: the unit the policy sends to the CPU or to the GPU.  The paper's
  // subgroups are DeepSpeed's zero_optimization.sub_group_size ones (default 1e9); 1e8 here is an
  // assumption (a named setting): with 1e9 a 13B model's shard on 8 GPUs is two subgroups, too few
  // to interleave.  At least 1e5 (each subgroup is simulated).
  double sub_group_size = 1e8;
  // The share of the subgroups updated on the GPU: nullopt = "auto", the performance model below;
  // or a fixed share in [0, 1] (0 is ZeRO-Offload's update, subgroup by subgroup).
  std::optional<double> gpu_share;
  // The share of the GPU memory free in the update phase (the GPU's memory less the parameter
  // replica, buffers and runtime reserve: activations are gone after backward) that the
  // subgroups' state may take on the GPU.  0.9: an assumption (a named setting), leaving the
  // allocator some slack.
  double gpu_memory_fraction = 0.9;
};

// The per-parameter rates the policy weighs and its choice, for a rank's shard of P parameters.
// Bytes per parameter: a = the 16-bit parameter a CPU-updated subgroup sends up, u = what a
// GPU-updated subgroup sends up (fp32 master, m, v and the gradient partition the backward left on
// the host), d = what it sends back (master, m, v; its 16-bit parameters are written in place on
// the GPU).  c = CPU seconds per parameter with all the server's ranks stepping at once (the CPU
// step's time of one parameter, state placed as state_placement says, times the GPUs per server),
// g = the GPU's Adam seconds per parameter, B = the GPU's share of its PCIe path (B/s per
// direction).  With a share f of the parameters on the GPU, CPU and GPU subgroups proceed at once,
// the GPU's double-buffered (one subgroup's state coming up while the previous one updates), so
// the update phase takes about
//   T(f) = P * max((1 - f) c,  f g,  (a (1 - f) + u f) / B,  d f / B)
// (CPU lane, GPU lane, host-to-GPU PCIe shared by both lanes, GPU-to-host PCIe).  The first term
// falls with f, the others rise, so T is smallest where (1 - f) c meets the first rising one:
//   f* = clamp(min(c / (c + g),  (c - a / B) / (c + (u - a) / B),  c / (c + d / B)), 0, 1).
// Subgroup i (of n) goes to the GPU when round((i + 1) f) > round(i f): round(n f) of them, spread
// evenly through the shard (the interleaving).  No subgroup goes to the GPU when two subgroups'
// state (u x sub_group_size each) do not fit the allowed free memory.
struct InterleavePlan {
  double a_bytes = 0, u_bytes = 0, d_bytes = 0;
  double cpu_s_per_param = 0;  // c
  double gpu_s_per_param = 0;  // g
  double pcie_Bps = 0;         // B
  double share = 0;            // f, chosen (or the setting's)
  int subgroups = 0;
  int gpu_subgroups = 0;
  std::vector<bool> on_gpu;  // by subgroup
  double predicted_s = 0;    // T(share) over the shard
  std::string note;          // why no subgroup is on the GPU, when none is and one could be
};

// T(f) for a shard of `params` (the formula above).
double interleave_time_s(const InterleavePlan& rates, double share, double params);
// The plan for a shard of `shard_params`: `rates` carries a, u, d, c, g and B; `gpu_free_bytes` is
// the allowed free GPU memory in the update phase (after gpu_memory_fraction).
InterleavePlan plan_interleaving(const DeepOptimizerStatesSettings& settings, InterleavePlan rates, double shard_params,
                                 double gpu_free_bytes);

SystemPtr parse_deep_optimizer_states(const SystemEntry& entry);

}  // namespace luwu::sim
