#include "sim/capacity.hpp"

#include "common/units.hpp"
#include "models/optimizer_cost.hpp"
#include "sim/systems/luwu_placement.hpp"

namespace luwu::sim {

std::string host_capacity_problem(const workloads::Trace& trace, const topologies::Topology& topo,
                                  const Hardware& hw, const SystemSettings& system) {
  using workloads::SystemKind;
  const auto gpus = topo.gpus();
  const double world = static_cast<double>(gpus.size());
  double gpus_per_server = 0;
  for (auto g : gpus) gpus_per_server += topo[g].server == topo[gpus.front()].server ? 1 : 0;
  const double params = static_cast<double>(trace.total_params());
  const double state = models::adam_mixed_precision_cost().state_bytes_per_param;  // fp32 master, m, v
  const double low = workloads::bytes_per_element(trace.training.dtype);          // fp16 params, grads

  auto too_small = [](const std::string& what, double need, double have) {
    return "does not fit: " + what + " needs " + units::bytes(need) + " but has " + units::bytes(have);
  };
  switch (system.kind) {
    case SystemKind::ZeroOffload: {
      double need = gpus_per_server * params / world * (state + 2 * low);
      if (need > hw.worker_host.dram.capacity_bytes) return too_small("a worker server's DRAM", need, hw.worker_host.dram.capacity_bytes);
      return "";
    }
    case SystemKind::ZeroInfinity: {
      double need = gpus_per_server * params / world * (state + low);
      if (system.offload == "dram") {
        need += gpus_per_server * params / world * low;  // gradient shards
        if (need > hw.worker_host.dram.capacity_bytes)
          return too_small("a worker server's DRAM", need, hw.worker_host.dram.capacity_bytes);
        return "";
      }
      double have = hw.worker_host.ssds ? hw.worker_host.ssds->capacity_bytes() : 0;
      if (need > have) return too_small("a worker server's NVMe", need, have);
      return "";
    }
    case SystemKind::Luwu: {
      if (!topo.optimizer_node() || !hw.optimizer_node)
        return "does not run: luwu needs an in-network optimizer node (the luwu-star topology has one)";
      if (!hw.network_switch) return "does not run: luwu needs a programmable switch";
      auto p = luwu_placement(trace, *hw.optimizer_node, system);
      if (!p.fits())
        return too_small("the optimizer node (DRAM share + SSDs)", p.param_bytes + p.state_bytes,
                         p.dram_usable_bytes + p.ssd_bytes);
      return "";
    }
    case SystemKind::SwitchMl:
      if (!hw.network_switch) return "does not run: switchml needs a programmable switch";
      return "";
    default: return "";
  }
}

}  // namespace luwu::sim
