#pragma once
// `luwusim validate`: the models' prediction of the optimizer step time (the out-of-core CPU
// optimizer of models/host.hpp, the one the simulator uses, fed by a calibrated host and SSD
// profile) beside the real kernel's measured time, for several sizes in memory and out of core.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/profile.hpp"
#include "models/storage.hpp"

namespace luwu::validation {

// In memory: the mixed-precision AdamW cost (28 B/param) over the host's achieved DRAM bandwidth,
// reads and writes sharing it; compute bounded by the host's peak FLOP/s.
double predict_in_memory_step_s(const models::Profile& host, double params);

// Out of core: the state (fp32 master, m, v: 12 B/param) is read from the SSD tier and written
// back while the kernel updates it in DRAM (models::SsdArray::streaming_s: each direction's
// limit and the shared read_write_bandwidth); the pipeline overlaps SSD, DRAM and compute, so the
// step takes the longest of them.
double predict_out_of_core_step_s(const models::Profile& host, const models::Profile& ssd, double params);
double predict_out_of_core_step_s(const models::Profile& host, const models::SsdSpec& ssd, double params);

struct ValidationCase {
  std::string name;       // e.g. "in-memory 64M"
  double params = 0;
  bool out_of_core = false;
  double predicted_s = 0;
  double measured_s = 0;
  double error_pct = 0;   // 100 (predicted - measured) / measured
  double target_pct = 0;  // the accuracy this case is meant to reach: 10 in memory, 20 out of core
  std::string ssd_source;  // out of core: where the SSD rates came from, "profile" or "state files"
  double state_stream_Bps = 0;    // out of core: the state files' in-place stream rate
  double profile_stream_Bps = 0;  // out of core: the SSD profile's rate for the same stream
};

struct ValidationOptions {
  bool quick = false;
  std::string scratch_dir;
  unsigned threads = 0;  // 0: all hardware threads (should match the calibration)
  // Out of core, also predict with the state files' own device rate (their in-place stream
  // measured between steps, for reads, writes and both at once), as a case of its own beside the
  // SSD profile's.  A virtual disk's rate can differ by a factor 2 from one file to the next;
  // pairing keeps that out, so that case tests the pipeline model (SSD, DRAM and compute
  // overlapped) and the profile's case tests the device model as well.
  bool ssd_from_state_files = false;
};

// The profiles a case is predicted with: the host always, the SSD tier for out-of-core cases.
struct CaseProfiles {
  models::Profile host;
  std::optional<models::Profile> ssd;
};
// Called right before each case runs, with whether it is out of core: a fixed pair of calibrated
// files, or a fresh calibration (this machine's DRAM and disk rates drift over minutes; measuring
// them next to the kernel keeps that drift out of the model's error).
using ProfileSource = std::function<CaseProfiles(bool out_of_core)>;

std::vector<ValidationCase> run_validation(const ProfileSource& profiles, const ValidationOptions& options,
                                           const std::function<void(const std::string&)>& progress);

}  // namespace luwu::validation
