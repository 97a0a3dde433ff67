#pragma once
// `luwusim validate`: the models' prediction of the optimizer step time (models/optimizer_cost.hpp
// fed by a calibrated host and SSD profile) beside the real kernel's measured time, for several
// sizes in memory and out of core.
#include <functional>
#include <string>
#include <vector>

#include "models/profile.hpp"

namespace luwu::validation {

// In memory: the mixed-precision AdamW cost (28 B/param) over the host's achieved DRAM bandwidth,
// reads and writes sharing it; compute bounded by the host's peak FLOP/s.
double predict_in_memory_step_s(const models::Profile& host, double params);

// Out of core: the state (fp32 master, m, v: 12 B/param read and 12 written) streams through the
// SSD tier while the kernel updates it in DRAM; the pipeline overlaps the two, so the step takes
// the longer of the SSD time and the in-memory step time.
double predict_out_of_core_step_s(const models::Profile& host, const models::Profile& ssd, double params);

struct ValidationCase {
  std::string name;       // e.g. "in-memory 64M"
  double params = 0;
  bool out_of_core = false;
  double predicted_s = 0;
  double measured_s = 0;
  double error_pct = 0;   // 100 (predicted - measured) / measured
  double target_pct = 0;  // the accuracy this case is meant to reach: 10 in memory, 20 out of core
};

struct ValidationOptions {
  bool quick = false;
  std::string scratch_dir;
  unsigned threads = 0;  // 0: all hardware threads (should match the calibration)
};

std::vector<ValidationCase> run_validation(const models::Profile& host, const models::Profile& ssd,
                                           const ValidationOptions& options,
                                           const std::function<void(const std::string&)>& progress);

}  // namespace luwu::validation
