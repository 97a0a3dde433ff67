// Every input that once crashed a loader, tripped a sanitizer or escaped as the wrong exception
// (fuzz/regressions/<loader>/*.json, found by the fuzz targets in fuzz/) must now be rejected
// cleanly: luwu::InputError or std::invalid_argument.  Any other exception fails the test.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/input_error.hpp"
#include "models/profile.hpp"
#include "sim/experiment/scenario.hpp"
#include "topologies/json_format.hpp"
#include "workloads/trace.hpp"

namespace {

namespace fs = std::filesystem;

std::vector<std::string> regression_files(const std::string& loader) {
  std::vector<std::string> files;
  const fs::path dir = fs::path(LUWUSIM_SOURCE_DIR) / "fuzz" / "regressions" / loader;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file()) files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// "input error", "invalid argument", or "accepted" when the loader took the file.
std::string outcome(const std::function<void()>& load) {
  try {
    load();
  } catch (const luwu::InputError&) {
    return "input error";
  } catch (const std::invalid_argument&) {
    return "invalid argument";
  }
  return "accepted";
}

void check_all_rejected(const std::string& loader, const std::function<void(const std::string&)>& load) {
  for (const auto& file : regression_files(loader)) {
    CAPTURE(file);
    CHECK(outcome([&] { load(file); }) != "accepted");
  }
}

}  // namespace

TEST_CASE("fuzz regressions exist for the trace and topology loaders") {
  CHECK(regression_files("trace").size() >= 4);
  CHECK(regression_files("topology").size() >= 1);
}

TEST_CASE("trace loader rejects every fuzz regression cleanly") {
  check_all_rejected("trace", [](const std::string& f) { luwu::workloads::load_trace(f); });
}

TEST_CASE("topology loader rejects every fuzz regression cleanly") {
  check_all_rejected("topology", [](const std::string& f) { luwu::topologies::load_topology(f); });
}

TEST_CASE("profile loader rejects every fuzz regression cleanly") {
  check_all_rejected("profile", [](const std::string& f) { luwu::models::load_profile_file(f); });
}

TEST_CASE("scenario loader rejects every fuzz regression cleanly") {
  check_all_rejected("scenario", [](const std::string& f) { luwu::sim::load_scenario(f); });
}

TEST_CASE("the error for a count of 2^63 written as a float names the field") {
  const std::string file = std::string(LUWUSIM_SOURCE_DIR) + "/fuzz/regressions/trace/params-float-2pow63.json";
  try {
    luwu::workloads::load_trace(file);
    FAIL("accepted a parameter count of 2^63");
  } catch (const luwu::InputError& e) {
    CHECK(e.json_path() == "$.layers[0].params");
  }
}
