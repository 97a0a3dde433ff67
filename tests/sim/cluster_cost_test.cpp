// The cluster's price from a price list (sim/experiment/cluster_cost.hpp, models/prices.hpp),
// against the LuWu paper's testbed summed by hand.
#include <doctest/doctest.h>

#include <string>

#include "common/input_error.hpp"
#include "models/prices.hpp"
#include "sim/experiment/cluster_cost.hpp"
#include "sim/experiment/scenario.hpp"

using namespace luwu;

namespace {

const std::string kPaperScenario = std::string(LUWUSIM_SOURCE_DIR) + "/scenarios/luwu-paper-175b-8w.json";

std::string error_of(const Json& j, const std::string& file = "p.json") {
  try {
    models::price_list_from_json(JsonNode(j, file));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("the paper's 8-worker testbed costs what its price table sums to, per system") {
  const sim::Scenario s = sim::load_scenario(kPaperScenario);
  REQUIRE(s.prices);
  // Each worker: a $10,600 server, an $8,000 A100 and a $1,600 SmartNIC; one $10,000 Tofino.
  const double workers = 8 * (10600 + 8000 + 1600) + 10000;
  // ZeRO-Infinity on NVMe adds its 2 SSDs per worker ($310 each).
  // LuWu adds the $17,000 optimizer node, its SmartNIC and its 12 SSDs.
  const auto ddp = sim::cluster_cost(s.topology, *s.prices, {});
  const auto zinf = sim::cluster_cost(s.topology, *s.prices, {.worker_ssds = true});
  const auto luwu = sim::cluster_cost(s.topology, *s.prices, {.optimizer_node = true});
  CHECK(ddp.known());
  CHECK(ddp.usd == workers);
  CHECK(zinf.usd == workers + 16 * 310);
  CHECK(luwu.usd == workers + 17000 + 1600 + 12 * 310);
  CHECK(luwu.parts.at("paper-testbed-ssd-gen4") == 12);
  CHECK(luwu.parts.at("alveo-u50") == 9);
  // The systems say which parts they use.
  for (const auto& system : s.systems) {
    if (system->name() == "luwu") CHECK(system->uses_optimizer_node());
    if (system->label() == "zero-infinity-nvme") CHECK(system->uses_worker_ssds());
    if (system->name() == "ddp") {
      CHECK_FALSE(system->uses_worker_ssds());
      CHECK_FALSE(system->uses_optimizer_node());
    }
  }
  // Throughput per dollar: tokens/s / usd x 1000.
  const Json j = sim::cost_to_json(luwu, 1000);
  CHECK(j.at("tokens_per_s_per_1000_usd").get<double>() == doctest::Approx(1000 / luwu.usd * 1000));
  CHECK(sim::cost_to_json(luwu, 0).at("tokens_per_s_per_1000_usd").is_null());
}

TEST_CASE("a server whose price includes its parts is not charged for them again, and an unpriced part leaves the cost unknown") {
  const sim::Scenario s = sim::load_scenario(kPaperScenario);
  models::PriceList list = *s.prices;
  list.prices.at("xeon-silver-4214-gen3").includes = {"gpu", "smartnic"};
  CHECK(sim::cluster_cost(s.topology, list, {}).usd == 8 * 10600 + 10000);
  list.prices.erase("tofino");
  const auto unknown = sim::cluster_cost(s.topology, list, {});
  CHECK_FALSE(unknown.known());
  REQUIRE(unknown.unpriced.size() == 1);
  CHECK(unknown.unpriced[0] == "tofino (programmable-switch)");
  CHECK(sim::cost_to_json(unknown, 100).at("usd").is_null());
}

TEST_CASE("price lists: every price needs a source, kinds a server includes are named, and lists are found by name") {
  CHECK(error_of(Json::parse(R"({"name": "x", "prices": {"gpu-a": {"usd": 1, "source": "s"}}})")).empty());
  std::string e = error_of(Json::parse(R"({"name": "x", "prices": {"gpu-a": {"usd": 1}}})"));
  CHECK(contains(e, "p.json"));
  CHECK(contains(e, "$.prices.gpu-a"));
  e = error_of(Json::parse(R"({"name": "x", "prices": {"gpu-a": {"usd": -3, "source": "s"}}})"));
  CHECK(contains(e, "$.prices.gpu-a.usd"));
  e = error_of(Json::parse(R"({"name": "x", "prices": {"h": {"usd": 3, "source": "s", "includes": ["gpus"]}}})"));
  CHECK(contains(e, "$.prices.h.includes[0]"));
  CHECK(contains(e, "\"gpu\""));
  e = error_of(Json::parse(R"({"name": "x", "currency": "EUR", "prices": {}})"));
  CHECK(contains(e, "$.currency"));
  CHECK(models::find_price_list("luwu-paper").find("a100-40gb-pcie")->usd == 8000);
  try {
    models::find_price_list("luwu-papr");
    FAIL("expected an InputError");
  } catch (const InputError& err) {
    CHECK(contains(err.what(), "luwu-paper"));
  }
}

TEST_CASE("a scenario names its price list, or none") {
  Json j = load_json_file(kPaperScenario);
  j["prices"] = false;
  CHECK_FALSE(sim::scenario_from_json(JsonNode(j, kPaperScenario)).prices);
  j["prices"] = "luwu-paper";
  CHECK(sim::scenario_from_json(JsonNode(j, kPaperScenario)).prices->name == "luwu-paper");
  j["prices"] = "no-such-list";
  try {
    sim::scenario_from_json(JsonNode(j, kPaperScenario));
    FAIL("expected an InputError");
  } catch (const InputError& err) {
    CHECK(err.file() == kPaperScenario);
    CHECK(err.json_path() == "$.prices");
  }
}

// The paper's 32-GPU cost table (../shared/reference/luwu-paper.md, "cost efficiency"), summed by
// hand, against the three clusters of scenarios/paper/cost-32gpu-*.json.
TEST_CASE("the paper's 32-GPU clusters cost what its price table sums to: LuWu, ZeRO-Infinity on commodity servers and on DGX A100s") {
  const std::string dir = std::string(LUWUSIM_SOURCE_DIR) + "/scenarios/paper/";
  // LuWu: 4 servers x $10,600 (32 single-GPU workers at $1,325 each), the $17,000 optimizer node,
  // 32 GPUs x $8,000, 33 SmartNICs x $1,600, 12 SSDs x $310, the $10,000 Tofino.
  const sim::Scenario luwu = sim::load_scenario(dir + "cost-32gpu-luwu.json");
  const auto luwu_cost = sim::cluster_cost(luwu.topology, *luwu.prices, {.optimizer_node = true});
  CHECK(luwu_cost.known());
  CHECK(luwu_cost.usd == 4 * 10600 + 17000 + 32 * 8000 + 33 * 1600 + 12 * 310 + 10000);  // $381,920
  CHECK(luwu_cost.parts.at("alveo-u50") == 33);
  CHECK(luwu_cost.parts.at("xeon-silver-4214-gen3") == 32);

  // ZeRO-Infinity on commodity servers: 4 x $10,600, 32 x $8,000, 32 NICs x $1,000, 16 SSDs x
  // $310, the $19,000 conventional switch.
  const sim::Scenario commodity = sim::load_scenario(dir + "cost-32gpu-zero-infinity.json");
  const auto commodity_cost = sim::cluster_cost(commodity.topology, *commodity.prices, {.worker_ssds = true});
  CHECK(commodity_cost.known());
  CHECK(commodity_cost.usd == 4 * 10600 + 32 * 8000 + 32 * 1000 + 16 * 310 + 19000);  // $354,360
  CHECK(commodity_cost.parts.at("mellanox-sn2700") == 1);
  CHECK(commodity_cost.parts.at("paper-testbed-ssd-gen3") == 16);

  // ZeRO-Infinity on DGX A100s: 4 x $154,800 with their GPUs, NICs and SSDs, and the switch.
  const sim::Scenario dgx = sim::load_scenario(dir + "cost-32gpu-dgx-a100.json");
  const auto dgx_cost = sim::cluster_cost(dgx.topology, *dgx.prices, {.worker_ssds = true});
  CHECK(dgx_cost.known());
  CHECK(dgx_cost.usd == 4 * 154800 + 19000);  // $638,200
  CHECK(dgx_cost.parts.size() == 2);
  CHECK(dgx_cost.parts.at("dgx-a100") == 4);
  CHECK(dgx_cost.parts.at("mellanox-sn2700") == 1);
  // The DGX's SSDs are in its price whether or not the system keeps state on them.
  CHECK(sim::cluster_cost(dgx.topology, *dgx.prices, {}).usd == 4 * 154800 + 19000);

  // The SN2700 is a plain switch in the topology: no in-network aggregation on it.
  int plain = 0, programmable = 0;
  for (auto v : commodity.topology.network_switches()) {
    const auto kind = commodity.topology.graph[v].kind;
    plain += kind == topologies::VertexKind::Switch;
    programmable += kind == topologies::VertexKind::ProgrammableSwitch;
  }
  CHECK(plain == 1);
  CHECK(programmable == 0);
}
