#pragma once
// Hardware prices, for throughput per dollar: a price list maps hardware profile names to a price
// in US dollars, each with its source.  A server's price (a host profile's) may include the parts
// inside it, by vertex kind ("gpu", "nic", "smartnic", "ssd": a DGX's), which are then not
// priced again.  JSON:
//   {"name": "luwu-paper", "description": "...", "currency": "USD",
//    "prices": {"a100-40gb-pcie": {"usd": 8000, "source": "..."},
//               "dgx-a100": {"usd": 154800, "source": "...", "includes": ["gpu", "nic", "ssd"]}}}
#include <map>
#include <string>
#include <vector>

#include "common/json_input.hpp"

namespace luwu::models {

struct Price {
  double usd = 0;
  std::string source;
  std::vector<std::string> includes;  // vertex kinds inside the priced server
};

struct PriceList {
  std::string name;
  std::string description;
  std::map<std::string, Price> prices;  // by profile name

  const Price* find(const std::string& profile) const {
    auto it = prices.find(profile);
    return it == prices.end() ? nullptr : &it->second;
  }
};

// InputError naming the file and JSON path of a bad field.
PriceList price_list_from_json(const JsonNode& node);
// A shipped list by name ("luwu-paper"), or a path to a .json file (containing '/' or ending in
// ".json"); an unknown name is an InputError that lists the shipped ones.
PriceList find_price_list(const std::string& name_or_path);
// $LUWUSIM_PRICES_DIR if set, else LUWUSIM_SOURCE_DIR "/models/prices".
std::string prices_dir();
// The list a scenario uses when it names none.
inline constexpr const char* kDefaultPriceList = "luwu-paper";

}  // namespace luwu::models
