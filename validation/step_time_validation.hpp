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
#include <cmath>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/host.hpp"
#include "models/profile.hpp"

namespace luwu::validation {

// In memory: the mixed-precision AdamW cost (28 B/param, plus 2 B read for ownership of the fp16
// copy-out's lines where the kernel run here stores them normally: AVX2 and scalar, not AVX-512's
// non-temporal stores) over the host's DRAM rate, reads and writes sharing it; compute bounded by
// the host's peak FLOP/s.
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
  double target_pct = 0;          // the tolerance it is judged against (ValidationOptions), in percent
  bool passed = false;            // |error_pct| <= target_pct
  bool paired_passed = false;     // |paired_error_pct| <= target_pct
  double request_bytes = 0;       // out of core: each read and write of the state file
  bool direct_io = false;         // out of core: the state file was opened with O_DIRECT
};

// Default tolerances of the verdicts: an in-memory step is one DRAM stream, predicted to 10%; out
// of core a disk's rate varies more from file to file, so 20%.
inline constexpr double kDefaultInMemoryTolerancePct = 10;
inline constexpr double kDefaultOutOfCoreTolerancePct = 20;

struct ValidationOptions {
  bool quick = false;
  std::string scratch_dir;
  unsigned threads = 0;  // 0: all hardware threads (should match the calibration)
  double in_memory_tolerance_pct = kDefaultInMemoryTolerancePct;
  double out_of_core_tolerance_pct = kDefaultOutOfCoreTolerancePct;
  double size_scale = 1;  // in (0, 1]: every case's parameters and staging buffer times this (smoke tests)
};

// |error| within the tolerance (both in percent).
inline bool within_tolerance(double error_pct, double tolerance_pct) { return std::fabs(error_pct) <= tolerance_pct; }

// The out-of-core case validate runs (quick or not): its parameters, its staging buffer, and so
// the size of each request it makes (OutOfCoreAdam::request_bytes_for), which calibration measures
// the disk with.
struct OutOfCoreCase {
  std::size_t params;
  std::size_t dram_buffer_bytes;
  std::size_t request_bytes() const;
  std::size_t file_bytes() const { return 12 * params; }  // fp32 master, m, v
};
OutOfCoreCase validation_out_of_core_case(bool quick, double size_scale = 1);

// The profiles a case is predicted with: the host always, the SSD tier for out-of-core cases.
struct CaseProfiles {
  models::Profile host;
  std::optional<models::Profile> ssd;
};
// Called right before each measurement, with whether it is out of core: a fixed pair of
// calibrated files, or a fresh calibration (which keeps drift over minutes out of the error; it
// measures the disk with the out-of-core case's own request and file sizes).
using ProfileSource = std::function<CaseProfiles(bool out_of_core)>;

std::vector<ValidationCase> run_validation(const ProfileSource& profiles, const ValidationOptions& options,
                                           const std::function<void(const std::string&)>& progress);

}  // namespace luwu::validation
