#pragma once
// `luwusim validate`: the models' prediction of the optimizer step time (the out-of-core CPU
// optimizer of models/host.hpp, the one the simulator uses, fed by a calibrated host and SSD
// profile) beside the real kernel's measured time, for several sizes in memory and out of core.
//
// Each case has two predictions.  "Predicted" uses the profiles.  "Paired" uses the same formulas
// with the device rate measured on the case's own state around its timed steps: the
// read-modify-write stream over its fp32 arrays in memory, the in-place stream over its state
// files out of core.  On this class of machine a device's rate depends on which memory or which
// file one gets (DRAM 65 or 90-105 GB/s, a virtual disk 1.5-4 GB/s from file to file), so the
// paired error tests the formulas alone and the profile's error adds that device's spread.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/host.hpp"
#include "models/profile.hpp"

namespace luwu::validation {

// In memory: the mixed-precision AdamW cost (28 B/param) over the host's DRAM rate, reads and
// writes sharing it; compute bounded by the host's peak FLOP/s.
double predict_in_memory_step_s(const models::HostSpec& host, double params);
double predict_in_memory_step_s(const models::Profile& host, double params);

// Out of core: the state (fp32 master, m, v: 12 B/param) is read from the host's SSD tier and
// written back while the kernel updates it in DRAM (models::SsdArray::streaming_s: each
// direction's limit and the shared read_write_bandwidth); the pipeline overlaps SSD, DRAM and
// compute, so the step takes the longest of them.  `host.ssds` must be set.
double predict_out_of_core_step_s(const models::HostSpec& host, double params);
double predict_out_of_core_step_s(const models::Profile& host, const models::Profile& ssd, double params);

struct ValidationCase {
  std::string name;       // e.g. "in-memory 64M"
  double params = 0;
  bool out_of_core = false;
  double predicted_s = 0;         // from the profiles
  double measured_s = 0;
  double error_pct = 0;           // 100 (predicted - measured) / measured
  // From the device rate measured on the case's own state.  In memory each timed step is set
  // against the passes just before and after it: this is measured_s times the median ratio.
  double paired_predicted_s = 0;
  double paired_error_pct = 0;
  double paired_device_Bps = 0;   // that rate: DRAM read-modify-write, or the files' in-place stream
  double profile_device_Bps = 0;  // the profiles' rate for the same stream
  double target_pct = 0;          // the accuracy this case is meant to reach: 10 in memory, 20 out of core
};

struct ValidationOptions {
  bool quick = false;
  std::string scratch_dir;
  unsigned threads = 0;  // 0: all hardware threads (should match the calibration)
};

// The profiles a case is predicted with: the host always, the SSD tier for out-of-core cases.
struct CaseProfiles {
  models::Profile host;
  std::optional<models::Profile> ssd;
};
// Called right before each measurement, with whether it is out of core: a fixed pair of
// calibrated files, or a fresh calibration (which keeps drift over minutes out of the error).
using ProfileSource = std::function<CaseProfiles(bool out_of_core)>;

std::vector<ValidationCase> run_validation(const ProfileSource& profiles, const ValidationOptions& options,
                                           const std::function<void(const std::string&)>& progress);

}  // namespace luwu::validation
