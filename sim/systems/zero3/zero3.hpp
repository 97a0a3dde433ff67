#pragma once
// ZeRO-3 (DeepSpeed stage 3 / FSDP).
#include "sim/systems/gpu_collective.hpp"
#include "sim/systems/param_fetch_plan.hpp"
#include "sim/systems/stage3_gradient_passes.hpp"
#include "sim/systems/system.hpp"

namespace luwu::sim {

struct Zero3Settings {
  ParamFetchSettings fetch;
  CollectiveSettings collectives;
  CollectiveStreamSettings streams;
  Stage3GradientSettings gradients;

  // The keys of every stage-3 system (ZeRO-3, ZeRO++, hierarchical partitioning) and their parse.
  static std::vector<std::string> keys() {
    return setting_keys({ParamFetchSettings::keys(), CollectiveSettings::keys(), CollectiveStreamSettings::keys(),
                         Stage3GradientSettings::keys()});
  }
  static Zero3Settings parse(const SystemEntry& entry) {
    return {ParamFetchSettings::parse(entry), CollectiveSettings::parse(entry), CollectiveStreamSettings::parse(entry),
            Stage3GradientSettings::parse(entry)};
  }
};

SystemPtr parse_zero3(const SystemEntry& entry);

}  // namespace luwu::sim
