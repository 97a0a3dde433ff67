#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/run_command.hpp"

namespace {
const std::string kScenario = std::string(LUWUSIM_SOURCE_DIR) + "/scenarios/luwu-paper-175b-8w.json";
}

TEST_CASE("all-reduce-bandwidth --json: two points (alone, beside a GEMM) per mechanism and worker count") {
  auto r = run_luwusim("all-reduce-bandwidth " + kScenario + " --workers 2 4 --bytes 256MB --json");
  REQUIRE(r.exit_code == 0);
  auto points = nlohmann::json::parse(r.out);
  REQUIRE(points.size() == 8);  // {nccl, push-pull} x {2, 4} x {alone, beside}
  CHECK(points[0]["mechanism"] == "nccl");
  CHECK(points[0]["workers"] == 2);
  CHECK(points[0]["buffer_bytes"] == 256e6);
  CHECK(points[0]["beside_gemm"] == false);
  CHECK(points[1]["beside_gemm"] == true);
  CHECK(points[4]["mechanism"] == "push-pull");
  for (const auto& p : points) CHECK(p["algbw_Bps"].get<double>() > 0);
  // Progress goes to stderr, one line per point.
  CHECK(r.err.find("[8/8]") != std::string::npos);
}

TEST_CASE("all-reduce-bandwidth: a size without a unit, or an unknown mechanism, is bad input") {
  auto r = run_luwusim("all-reduce-bandwidth " + kScenario + " --bytes 100");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("give a unit") != std::string::npos);
  r = run_luwusim("all-reduce-bandwidth " + kScenario + " --mechanism sharp");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--mechanism") != std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("all-reduce-bandwidth: lists take commas or spaces, as every list option does") {
  const std::string scenario = std::string(LUWUSIM_SOURCE_DIR) + "/scenarios/paper/all-reduce-bandwidth.json";
  auto commas = run_luwusim("all-reduce-bandwidth " + scenario + " --workers 2,4 --mechanism nccl,push-pull --json");
  auto spaces = run_luwusim("all-reduce-bandwidth " + scenario + " --workers 2 4 --mechanism nccl push-pull --json");
  REQUIRE(commas.exit_code == 0);
  REQUIRE(spaces.exit_code == 0);
  CHECK(commas.out == spaces.out);
  CHECK(nlohmann::json::parse(commas.out).size() == 8);  // 2 mechanisms x 2 sizes x alone and beside a GEMM
}
