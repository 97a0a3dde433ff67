// `run` refuses detailed collectives estimated past the flow budget, unless --force
// (sim/experiment/run_scenario.hpp: estimate_detailed_flows, check_detailed_budget).
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "tests/cli/run_command.hpp"

TEST_CASE("run refuses --mode detailed past the flow budget with the estimate and the coarse alternative, exit 2") {
  // GPT-3 125M on 1,024 GPUs, ZeRO-3 gathering layer by layer over a flat ring: 42 collectives per
  // iteration (each layer's gathers, backward reusing its recompute's, and its reduce-scatter), each
  // 1,024 x 1,023 flows in detailed mode, past the default budget of 2e7.  Refused before anything
  // is simulated.  (With its default hierarchical rings and sub-module gathers the same model
  // makes 2.3e6 flows, within the budget.)
  std::ofstream("cli-detailed-1024.json") << R"({"model": "gpt3-125m", "training": {"micro_batch": 1, "seq_len": 128},
    "cluster": {"topology": "fat-tree", "servers": 128, "gpus_per_server": 8, "tiers": 2, "leaf_down_ports": 32},
    "systems": [{"name": "zero3", "collective_algorithm": "ring", "param_fetch": "layer"}]})";
  auto r = run_luwusim("run cli-detailed-1024.json --mode detailed");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cli-detailed-1024.json") != std::string::npos);
  CHECK(r.err.find("$.simulation.mode") != std::string::npos);
  CHECK(r.err.find("detailed collectives would simulate about") != std::string::npos);
  CHECK(r.err.find("flows for zero3 (") != std::string::npos);
  CHECK(r.err.find("data-parallel collectives as it runs them), over the budget of 2e+07") != std::string::npos);
  CHECK(r.err.find("--mode coarse") != std::string::npos);
  CHECK(r.err.find("--force") != std::string::npos);
  CHECK(r.err.find("simulating") == std::string::npos);
  CHECK(r.out.empty());
  std::remove("cli-detailed-1024.json");
}

TEST_CASE("run --force simulates detailed collectives past the budget, and auto or coarse mode is never refused") {
  // 4 workers of GPT-3 125M: a few thousand flows, over a budget of 100 flows.
  std::ofstream("cli-detailed-4.json") << R"({"model": "gpt3-125m", "training": {"micro_batch": 1, "seq_len": 128},
    "cluster": {"topology": "luwu-star", "workers": 4}, "systems": ["zero3"]})";
  auto refused = run_luwusim("run cli-detailed-4.json --mode detailed --max-detailed-flows 100");
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("over the budget of 100;") != std::string::npos);
  auto forced = run_luwusim("run cli-detailed-4.json --mode detailed --max-detailed-flows 100 --force");
  CHECK(forced.exit_code == 0);
  CHECK(forced.out.find("collectives simulated in detailed mode") != std::string::npos);
  // Auto mode picks detailed collectives at 4 GPUs but is not held to the budget.
  auto automatic = run_luwusim("run cli-detailed-4.json --max-detailed-flows 100");
  CHECK(automatic.exit_code == 0);
  CHECK(automatic.out.find("collectives simulated in detailed mode") != std::string::npos);
  std::remove("cli-detailed-4.json");
}
