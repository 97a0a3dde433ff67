// `luwusim validate [--quick] [--json] [--check] [--profile host.json] [--dir DIR]
//                  [--in-memory-tolerance PCT] [--out-of-core-tolerance PCT]`: the models' predicted
// optimizer step time beside the real kernel's, in memory and out of core, each prediction with a
// pass/fail verdict against its tolerance.  Without --profile the machine is calibrated right
// before each case (not written anywhere).  Progress on stderr, results on stdout.  --check: exit
// 1 when any verdict fails (2 stays bad input).
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
#include "validation/out_of_core_adam.hpp"
#include "validation/step_time_validation.hpp"

namespace {

using namespace luwu;

struct ValidateArgs {
  std::string profile;
  std::string ssd_profile;
  std::string dir;
  bool quick = false;
  bool json = false;
  bool check = false;
  unsigned threads = 0;
  double in_memory_tolerance_pct = validation::kDefaultInMemoryTolerancePct;
  double out_of_core_tolerance_pct = validation::kDefaultOutOfCoreTolerancePct;
  double size_scale = 1;
};

const char* verdict(bool passed) { return passed ? "pass" : "FAIL"; }

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
      // The disk measured with the out-of-core case's own requests and file size.
      const validation::OutOfCoreCase ooc = validation::validation_out_of_core_case(a.quick, a.size_scale);
      options.disk_request_bytes = ooc.request_bytes();
      options.disk_file_bytes = ooc.file_bytes();
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

  validation::ValidationOptions options{a.quick, dir, a.threads};
  options.in_memory_tolerance_pct = a.in_memory_tolerance_pct;
  options.out_of_core_tolerance_pct = a.out_of_core_tolerance_pct;
  options.size_scale = a.size_scale;
  const auto cases = validation::run_validation(profiles, options, progress);
  int failed = 0;
  for (const auto& c : cases) failed += !c.passed + !c.paired_passed;
  // Exit 1 on a failed check, only when asked: 2 is bad input.
  auto result = [&] {
    if (!a.check || failed == 0) return 0;
    std::cerr << "validate --check: " << failed << " of " << 2 * cases.size() << " verdicts failed\n";
    return 1;
  };
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
                     {"target_pct", c.target_pct},
                     {"tolerance_pct", c.target_pct},
                     {"verdict", c.passed ? "pass" : "fail"},
                     {"paired_verdict", c.paired_passed ? "pass" : "fail"},
                     {"request_bytes", c.request_bytes},
                     {"direct_io", c.direct_io}});
    std::cout << out.dump(2) << "\n";
    return result();
  }
  std::cout << fmt::format("{:<44} {:>10} {:>10} {:>8} {:>7} | {:>10} {:>8} {:>7} | {:>9} | {:>16}\n", "case",
                           "predicted", "measured", "error", "verdict", "paired", "error", "verdict", "tolerance",
                           "device GB/s");
  for (const auto& c : cases)
    std::cout << fmt::format(
        "{:<44} {:>10} {:>10} {:>7.1f}% {:>7} | {:>10} {:>7.1f}% {:>7} | {:>8.1f}% | {:>7.2f} {:>8.2f}\n", c.name,
        units::seconds(c.predicted_s), units::seconds(c.measured_s), c.error_pct, verdict(c.passed),
        units::seconds(c.paired_predicted_s), c.paired_error_pct, verdict(c.paired_passed), c.target_pct,
        c.profile_device_Bps / 1e9, c.paired_device_Bps / 1e9);
  for (const auto& c : cases)
    if (c.out_of_core)
      std::cout << fmt::format("{}: state file I/O {}, {:.2f} MiB per request, {} in flight\n", c.name,
                               c.direct_io ? "O_DIRECT" : "buffered (the filesystem refused O_DIRECT)",
                               c.request_bytes / 1048576.0, validation::OutOfCoreAdam::kRequestsInFlight);
  std::cout << "predicted: from the " << (a.profile.empty() ? "calibration run just before each case" : "profiles given")
            << "; paired: the same formulas with the device rate measured on the case's own state (DRAM "
               "read-modify-write over its arrays, the in-place stream over its state files); device GB/s: "
               "profile, paired\n"
            << fmt::format("verdict: pass when |error| <= tolerance ({:g}% in memory, {:g}% out of core); {} of {} "
                           "verdicts failed\n",
                           a.in_memory_tolerance_pct, a.out_of_core_tolerance_pct, failed, 2 * cases.size());
  return result();
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
      app.add_option("--in-memory-tolerance", args->in_memory_tolerance_pct,
                     "largest |error| in percent an in-memory prediction passes with")
          ->check(CLI::NonNegativeNumber)
          ->capture_default_str();
      app.add_option("--out-of-core-tolerance", args->out_of_core_tolerance_pct,
                     "largest |error| in percent an out-of-core prediction passes with")
          ->check(CLI::NonNegativeNumber)
          ->capture_default_str();
      app.add_flag("--check", args->check, "exit 1 when any prediction fails its tolerance");
      app.add_option("--scale", args->size_scale, "every case's size times this, in (0, 1] (a smoke test: 0.01)")
          ->check(CLI::Range(1e-6, 1.0))
          ->capture_default_str();
      return [args]() { return run_validate(*args); };
    });

}  // namespace
