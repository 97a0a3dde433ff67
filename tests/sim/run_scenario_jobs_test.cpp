// Systems simulated side by side (RunOptions::jobs, `run --jobs`): each runs in a process of its
// own, so the run is the one made one system at a time, field for field and in the scenario's order.
#include <doctest/doctest.h>

#include <string>

#include "common/json_input.hpp"
#include "sim/experiment/run_scenario.hpp"
#include "sim/experiment/scenario.hpp"

using luwu::Json;
using namespace luwu;

TEST_CASE("systems simulated side by side give what they give one at a time, in the scenario's order") {
  // GPT-3 125M on 4 luwu-star workers, four systems, three of them at once.
  const Json j = Json::parse(R"({"name": "jobs", "model": "gpt3-125m",
    "training": {"micro_batch": 1, "seq_len": 256, "recompute": true},
    "cluster": {"topology": "luwu-star", "workers": 4},
    "systems": ["zero3", "ddp", "luwu", "zero-offload"]})");
  const sim::Scenario scenario = sim::scenario_from_json(JsonNode(j, "jobs-test.json"));
  sim::RunOptions one_at_a_time;
  sim::RunOptions side_by_side;
  side_by_side.jobs = 3;
  const Json alone = sim::run_to_json(sim::run_scenario(scenario, one_at_a_time));
  const Json together = sim::run_to_json(sim::run_scenario(scenario, side_by_side));
  REQUIRE(alone.at("results").size() == 4);
  CHECK(alone.at("results")[0].at("system") == "zero3");
  CHECK(alone.at("results")[2].at("system") == "luwu");
  CHECK(together.dump() == alone.dump());
}
