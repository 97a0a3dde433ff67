#include "sim/systems/system.hpp"

#include "common/units.hpp"

namespace luwu::sim {

std::string does_not_fit(const std::string& what, double need, double have) {
  return "does not fit: " + what + " needs " + units::bytes(need) + " but has " + units::bytes(have);
}

int gpus_per_server(const topologies::Topology& topo) {
  const auto gpus = topo.gpus();
  int n = 0;
  for (auto g : gpus) n += topo[g].server == topo[gpus.front()].server ? 1 : 0;
  return n;
}

}  // namespace luwu::sim
