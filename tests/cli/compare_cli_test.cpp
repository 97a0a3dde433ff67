// luwusim compare against the simulator's own predictions printed by `run --json`: a measurement
// 1.25 times the prediction is a -20% error; CSV and JSON forms agree; bad rows are exit 2 naming
// the line or JSON path; the plot script draws the JSON.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/cli/run_command.hpp"

namespace {
const std::string kScenario = std::string(LUWUSIM_SOURCE_DIR) + "/scenarios/small-zero3-vs-ddp.json";
// Every digit a double needs to come back the same.
std::string fmt_double(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}
}

TEST_CASE("compare: a measurement 1.25 times the prediction is a -20% error, in CSV and in JSON") {
  auto run = run_luwusim("run " + kScenario + " --json");
  REQUIRE(run.exit_code == 0);
  const auto results = nlohmann::json::parse(run.out)["results"];
  const double ddp = results[0]["iteration_time_s"], zero3_compute = results[1]["breakdown_s"]["compute"];
  std::ofstream("cmp.csv") << "# measured\nscenario,system,iteration_time_s,compute_s\n"
                           << kScenario << ",ddp," << fmt_double(1.25 * ddp) << ",\n"
                           << kScenario << ",zero3,," << fmt_double(1.25 * zero3_compute) << "\n";
  auto csv = run_luwusim("compare cmp.csv --json");
  REQUIRE(csv.exit_code == 0);
  const auto rows = nlohmann::json::parse(csv.out);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["system"] == "ddp");
  CHECK(rows[0]["field"] == "iteration_time_s");
  CHECK(rows[0]["relative_error"].get<double>() == doctest::Approx(-0.2).epsilon(1e-9));
  CHECK(rows[1]["field"] == "compute_s");
  CHECK(rows[1]["relative_error"].get<double>() == doctest::Approx(-0.2).epsilon(1e-9));

  std::ofstream("cmp.json") << R"({"measurements": [{"scenario": ")" << kScenario << R"(", "system": "ddp",
    "iteration_time_s": )" << fmt_double(1.25 * ddp) << "}]}";
  auto json = run_luwusim("compare cmp.json --json");
  REQUIRE(json.exit_code == 0);
  CHECK(nlohmann::json::parse(json.out)[0]["relative_error"] == rows[0]["relative_error"]);

  // The table, and the plot of the JSON.
  auto table = run_luwusim("compare cmp.csv");
  CHECK(table.out.find("-20.0%") != std::string::npos);
  CHECK(table.out.find("mean absolute error: iteration_time_s 20.0% (1) compute_s 20.0% (1)") != std::string::npos);
  std::ofstream("cmp-out.json") << csv.out;
  const std::string plot = "/usr/bin/python3 " + std::string(LUWUSIM_SOURCE_DIR) +
                           "/plots/compare_plot.py cmp-out.json -o cmp.png > /dev/null 2>&1";
  CHECK(std::system(plot.c_str()) == 0);
  std::ifstream png("cmp.png", std::ios::binary | std::ios::ate);
  CHECK(png.tellg() > 1000);
}

TEST_CASE("compare: bad measurements are exit 2 naming the line or the JSON path") {
  std::ofstream("cmp-bad1.csv") << "scenario,system,iteration_secs\n";
  auto r = run_luwusim("compare cmp-bad1.csv");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("line 1") != std::string::npos);
  CHECK(r.err.find("unknown column \"iteration_secs\"") != std::string::npos);

  std::ofstream("cmp-bad2.csv") << "scenario,system,iteration_time_s\n" << kScenario << ",ddp,fast\n";
  r = run_luwusim("compare cmp-bad2.csv");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("line 2") != std::string::npos);

  std::ofstream("cmp-bad3.csv") << "scenario,system,iteration_time_s\n" << kScenario << ",deepspeed,1.0\n";
  r = run_luwusim("compare cmp-bad3.csv");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("\"deepspeed\" is not a system label") != std::string::npos);
  CHECK(r.err.find("cmp-bad3.csv: at line 2: system") != std::string::npos);

  // A row's scenario that is not there: the row and its column, not the bare scenario path.
  std::ofstream("cmp-bad5.csv") << "scenario,system,iteration_time_s\nno-such-scenario.json,ddp,1.0\n";
  r = run_luwusim("compare cmp-bad5.csv");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cmp-bad5.csv: at line 2: scenario: no scenario file") != std::string::npos);
  std::ofstream("cmp-bad6.json") << R"({"measurements": [{"scenario": "x.json", "system": "ddp", "iteration_time_s": 1}]})";
  r = run_luwusim("compare cmp-bad6.json");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cmp-bad6.json: at $.measurements[0].scenario: no scenario file") != std::string::npos);

  std::ofstream("cmp-bad4.json") << R"({"measurements": [{"scenario": "x.json", "system": "ddp", "iteration_time_s": -1}]})";
  r = run_luwusim("compare cmp-bad4.json");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("$.measurements[0].iteration_time_s") != std::string::npos);
  CHECK(r.out.empty());

  // A quote opened and not closed on its line (was read as an empty field, the row taken).
  std::ofstream("cmp-bad7.csv") << "scenario,system,iteration_time_s,compute_s\n" << kScenario << ",ddp,3.0,\"\n";
  r = run_luwusim("compare cmp-bad7.csv");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cmp-bad7.csv: at line 2: a quoted field is not closed") != std::string::npos);
  // A value no iteration takes (was compared, a 100% error): refused at its row or path.
  std::ofstream("cmp-bad8.csv") << "scenario,system,iteration_time_s\n" << kScenario << ",ddp,1e300\n";
  r = run_luwusim("compare cmp-bad8.csv");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cmp-bad8.csv: at line 2: iteration_time_s: 1e+300 is not a measurement of one iteration") !=
        std::string::npos);
  std::ofstream("cmp-bad9.json") << R"({"measurements": [{"scenario": ")" << kScenario
                                 << R"(", "system": "ddp", "tokens_per_s": 1e15}]})";
  r = run_luwusim("compare cmp-bad9.json");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cmp-bad9.json: at $.measurements[0].tokens_per_s") != std::string::npos);
  for (const char* f : {"cmp-bad1.csv", "cmp-bad2.csv", "cmp-bad3.csv", "cmp-bad4.json", "cmp-bad5.csv", "cmp-bad6.json",
                        "cmp-bad7.csv", "cmp-bad8.csv", "cmp-bad9.json"})
    std::remove(f);
}

TEST_CASE("compare: a measurements CSV that is a FIFO or a device is refused at once, exit 2 naming it") {
  // It used to wait on the FIFO forever and read /dev/zero until memory ran out (issue 36).
  ::unlink("cmp-fifo.csv");
  REQUIRE(::mkfifo("cmp-fifo.csv", 0600) == 0);
  auto r = run_luwusim("compare cmp-fifo.csv", "timeout 30");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cmp-fifo.csv") != std::string::npos);
  CHECK(r.err.find("not a regular file") != std::string::npos);
  ::unlink("cmp-fifo.csv");
  r = run_luwusim("compare /dev/zero", "timeout 30");
  CHECK(r.exit_code == 2);
}
