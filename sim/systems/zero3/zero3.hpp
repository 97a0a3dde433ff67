#pragma once
// ZeRO-3 (DeepSpeed stage 3 / FSDP).
#include "sim/systems/gpu_collective.hpp"
#include "sim/systems/param_fetch_plan.hpp"
#include "sim/systems/system.hpp"

namespace luwu::sim {

struct Zero3Settings {
  ParamFetchSettings fetch;
  CollectiveSettings collectives;
  CollectiveStreamSettings streams;
};

SystemPtr parse_zero3(const SystemEntry& entry);

}  // namespace luwu::sim
