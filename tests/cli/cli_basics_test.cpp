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
