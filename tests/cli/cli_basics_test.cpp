#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/cli/run_command.hpp"

TEST_CASE("an unknown command is bad input: exit code 2 and a message") {
  auto r = run_luwusim("no-such-command");
  CHECK(r.exit_code == 2);
  CHECK(!r.err.empty());
}

TEST_CASE("--help lists the commands and exits 0") {
  auto r = run_luwusim("--help");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("luwusim") != std::string::npos);
}

TEST_CASE("run --mode takes auto, detailed or coarse, and suggests the nearest for anything else") {
  const std::string scenario = std::string(LUWUSIM_SOURCE_DIR) + "/scenarios/small-zero3-vs-ddp.json";
  auto r = run_luwusim("run " + scenario + " --mode coarze");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown --mode \"coarze\" (did you mean \"coarse\"?); expected \"auto\", \"detailed\" or "
                   "\"coarse\"") != std::string::npos);
  CHECK(r.out.empty());
  // Checked before the scenario is read: a missing scenario does not hide it.
  r = run_luwusim("run no-such-scenario.json --mode fast");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown --mode \"fast\"") != std::string::npos);
}

TEST_CASE("run prints a speedup only between two systems that run") {
  const std::string scenario = std::string(LUWUSIM_SOURCE_DIR) + "/scenarios/small-zero3-vs-ddp.json";
  auto both = run_luwusim("run " + scenario);
  REQUIRE(both.exit_code == 0);
  CHECK(both.out.find("ddp's speedup over:") != std::string::npos);
  // LuWu cannot run without an optimizer node: one system runs, so no ratio is printed.
  std::ofstream("cli-one-runs.json") << R"({"model": "gpt3-125m", "training": {"micro_batch": 1, "seq_len": 128},
    "cluster": {"topology": "dgx", "servers": 1, "gpus_per_server": 2}, "systems": ["luwu", "ddp"]})";
  auto one = run_luwusim("run cli-one-runs.json");
  REQUIRE(one.exit_code == 0);
  CHECK(one.out.find("does not run") != std::string::npos);
  CHECK(one.out.find("speedup") == std::string::npos);
  std::remove("cli-one-runs.json");
}

TEST_CASE("run --system with no such system names the scenario's systems") {
  auto r = run_luwusim("run " + std::string(LUWUSIM_SOURCE_DIR) + "/scenarios/small-zero3-vs-ddp.json --system nope");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--system nope") != std::string::npos);
  CHECK(r.err.find("its systems are ddp, zero3") != std::string::npos);
}

TEST_CASE("a scenario without a price list gets one line saying costs are off, not a line of missing prices per system") {
  // The default list (the LuWu paper's) prices the paper's testbed; other clusters printed
  // "unknown: no price for ..." for every system.
  auto r = run_luwusim("run " + std::string(LUWUSIM_SOURCE_DIR) + "/scenarios/small-zero3-vs-ddp.json");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("Cluster cost: off (the default price list has no price for a100-40gb-sxm (gpu)") != std::string::npos);
  CHECK(r.out.find("unknown: no price") == std::string::npos);
  // The paper's testbed is priced by the same default list, per system.
  auto paper = run_luwusim("run " + std::string(LUWUSIM_SOURCE_DIR) + "/scenarios/luwu-paper-175b-8w.json --system luwu");
  CHECK(paper.out.find("Cluster cost (price list luwu-paper):") != std::string::npos);
  CHECK(paper.out.find("$193,920") != std::string::npos);
}

TEST_CASE("run says when LuWu streams fewer layers ahead to fit the GPU, beside the times it explains") {
  // Custom-1.0T on the paper's A100 40GB: two layers in flight do not fit, the layer in use does.
  auto scenario = nlohmann::json::parse(read_whole_file(std::string(LUWUSIM_SOURCE_DIR) + "/scenarios/luwu-paper-175b-8w.json"));
  scenario["model"] = "custom-1.0t";
  scenario["training"]["micro_batch"] = 8;
  scenario["systems"] = nlohmann::json::parse(R"([{"name": "luwu", "offload_activation_checkpoints": true}])");
  std::ofstream("cli-luwu-1t.json") << scenario.dump();
  auto r = run_luwusim("run cli-luwu-1t.json");
  std::remove("cli-luwu-1t.json");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Fitted to GPU memory:") != std::string::npos);
  CHECK(r.out.find("streams 0 layers ahead, not 1") != std::string::npos);
  // The headline's LuWu holds two layers: nothing to say.
  auto paper = run_luwusim("run " + std::string(LUWUSIM_SOURCE_DIR) + "/scenarios/luwu-paper-175b-8w.json --system luwu");
  REQUIRE(paper.exit_code == 0);
  CHECK(paper.out.find("Fitted to GPU memory") == std::string::npos);
}
