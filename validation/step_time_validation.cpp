#include "validation/step_time_validation.hpp"

#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "models/host.hpp"
#include "models/optimizer_cost.hpp"
#include "validation/adam_timing.hpp"

namespace luwu::validation {

namespace {

// The kernels run AdamW (decoupled decay) on fp16 gradients and parameters.
models::OptimizerCost kernel_cost() { return models::adam_mixed_precision_cost({}, /*decoupled_weight_decay=*/true); }

double predict_step_s(const models::Profile& host, const models::SsdSpec* ssd, double params) {
  models::HostSpec spec = models::host_from_profiles(host);
  models::StatePlacement placement;
  if (ssd) {
    spec.ssds = models::SsdArray{*ssd, 1};
    placement = {0, 0, 1};
  }
  return models::cpu_optimizer_step_times(spec, params, kernel_cost(), placement).total_s;
}

}  // namespace

double predict_in_memory_step_s(const models::Profile& host, double params) {
  return predict_step_s(host, nullptr, params);
}

double predict_out_of_core_step_s(const models::Profile& host, const models::SsdSpec& ssd, double params) {
  return predict_step_s(host, &ssd, params);
}

double predict_out_of_core_step_s(const models::Profile& host, const models::Profile& ssd, double params) {
  return predict_out_of_core_step_s(host, models::ssd_from_profile(ssd), params);
}

std::vector<ValidationCase> run_validation(const ProfileSource& profiles, const ValidationOptions& o,
                                           const std::function<void(const std::string&)>& progress) {
  struct Plan {
    std::size_t params;
    bool out_of_core;
    std::size_t dram_buffer_bytes;
  };
  std::vector<Plan> plans;
  if (o.quick)
    plans = {{16u << 20, false, 0}, {32u << 20, false, 0}, {8u << 20, true, 24u << 20}};
  else
    plans = {{16u << 20, false, 0}, {64u << 20, false, 0}, {256u << 20, false, 0}, {64u << 20, true, 96u << 20}};
  const int steps = o.quick ? 3 : 5;
  ThreadPool pool(o.threads != 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency()));

  std::vector<ValidationCase> cases;
  for (const Plan& p : plans) {
    ValidationCase c;
    c.params = static_cast<double>(p.params);
    c.out_of_core = p.out_of_core;
    c.name = fmt::format("{} {}M", p.out_of_core ? "out-of-core" : "in-memory", p.params >> 20);
    c.target_pct = p.out_of_core ? 20 : 10;
    const CaseProfiles use = profiles(p.out_of_core);
    progress("validate: " + c.name);
    if (p.out_of_core) {
      if (!use.ssd) throw std::invalid_argument("validate: an out-of-core case needs an SSD profile");
      const OutOfCoreRun run =
          time_adam_out_of_core(pool, best_isa(), HalfFormat::fp16, o.scratch_dir, p.params,
                                p.dram_buffer_bytes, steps, o.quick ? 2 : 3);
      c.measured_s = run.seconds_per_step;
      c.state_stream_Bps = run.state_stream_Bps;
      c.name += fmt::format(" (file {:.0f} MB, buffer {:.0f} MB)", run.file_bytes / 1e6, run.staging_bytes / 1e6);
      if (o.ssd_from_state_files) {
        // The stream moves reads and writes at once; it bounds each direction and both together.
        models::SsdSpec ssd = models::ssd_from_profile(*use.ssd);
        ssd.read_Bps = ssd.write_Bps = ssd.read_write_Bps = run.state_stream_Bps;
        ValidationCase paired = c;
        paired.ssd_source = "state files";
        paired.name += ", SSD: state files";
        paired.predicted_s = predict_out_of_core_step_s(use.host, ssd, c.params);
        paired.error_pct = 100.0 * (paired.predicted_s - paired.measured_s) / paired.measured_s;
        cases.push_back(paired);
      }
      c.ssd_source = "profile";
      c.name += ", SSD: profile";
      {
        const models::SsdArray device{models::ssd_from_profile(*use.ssd), 1};
        c.profile_stream_Bps = 2.0 / device.streaming_s(1.0, 1.0);
      }
      c.predicted_s = predict_out_of_core_step_s(use.host, *use.ssd, c.params);
    } else {
      c.predicted_s = predict_in_memory_step_s(use.host, c.params);
      c.measured_s = time_adam_in_memory_s(pool, best_isa(), HalfFormat::fp16, p.params, steps);
    }
    c.error_pct = 100.0 * (c.predicted_s - c.measured_s) / c.measured_s;
    cases.push_back(c);
  }
  return cases;
}

}  // namespace luwu::validation
