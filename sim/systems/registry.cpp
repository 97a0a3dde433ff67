#include "sim/systems/registry.hpp"

#include <stdexcept>

#include "common/choice.hpp"

#include "sim/systems/atp/atp.hpp"
#include "sim/systems/ddp/ddp.hpp"
#include "sim/systems/deep_optimizer_states/deep_optimizer_states.hpp"
#include "sim/systems/luwu/luwu.hpp"
#include "sim/systems/onebit_adam/onebit_adam.hpp"
#include "sim/systems/parameter_server/parameter_server.hpp"
#include "sim/systems/switchml/switchml.hpp"
#include "sim/systems/zero3/zero3.hpp"
#include "sim/systems/zero_hierarchical/zero_hierarchical.hpp"
#include "sim/systems/zero_infinity/zero_infinity.hpp"
#include "sim/systems/zero_offload/zero_offload.hpp"
#include "sim/systems/streaming_diloco/streaming_diloco.hpp"
#include "sim/systems/zeropp/zeropp.hpp"

namespace luwu::sim {

const std::vector<RegisteredSystem>& registered_systems() {
  static const std::vector<RegisteredSystem> systems = {
      {"ddp", parse_ddp},                      // PyTorch DDP: a replica per GPU, bucketed all-reduce
      {"onebit-adam", parse_onebit_adam},      // DDP with 1-bit compressed momentum after a warm-up (DeepSpeed's OnebitAdam)
      {"zero3", parse_zero3},                  // DeepSpeed ZeRO-3: everything partitioned, per-layer AG and RS
      {"zero++", parse_zeropp},                // ZeRO-3 with quantized gathers and gradients, a secondary partition
      {"zero-hierarchical", parse_zero_hierarchical},  // ZeRO-3 partitioned inside each server, replicated across
      {"zero-offload", parse_zero_offload},    // ZeRO-2 on the GPUs, the optimizer on the host CPU
      {"deep-optimizer-states", parse_deep_optimizer_states},  // ZeRO-Offload with the update interleaved over CPU and GPU subgroups
      {"zero-infinity", parse_zero_infinity},  // ZeRO-3 with parameters and optimizer state on NVMe or DRAM
      {"switchml", parse_switchml},            // in-switch aggregation for replicated data parallelism
      {"atp", parse_atp},                      // best-effort in-switch aggregation with parameter-server fallback
      {"parameter-server", parse_parameter_server},  // model-in-server: optimizer state and updates on CPU servers
      {"luwu", parse_luwu},                    // model-in-network data parallelism, an in-network optimizer node
      {"streaming-diloco", parse_streaming_diloco},  // groups training apart, fragments synchronized over a WAN
  };
  return systems;
}

std::vector<std::string> system_names() {
  std::vector<std::string> names;
  for (const auto& s : registered_systems()) names.push_back(s.name);
  return names;
}

SystemPtr system_from_json(const JsonNode& node) {
  if (!node.is_string() && !node.is_object())
    node.fail(std::string("expected a system name or an object {\"name\": ...}, found ") + node.raw().type_name());
  SystemEntry entry(node);
  const JsonNode name = node.is_object() ? node.at("name") : node;
  return registered_systems()[name.as_choice_index(system_names(), "system")].parse(entry);
}

SystemPtr system_named(const std::string& name, const Json& settings) {
  for (const auto& s : registered_systems())
    if (s.name == name) {
      Json entry = settings;
      entry["name"] = name;
      return s.parse(SystemEntry(JsonNode(entry, "--system " + name), /*lenient=*/true));
    }
  throw std::invalid_argument(unknown_choice_message(name, system_names(), "system"));
}

}  // namespace luwu::sim
