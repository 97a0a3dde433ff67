#pragma once
// The systems luwusim simulates, by name.  A system is its home (a folder beside this file) plus
// one line in registry.cpp.
#include <string>
#include <vector>

#include "common/json_input.hpp"
#include "sim/systems/system.hpp"

namespace luwu::sim {

struct RegisteredSystem {
  std::string name;
  SystemPtr (*parse)(const SystemEntry& entry);
};

const std::vector<RegisteredSystem>& registered_systems();
std::vector<std::string> system_names();

// A scenario's system entry, "zero3" or {"name": "zero3", ...}; errors name the JSON path.
SystemPtr system_from_json(const JsonNode& entry);
// A system with its default settings, but for those of `settings` it has (the others are ignored:
// prefetch_layers means nothing to DDP); std::invalid_argument for an unknown name.
SystemPtr system_named(const std::string& name, const Json& settings = Json::object());

}  // namespace luwu::sim
