#include "sim/systems/schedule.hpp"

#include "sim/systems/model_state.hpp"

namespace luwu::sim {

double RankEnv::gpu_optimizer_time_s(double params) const {
  const auto& g = gpu.spec();
  return models::optimizer_update_time_s(params, adam_cost(cluster.trace.training.dtype), g.hbm_Bps, g.hbm_Bps,
                                         g.peak_fp32_flops);
}

}  // namespace luwu::sim
