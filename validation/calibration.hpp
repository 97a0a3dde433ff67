#pragma once
// `luwusim calibrate`: measures this machine as an optimizer node (DRAM streams, peak FLOP/s, a
// scratch file's bandwidth, the real Adam step in memory and out of core) and expresses the
// result as two hardware profiles in the models' format: the host (kind "host": CPU and DRAM) and
// the SSD tier (kind "ssd": the scratch directory's device).  Every field's source is
// "calibrated on <hostname> <date>" with what was measured.
#include <cstddef>
#include <functional>
#include <string>

#include "common/json_input.hpp"
#include "validation/bandwidth.hpp"

namespace luwu::validation {

struct CalibrationOptions {
  std::string scratch_dir;  // where the scratch and optimizer-state files go
  bool quick = false;       // smaller arrays and files, fewer repetitions (seconds, not minutes)
  unsigned threads = 0;     // 0: all hardware threads
  bool disk = true;         // measure the scratch directory's device (the SSD profile needs it)
  bool kernels = true;      // time the Adam step in memory and out of core (for the description)
  // The disk's pattern: requests of this size (4 in flight, one reader, one writer) over a file of
  // this size.  0: those of validate's out-of-core case (validation_out_of_core_case(quick)), so
  // that its prediction uses the rate its own I/O meets.
  std::size_t disk_request_bytes = 0;
  std::size_t disk_file_bytes = 0;
};

struct Calibration {
  std::string hostname;
  std::string date;  // YYYY-MM-DD, from the clock: when the measurement was taken
  unsigned threads = 0;
  double dram_capacity_bytes = 0;
  double triad_Bps = 0;
  double read_modify_write_Bps = 0;
  double peak_fp32_flops = 0;
  FileBandwidth file;
  double file_capacity_bytes = 0;
  std::string scratch_dir;
  double adam_in_memory_params_per_s = 0;
  double adam_out_of_core_params_per_s = 0;
};

Calibration calibrate_host(const CalibrationOptions& options, const std::function<void(const std::string&)>& progress);

// The two profiles (models/profile.hpp format).
Json host_profile_json(const Calibration& c);
Json ssd_profile_json(const Calibration& c);

// Where calibrate writes the SSD profile beside the host one: "host.json" -> "host-ssd.json".
std::string ssd_profile_path_for(const std::string& host_profile_path);

}  // namespace luwu::validation
