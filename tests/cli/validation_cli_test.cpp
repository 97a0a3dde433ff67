// Smoke tests of `luwusim calibrate` and `luwusim validate`: they run, write what they promise and
// print the promised fields.  Timings are never asserted here (see bench/ and the report).
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tests/cli/run_command.hpp"

namespace {
std::string scratch_dir() {
  const auto dir = std::filesystem::temp_directory_path() / ("luwusim-validation-cli-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}
}  // namespace

TEST_CASE("calibrate --quick writes a host and an SSD profile with calibrated sources, and validate --json uses them") {
  const std::string dir = scratch_dir();
  const std::string host = dir + "/host.json";
  auto r = run_luwusim("calibrate --quick --dir " + dir + " -o " + host);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("calibrate:") != std::string::npos);  // progress goes to stderr

  const auto host_json = nlohmann::json::parse(read_whole_file(host));
  CHECK(host_json.at("kind") == "host");
  for (const char* field : {"cores", "cpu_peak_fp32_flops", "dram_capacity", "dram_theoretical_bandwidth", "dram_stream_efficiency"}) {
    CAPTURE(field);
    const auto& f = host_json.at("fields").at(field);
    CHECK(f.at("value").get<double>() > 0);
    CHECK(f.at("source").get<std::string>().rfind("calibrated on ", 0) == 0);
  }
  const auto ssd_json = nlohmann::json::parse(read_whole_file(dir + "/host-ssd.json"));
  CHECK(ssd_json.at("kind") == "ssd");
  CHECK(ssd_json.at("fields").at("read_bandwidth").at("value").get<double>() > 0);
  // The scratch files are gone: only the two profiles remain.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++entries;
  CHECK(entries == 2);

  r = run_luwusim("validate --quick --json --dir " + dir + " --profile " + host);
  REQUIRE(r.exit_code == 0);
  const auto cases = nlohmann::json::parse(r.out);
  REQUIRE(cases.is_array());
  REQUIRE(cases.size() >= 2);
  bool any_out_of_core = false;
  for (const auto& c : cases) {
    CHECK(c.at("case").is_string());
    CHECK(c.at("predicted_s").get<double>() > 0);
    CHECK(c.at("measured_s").get<double>() > 0);
    const double expected_error = 100 * (c.at("predicted_s").get<double>() - c.at("measured_s").get<double>()) /
                                  c.at("measured_s").get<double>();
    CHECK(c.at("error_pct").get<double>() == doctest::Approx(expected_error));
    const double expected_paired_error = 100 * (c.at("paired_predicted_s").get<double>() - c.at("measured_s").get<double>()) /
                                         c.at("measured_s").get<double>();
    CHECK(c.at("paired_error_pct").get<double>() == doctest::Approx(expected_paired_error));
    CHECK(c.at("paired_device_Bps").get<double>() > 0);
    CHECK(c.at("profile_device_Bps").get<double>() > 0);
    any_out_of_core = any_out_of_core || c.at("out_of_core").get<bool>();
  }
  CHECK(any_out_of_core);

  // Verdicts: the default tolerances are stated in the output.  At tolerance 0 no measured step
  // matches its prediction exactly, so --check exits 1 (not 2: the input was fine) and says why.
  r = run_luwusim("validate --quick --scale 0.02 --check --in-memory-tolerance 0 --out-of-core-tolerance 0 --dir " +
                  dir + " --profile " + host);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("verdict") != std::string::npos);
  CHECK(r.out.find("tolerance") != std::string::npos);
  CHECK(r.out.find("FAIL") != std::string::npos);
  CHECK(r.out.find("0% in memory, 0% out of core") != std::string::npos);
  CHECK(r.err.find("validate --check:") != std::string::npos);
  // The out-of-core case says how its state file was read and written, and in what requests.
  CHECK(r.out.find("state file I/O") != std::string::npos);
  CHECK(r.out.find("MiB per request") != std::string::npos);

  // Without --check the same failed verdicts are reported, and the exit code stays 0.
  r = run_luwusim("validate --quick --scale 0.02 --json --in-memory-tolerance 0 --out-of-core-tolerance 0 --dir " +
                  dir + " --profile " + host);
  REQUIRE(r.exit_code == 0);
  for (const auto& c : nlohmann::json::parse(r.out)) {
    CHECK(c.at("tolerance_pct").get<double>() == 0);
    CHECK(c.at("verdict") == "fail");
    CHECK(c.at("paired_verdict") == "fail");
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("validate states its default tolerances: 10% in memory, 20% out of core") {
  auto r = run_luwusim("validate --help");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("--in-memory-tolerance") != std::string::npos);
  CHECK(r.out.find("--out-of-core-tolerance") != std::string::npos);
  CHECK(r.out.find("--check") != std::string::npos);
  CHECK(r.out.find("=10") != std::string::npos);
  CHECK(r.out.find("=20") != std::string::npos);
}

TEST_CASE("validate with a negative tolerance is bad input (exit 2)") {
  CHECK(run_luwusim("validate --quick --in-memory-tolerance -1").exit_code == 2);
}

TEST_CASE("validate with a missing profile is bad input (exit 2, the file named)") {
  auto r = run_luwusim("validate --quick --profile /nonexistent/host.json");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/nonexistent/host.json") != std::string::npos);
}

TEST_CASE("calibrate needs -o") {
  CHECK(run_luwusim("calibrate --quick").exit_code == 2);
}

TEST_CASE("calibrate into a directory that does not exist fails at once, before measuring (exit 2, the path named)") {
  auto r = run_luwusim("calibrate --quick -o /nonexistent-luwusim-dir/host.json");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/nonexistent-luwusim-dir") != std::string::npos);
  CHECK(r.err.find("calibrate:") == std::string::npos);  // no measurement was started
}
