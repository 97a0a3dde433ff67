#pragma once
// Where LuWu's optimizer node keeps the model: the parameters first in DRAM (they are sent for
// every layer of every micro-batch), then as much of the optimizer state (fp32 master, m and v; m
// and v in fp32 training) as the rest of the usable DRAM holds; what does not fit lives on the
// node's SSDs (out-of-core).
#include <algorithm>
#include <string>

#include "models/host.hpp"
#include "models/optimizer_cost.hpp"
#include "sim/systems/luwu/luwu.hpp"
#include "sim/systems/model_state.hpp"
#include "workloads/trace.hpp"

namespace luwu::sim {

struct LuwuPlacement {
  double param_bytes = 0;       // parameters, in the training dtype
  double state_bytes = 0;       // optimizer state (model_state.hpp)
  double dram_usable_bytes = 0;
  double ssd_bytes = 0;         // SSD capacity of the node
  double param_ssd_share = 0;   // of the parameters, on SSD
  double state_ssd_share = 0;   // of the optimizer state, on SSD
  bool fits() const {
    return param_bytes * param_ssd_share + state_bytes * state_ssd_share <= ssd_bytes * (1 + 1e-12);
  }
};

inline LuwuPlacement luwu_placement(const workloads::Trace& trace, const models::HostSpec& node,
                                    const LuwuSettings& settings) {
  LuwuPlacement p;
  const double params = static_cast<double>(trace.total_params());
  const auto bytes = model_state_bytes(trace.training.dtype);
  p.param_bytes = params * static_cast<double>(bytes.param);
  p.state_bytes = params * static_cast<double>(bytes.optimizer);
  p.dram_usable_bytes = node.dram.capacity_bytes * settings.optimizer_node_dram_share;
  p.ssd_bytes = node.ssds ? node.ssds->capacity_bytes() : 0;
  double dram_left = p.dram_usable_bytes;
  double params_in_dram = std::min(p.param_bytes, dram_left);
  dram_left -= params_in_dram;
  p.param_ssd_share = 1 - params_in_dram / p.param_bytes;
  double state_in_dram = std::min(p.state_bytes, dram_left);
  p.state_ssd_share = 1 - state_in_dram / p.state_bytes;
  return p;
}

}  // namespace luwu::sim
