#pragma once
// Published model configurations, by lowercase slug ("gpt3-175b", "llama2-70b", ...).
#include <string>
#include <vector>

#include "workloads/model_config.hpp"

namespace luwu::workloads {

// nullptr when `name` is not in the catalog.
const ModelConfig* find_catalog_model(const std::string& name);

// Every catalog name, sorted.
std::vector<std::string> catalog_model_names();

// A catalog name, or the path of a model JSON file (see model_from_json).  Anything else is an
// InputError that suggests the nearest catalog name.
ModelConfig resolve_model(const std::string& name_or_file);

}  // namespace luwu::workloads
