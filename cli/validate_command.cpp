// `luwusim validate [--quick] [--json] [--profile host.json] [--dir DIR]`: the models' predicted
// optimizer step time beside the real kernel's, in memory and out of core.  Without --profile the
// machine is calibrated right before each case (not written anywhere).  Progress on stderr, results on stdout.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/command_registry.hpp"
#include "common/json_input.hpp"
#include "common/units.hpp"
#include "models/profile.hpp"
#include "validation/calibration.hpp"
#include "validation/step_time_validation.hpp"

namespace {

using namespace luwu;

struct ValidateArgs {
  std::string profile;
  std::string ssd_profile;
  std::string dir;
  bool quick = false;
  bool json = false;
  unsigned threads = 0;
};

int run_validate(const ValidateArgs& a) {
  auto progress = [](const std::string& line) { std::cerr << line << "\n"; };
  const std::string dir = a.dir.empty() ? std::filesystem::temp_directory_path().string() : a.dir;
  if (!std::filesystem::is_directory(dir)) throw std::invalid_argument("--dir " + dir + " is not a directory");

  validation::ProfileSource profiles;
  if (a.profile.empty()) {
    // Calibrate right before each case what it is predicted from: DRAM always, the disk for
    // out-of-core cases (not written anywhere).
    profiles = [&](bool out_of_core) {
      validation::CalibrationOptions options{dir, a.quick, a.threads};
      options.disk = out_of_core;
      options.kernels = false;
      const auto c = validation::calibrate_host(options, progress);
      validation::CaseProfiles p{models::profile_from_json(JsonNode(validation::host_profile_json(c), "<calibration>")),
                                 std::nullopt};
      if (out_of_core) p.ssd = models::profile_from_json(JsonNode(validation::ssd_profile_json(c), "<calibration>"));
      return p;
    };
  } else {
    models::Profile host = models::load_profile_file(a.profile);
    models::Profile ssd =
        models::load_profile_file(a.ssd_profile.empty() ? validation::ssd_profile_path_for(a.profile) : a.ssd_profile);
    models::require_kind(host, {"host"});
    models::require_kind(ssd, {"ssd"});
    profiles = [host, ssd](bool) { return validation::CaseProfiles{host, ssd}; };
  }

  const auto cases = validation::run_validation(profiles, {a.quick, dir, a.threads}, progress);
  if (a.json) {
    Json out = Json::array();
    for (const auto& c : cases)
      out.push_back({{"case", c.name},
                     {"params", c.params},
                     {"out_of_core", c.out_of_core},
                     {"predicted_s", c.predicted_s},
                     {"measured_s", c.measured_s},
                     {"error_pct", c.error_pct},
                     {"paired_predicted_s", c.paired_predicted_s},
                     {"paired_error_pct", c.paired_error_pct},
                     {"profile_device_Bps", c.profile_device_Bps},
                     {"paired_device_Bps", c.paired_device_Bps},
                     {"target_pct", c.target_pct}});
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("{:<44} {:>10} {:>10} {:>8} | {:>10} {:>8} | {:>6} | {:>16}\n", "case", "predicted",
                           "measured", "error", "paired", "error", "target", "device GB/s");
  for (const auto& c : cases)
    std::cout << fmt::format("{:<44} {:>10} {:>10} {:>7.1f}% | {:>10} {:>7.1f}% | {:>5.0f}% | {:>7.2f} {:>8.2f}\n",
                             c.name, units::seconds(c.predicted_s), units::seconds(c.measured_s), c.error_pct,
                             units::seconds(c.paired_predicted_s), c.paired_error_pct, c.target_pct,
                             c.profile_device_Bps / 1e9, c.paired_device_Bps / 1e9);
  std::cout << "predicted: from the " << (a.profile.empty() ? "calibration run just before each case" : "profiles given")
            << "; paired: the same formulas with the device rate measured on the case's own state (DRAM "
               "read-modify-write over its arrays, the in-place stream over its state files); device GB/s: "
               "profile, paired\n";
  return 0;
}

const bool registered = cli::register_command(
    "validate", "compare the models' optimizer step time with the real kernel, in memory and out of core",
    [](CLI::App& app) {
      auto args = std::make_shared<ValidateArgs>();
      app.add_option("--profile", args->profile, "calibrated host profile (from `luwusim calibrate`); default: calibrate before each case");
      app.add_option("--ssd-profile", args->ssd_profile, "SSD profile (default: <profile>-ssd.json beside --profile)");
      app.add_option("--dir", args->dir, "directory for the optimizer-state files (default: the temp dir)");
      app.add_flag("--quick", args->quick, "smaller cases: well under a minute");
      app.add_flag("--json", args->json, "print a JSON list of {case, predicted_s, measured_s, error_pct, ...}");
      app.add_option("--threads", args->threads, "threads (default: all hardware threads)");
      return [args]() { return run_validate(*args); };
    });

}  // namespace
