#pragma once
// Where LuWu's optimizer node keeps the model (LuwuSettings::node_storage): out of core, all of it
// on the node's SSDs, as the paper's node does; or DRAM first, the parameters in DRAM (they are
// sent for every layer of every micro-batch), then as much of the optimizer state (fp32 master, m
// and v; m and v in fp32 training) as the rest of the usable DRAM holds, the rest on SSD.  With the optimizer colocated on the workers (the paper's ablation),
// each worker server keeps `share` of the model the same way in its own DRAM and NVMe, in what the
// activation checkpoints offloaded to that DRAM (`reserved_dram_bytes`) leave.
#include <algorithm>
#include <string>

#include "models/host.hpp"
#include "models/optimizer_cost.hpp"
#include "sim/engine/hardware.hpp"
#include "sim/systems/memory_footprint.hpp"
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

// `capacity_share`: of the node's DRAM and SSDs, what this model may take (Hardware::optimizer_node_share).
inline LuwuPlacement luwu_placement(const workloads::Trace& trace, const models::HostSpec& node,
                                    const LuwuSettings& settings, double share = 1, double reserved_dram_bytes = 0,
                                    double capacity_share = 1) {
  LuwuPlacement p;
  const double params = static_cast<double>(trace.total_params()) * share;
  const auto bytes = model_state_bytes(trace.training.dtype);
  p.param_bytes = params * static_cast<double>(bytes.param);
  p.state_bytes = params * static_cast<double>(bytes.optimizer);
  p.dram_usable_bytes = std::max(0.0, node.dram.capacity_bytes * settings.optimizer_node_dram_share - reserved_dram_bytes);
  p.ssd_bytes = node.ssds ? node.ssds->capacity_bytes() : 0;
  if (capacity_share != 1) {
    p.dram_usable_bytes *= capacity_share;
    p.ssd_bytes *= capacity_share;
  }
  // Out of core: everything streams from SSD when the node has SSDs.
  if (settings.node_storage == LuwuSettings::NodeStorage::OutOfCore && p.ssd_bytes > 0) {
    p.param_ssd_share = p.state_ssd_share = 1;
    return p;
  }
  double dram_left = p.dram_usable_bytes;
  double params_in_dram = std::min(p.param_bytes, dram_left);
  dram_left -= params_in_dram;
  p.param_ssd_share = 1 - params_in_dram / p.param_bytes;
  double state_in_dram = std::min(p.state_bytes, dram_left);
  p.state_ssd_share = 1 - state_in_dram / p.state_bytes;
  return p;
}

// Where one optimizer site keeps its share on this cluster: the optimizer node the whole model (in
// its share of the node when the node serves several data-parallel groups);
// colocated, each worker server 1/K of it, in the DRAM its GPUs' offloaded checkpoints leave.
inline bool luwu_colocated(const LuwuSettings& settings) {
  return settings.optimizer_placement == LuwuSettings::OptimizerPlacement::Colocated;
}
inline const models::HostSpec& luwu_site_host(const Hardware& hw, const LuwuSettings& settings) {
  return luwu_colocated(settings) ? hw.worker_host : *hw.optimizer_node;
}
inline LuwuPlacement luwu_site_placement(const workloads::Trace& trace, const Hardware& hw, const LuwuSettings& settings) {
  if (!luwu_colocated(settings)) return luwu_placement(trace, *hw.optimizer_node, settings, 1, 0, hw.optimizer_node_share);
  const double share = static_cast<double>(hw.gpus_per_server) / hw.workers;
  const double checkpoints =
      static_cast<double>(activation_peaks(trace, settings.checkpoints.enabled).host_bytes) * hw.gpus_per_server;
  return luwu_placement(trace, hw.worker_host, settings, share, checkpoints);
}

}  // namespace luwu::sim
