#include "sim/systems/system.hpp"

#include "common/units.hpp"

namespace luwu::sim {

std::string does_not_fit(const std::string& what, double need, double have) {
  return "does not fit: " + what + " needs " + units::bytes(need) + " but has " + units::bytes(have);
}

double params_per_server(const workloads::Trace& trace, const Hardware& hw) {
  return hw.gpus_per_server * static_cast<double>(trace.total_params()) / static_cast<double>(hw.workers);
}

}  // namespace luwu::sim
