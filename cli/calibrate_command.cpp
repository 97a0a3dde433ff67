// `luwusim calibrate -o host.json [--dir DIR] [--quick]`: measures this machine as an optimizer
// node and writes its hardware profiles: host.json (kind "host": CPU, DRAM) and host-ssd.json
// (kind "ssd": the device under DIR).  Progress on stderr; the files are written atomically.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "cli/command_registry.hpp"
#include "common/atomic_write.hpp"
#include "validation/calibration.hpp"

namespace {

struct CalibrateArgs {
  std::string output;
  std::string dir;
  bool quick = false;
  unsigned threads = 0;
};

int run_calibrate(const CalibrateArgs& a) {
  luwu::validation::CalibrationOptions options;
  options.scratch_dir = a.dir.empty() ? std::filesystem::temp_directory_path().string() : a.dir;
  if (!std::filesystem::is_directory(options.scratch_dir))
    throw std::invalid_argument("--dir " + options.scratch_dir + " is not a directory");
  // Refuse an unwritable destination before minutes of measuring, not after.
  const std::filesystem::path out_dir = std::filesystem::absolute(a.output).parent_path();
  if (!std::filesystem::is_directory(out_dir))
    throw std::invalid_argument("-o " + a.output + ": directory " + out_dir.string() + " does not exist");
  options.quick = a.quick;
  options.threads = a.threads;
  const auto c = luwu::validation::calibrate_host(options, [](const std::string& line) { std::cerr << line << "\n"; });
  const std::string ssd_path = luwu::validation::ssd_profile_path_for(a.output);
  luwu::write_file_atomically(ssd_path, luwu::validation::ssd_profile_json(c).dump(2) + "\n");
  luwu::write_file_atomically(a.output, luwu::validation::host_profile_json(c).dump(2) + "\n");
  std::cout << "wrote " << a.output << " (host: CPU and DRAM) and " << ssd_path << " (SSD tier: " << options.scratch_dir
            << ")\n";
  return 0;
}

const bool registered = luwu::cli::register_command(
    "calibrate", "measure this machine as an optimizer node and write its hardware profiles", [](CLI::App& app) {
      auto args = std::make_shared<CalibrateArgs>();
      app.add_option("-o,--output", args->output, "host profile to write (the SSD profile goes beside it as <name>-ssd.json)")
          ->required();
      app.add_option("--dir", args->dir, "directory for the scratch and optimizer-state files (default: the temp dir)");
      app.add_flag("--quick", args->quick, "smaller arrays and files: seconds instead of minutes");
      app.add_option("--threads", args->threads, "threads to measure with (default: all hardware threads)");
      return [args]() { return run_calibrate(*args); };
    });

}  // namespace
