#include <doctest/doctest.h>

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
