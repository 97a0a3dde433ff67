#include "models/prices.hpp"

#include <cstdlib>
#include <filesystem>

#include "common/input_error.hpp"

namespace luwu::models {
namespace {

// Parts a server's price can include: the kinds of the topology's devices inside a server.
const std::vector<std::string> kIncludable = {"gpu", "nic", "smartnic", "ssd"};

}  // namespace

std::string prices_dir() {
  if (const char* dir = std::getenv("LUWUSIM_PRICES_DIR"); dir && *dir) return dir;
  return std::string(LUWUSIM_SOURCE_DIR) + "/models/prices";
}

PriceList price_list_from_json(const JsonNode& node) {
  node.expect_object();
  node.only_keys({"name", "description", "currency", "prices"});
  PriceList list;
  list.name = node.at("name").as_string();
  list.description = node.get_string("description", "");
  if (node.has("currency") && node.at("currency").as_string() != "USD")
    node.at("currency").fail("luwusim's prices are in US dollars: expected \"USD\"");
  const JsonNode prices = node.at("prices");
  prices.expect_object();
  for (const auto& profile : prices.keys()) {
    const JsonNode entry = prices.at(profile);
    entry.expect_object();
    entry.only_keys({"usd", "source", "includes"});
    Price p;
    p.usd = entry.at("usd").as_positive();
    if (p.usd > 1e12) entry.at("usd").fail("expected at most 1e12 dollars");
    p.source = entry.at("source").as_string();
    if (p.source.empty()) entry.at("source").fail("every price needs a source");
    if (entry.has("includes")) {
      const JsonNode kinds = entry.at("includes");
      kinds.expect_array();
      for (std::size_t i = 0; i < kinds.size(); ++i)
        p.includes.push_back(kIncludable[kinds.at(i).as_choice_index(kIncludable, "part a server's price includes")]);
    }
    list.prices[profile] = std::move(p);
  }
  return list;
}

PriceList find_price_list(const std::string& name_or_path) {
  const bool is_path = name_or_path.find('/') != std::string::npos ||
                       (name_or_path.size() > 5 && name_or_path.substr(name_or_path.size() - 5) == ".json");
  const std::string path = is_path ? name_or_path : prices_dir() + "/" + name_or_path + ".json";
  if (!std::filesystem::exists(path)) {
    std::string known;
    for (const auto& n : json_file_stems(prices_dir())) known += (known.empty() ? "" : ", ") + n;
    throw InputError(name_or_path, "", "no price list " + (is_path ? "file" : "of that name in " + prices_dir()) +
                                           "; shipped: " + (known.empty() ? "none" : known));
  }
  const Json json = load_json_file(path);
  return price_list_from_json(JsonNode(json, path));
}

}  // namespace luwu::models
