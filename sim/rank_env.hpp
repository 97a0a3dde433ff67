#pragma once
// What a data-parallel rank's schedule works with: its GPU, the trace it replays, the collectives
// it can issue, and the system's settings.
#include <string>

#include "models/optimizer_cost.hpp"
#include "sim/data_parallel_collectives.hpp"
#include "sim/gpu_device.hpp"
#include "sim/op_timing.hpp"
#include "sim/system_settings.hpp"
#include "sim/timeline.hpp"
#include "workloads/trace.hpp"

namespace luwu::sim {

struct RankEnv {
  const workloads::Trace& trace;
  GpuDevice& gpu;
  DataParallelCollectives& collectives;
  Timeline& timeline;
  const SystemSettings& settings;
  int world;

  int rank() const { return gpu.rank(); }
  double op_time_s(const workloads::TraceOp& op) const { return sim::op_time_s(trace, op, gpu.spec()); }
  // Mixed-precision Adam over `params` parameters whose state is in this GPU's HBM.
  double gpu_optimizer_time_s(double params) const {
    const auto& g = gpu.spec();
    return models::optimizer_update_time_s(params, models::adam_mixed_precision_cost(), g.hbm_Bps, g.hbm_Bps,
                                           g.peak_fp32_flops);
  }
};

inline std::string op_label(const workloads::Trace& trace, const workloads::TraceOp& op) {
  return workloads::to_string(op.kind) + " " + trace.layers.at(static_cast<std::size_t>(op.layer)).name +
         (trace.training.grad_accum > 1 ? " mb" + std::to_string(op.micro_step) : "");
}

// The schedules, one per system (sim/systems/*.cpp); each runs as the actor of one rank.
void run_ddp_rank(RankEnv& env);
void run_zero3_rank(RankEnv& env);

}  // namespace luwu::sim
