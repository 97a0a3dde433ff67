// Per-parameter cost of optimizer steps; the derivations are in optimizer_cost.hpp.
#include "models/optimizer_cost.hpp"

#include <algorithm>
#include <stdexcept>

namespace luwu::models {

namespace {
// FLOPs per element, counted operation by operation (see the header).
constexpr double kGradUnscaleFlops = 1;
constexpr double kAdamFirstMomentFlops = 3;
constexpr double kAdamSecondMomentFlops = 4;
constexpr double kAdamBiasCorrectionFlops = 2;
constexpr double kAdamParamUpdateFlops = 5;
constexpr double kWeightDecayFlops = 2;
constexpr double kMomentumFlops = 2;
constexpr double kSgdParamUpdateFlops = 2;
// Gradient bytes read, written, and written to unread lines, per parameter (optimizer_cost.hpp).
struct GradientTraffic {
  double read = 0, written = 0, written_unread = 0;
};
GradientTraffic gradient_traffic(const OptimizerPrecision& pr) {
  switch (pr.grad_conversion) {
    case GradientConversion::in_kernel: return {pr.grad_bytes, 0, 0};
    case GradientConversion::on_gpu: return {pr.state_bytes, 0, 0};
    case GradientConversion::on_cpu: return {pr.grad_bytes + pr.state_bytes, pr.state_bytes, pr.state_bytes};
  }
  return {};
}

// The traffic of `states` state arrays updated in place, the gradient and the low-precision copy-out.
OptimizerCost streaming_cost(const OptimizerPrecision& pr, double states) {
  const GradientTraffic g = gradient_traffic(pr);
  OptimizerCost c;
  c.bytes_read_per_param = g.read + states * pr.state_bytes;
  c.bytes_written_per_param = g.written + states * pr.state_bytes + pr.low_precision_param_bytes;
  c.bytes_written_unread_per_param = g.written_unread + pr.low_precision_param_bytes;
  c.state_bytes_per_param = states * pr.state_bytes;
  return c;
}
}  // namespace

OptimizerCost adam_mixed_precision_cost(const OptimizerPrecision& pr, bool decoupled_weight_decay) {
  OptimizerCost c = streaming_cost(pr, 3);  // master param, m, v
  c.flops_per_param = kGradUnscaleFlops + kAdamFirstMomentFlops + kAdamSecondMomentFlops + kAdamBiasCorrectionFlops +
                      kAdamParamUpdateFlops + (decoupled_weight_decay ? kWeightDecayFlops : 0);
  return c;
}

OptimizerCost sgd_momentum_cost(const OptimizerPrecision& pr, bool weight_decay) {
  OptimizerCost c = streaming_cost(pr, 2);  // master param, momentum buffer
  c.flops_per_param = kGradUnscaleFlops + kMomentumFlops + kSgdParamUpdateFlops + (weight_decay ? kWeightDecayFlops : 0);
  return c;
}

double optimizer_update_time_s(double params, const OptimizerCost& cost, double read_Bps, double write_Bps,
                               double flops_per_s) {
  if (!(read_Bps > 0 && write_Bps > 0 && flops_per_s > 0))
    throw std::invalid_argument("optimizer_update_time_s: bandwidths and FLOP/s must be positive");
  double memory_s = params * (cost.bytes_read_per_param / read_Bps + cost.bytes_written_per_param / write_Bps);
  double compute_s = params * cost.flops_per_param / flops_per_s;
  return std::max(memory_s, compute_s);
}

}  // namespace luwu::models
