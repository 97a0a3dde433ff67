#include "sim/systems/schedule.hpp"

#include "sim/systems/model_state.hpp"

#include <stdexcept>

namespace luwu::sim {

const std::vector<KernelRun>& ClusterEnv::kernel_runs(const workloads::TraceOp& op) {
  if (kernel_run_cache.empty()) {
    for (const auto& list : trace.kernel_lists) {
      std::vector<KernelRun> runs;
      for (const auto& k : list) runs.push_back(kernel_run(k, hw.gpu, trace.training.dtype));
      kernel_run_cache.push_back(std::move(runs));
    }
  }
  return kernel_run_cache.at(static_cast<std::size_t>(op.kernels));
}

double RankEnv::gpu_optimizer_time_s(double params) const {
  const auto& g = gpu.spec();
  return models::optimizer_update_time_s(params, adam_cost(cluster.trace.training.dtype), g.achieved_hbm_Bps(),
                                         g.achieved_hbm_Bps(), g.peak_fp32_flops);
}

void RankEnv::model_parallel_op(const workloads::TraceOp& op) {
  if (model_parallel == nullptr)
    throw std::logic_error(workloads::to_string(op.kind) + " in a trace simulated without tensor or pipeline parallelism");
  model_parallel->run(op, cluster_rank, gpu);
}

}  // namespace luwu::sim
