#include "sim/schedule.hpp"

#include <stdexcept>

#include "sim/systems/systems.hpp"

namespace luwu::sim {

std::vector<bool> ops_needing_params(const workloads::Trace& trace) {
  std::vector<bool> needs(trace.ops.size());
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    const auto& op = trace.ops[i];
    bool reuses = op.kind == workloads::OpKind::Backward && i > 0 &&
                  trace.ops[i - 1].kind == workloads::OpKind::Recompute && trace.ops[i - 1].layer == op.layer;
    needs[i] = op.param_bytes > 0 && !reuses;
  }
  return needs;
}

std::unique_ptr<Schedule> make_schedule(ClusterEnv& env) {
  using workloads::SystemKind;
  switch (env.settings.kind) {
    case SystemKind::Ddp: return make_ddp_schedule(env);
    case SystemKind::Zero3: return make_zero3_schedule(env);
    case SystemKind::ZeroOffload: return make_zero_offload_schedule(env);
    case SystemKind::ZeroInfinity: return make_zero_infinity_schedule(env);
    case SystemKind::SwitchMl: return make_switchml_schedule(env);
    case SystemKind::Luwu: return make_luwu_schedule(env);
    default: throw std::invalid_argument("luwusim cannot simulate " + workloads::to_string(env.settings.kind) + " yet");
  }
}

}  // namespace luwu::sim
