#include "validation/step_time_validation.hpp"

#include <algorithm>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "models/optimizer_cost.hpp"
#include "validation/adam_timing.hpp"
#include "validation/out_of_core_adam.hpp"

namespace luwu::validation {

namespace {

// In-memory cases run this many rounds of (profiles, kernel) back to back and take the medians,
// so that one jump of the DRAM rate between a calibration and a measurement does not decide them.
constexpr int kInMemoryRounds = 3;

// The kernels run AdamW (decoupled decay) on fp16 gradients, widened in registers
// (GradientConversion::in_kernel, the default), and write fp16 parameters.
models::OptimizerCost kernel_cost() { return models::adam_mixed_precision_cost({}, /*decoupled_weight_decay=*/true); }

// How the kernel that runs here stores the fp16 copy-out: the AVX-512 kernel with non-temporal
// stores (its output is page-aligned, validation/adam_kernel_avx512.cpp), so no line is read for
// ownership; the AVX2 and scalar kernels with ordinary stores, so every line is.  A fact of the
// code being validated, not of the host, so it replaces the profile's share.
models::HostSpec as_run_here(models::HostSpec host) {
  host.cpu.optimizer_write_allocate = best_isa() == KernelIsa::avx512 ? 0.0 : 1.0;
  return host;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double error_pct(double predicted, double measured) { return 100.0 * (predicted - measured) / measured; }

}  // namespace

double predict_in_memory_step_s(const models::HostSpec& host, double params) {
  return models::cpu_optimizer_step_times(as_run_here(host), params, kernel_cost(), {1, 0, 0}).total_s;
}

double predict_in_memory_step_s(const models::Profile& host, double params) {
  return predict_in_memory_step_s(models::host_from_profiles(host), params);
}

double predict_out_of_core_step_s(const models::HostSpec& host, double params) {
  return models::cpu_optimizer_step_times(as_run_here(host), params, kernel_cost(), {0, 0, 1}).total_s;
}

double predict_out_of_core_step_s(const models::Profile& host, const models::Profile& ssd, double params) {
  return predict_out_of_core_step_s(models::host_from_profiles(host, &ssd, 1), params);
}

std::size_t OutOfCoreCase::request_bytes() const { return OutOfCoreAdam::request_bytes_for(params, dram_buffer_bytes); }

static std::size_t scaled(std::size_t n, double scale, std::size_t at_least) {
  return std::max(at_least, static_cast<std::size_t>(static_cast<double>(n) * scale));
}

OutOfCoreCase validation_out_of_core_case(bool quick, double size_scale) {
  if (!(size_scale > 0 && size_scale <= 1)) throw std::invalid_argument("validate: the size scale must be in (0, 1]");
  const OutOfCoreCase full = quick ? OutOfCoreCase{8u << 20, 24u << 20} : OutOfCoreCase{64u << 20, 96u << 20};
  // At least 16 blocks of the smallest (12 KiB) staging slot, so the pipeline still streams.
  return {scaled(full.params, size_scale, 16 * 1024), scaled(full.dram_buffer_bytes, size_scale, 4 * 12 * 1024)};
}

std::vector<ValidationCase> run_validation(const ProfileSource& profiles, const ValidationOptions& o,
                                           const std::function<void(const std::string&)>& progress) {
  struct Plan {
    std::size_t params;
    bool out_of_core;
    std::size_t dram_buffer_bytes;
  };
  std::vector<Plan> plans;
  const OutOfCoreCase ooc = validation_out_of_core_case(o.quick, o.size_scale);
  const double k = o.size_scale;
  const std::size_t at_least = 16 * 1024;
  if (o.quick)
    plans = {{scaled(16u << 20, k, at_least), false, 0}, {scaled(32u << 20, k, at_least), false, 0},
             {ooc.params, true, ooc.dram_buffer_bytes}};
  else
    plans = {{scaled(16u << 20, k, at_least), false, 0}, {scaled(64u << 20, k, at_least), false, 0},
             {scaled(256u << 20, k, at_least), false, 0}, {ooc.params, true, ooc.dram_buffer_bytes}};
  const int steps = o.quick ? 3 : 5;
  ThreadPool pool(o.threads != 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency()));

  std::vector<ValidationCase> cases;
  for (const Plan& p : plans) {
    ValidationCase c;
    c.params = static_cast<double>(p.params);
    c.out_of_core = p.out_of_core;
    c.name = fmt::format("{} {:.3g}M", p.out_of_core ? "out-of-core" : "in-memory", static_cast<double>(p.params) / (1 << 20));
    c.target_pct = p.out_of_core ? o.out_of_core_tolerance_pct : o.in_memory_tolerance_pct;
    progress("validate: " + c.name);
    if (p.out_of_core) {
      const CaseProfiles use = profiles(true);
      if (!use.ssd) throw std::invalid_argument("validate: an out-of-core case needs an SSD profile");
      const models::HostSpec host = models::host_from_profiles(use.host, &*use.ssd, 1);
      const OutOfCoreRun run = time_adam_out_of_core(pool, best_isa(), HalfFormat::fp16, o.scratch_dir, p.params,
                                                     p.dram_buffer_bytes, steps, o.quick ? 2 : 3);
      c.name += fmt::format(" (file {:.0f} MB, buffer {:.0f} MB)", run.file_bytes / 1e6, run.staging_bytes / 1e6);
      c.request_bytes = run.request_bytes;
      c.direct_io = run.direct_io;
      c.measured_s = run.seconds_per_step;
      c.predicted_s = predict_out_of_core_step_s(host, c.params);
      c.profile_device_Bps = 2.0 / host.ssds->streaming_s(1.0, 1.0);
      // Paired: the files' stream moves reads and writes at once; it bounds each direction and both.
      models::HostSpec paired = host;
      paired.ssds->count = 1;
      paired.ssds->device.read_Bps = paired.ssds->device.write_Bps = paired.ssds->device.read_write_Bps =
          run.state_stream_Bps;
      c.paired_device_Bps = run.state_stream_Bps;
      c.paired_predicted_s = predict_out_of_core_step_s(paired, c.params);
    } else {
      std::vector<double> predicted, measured, paired_ratio, paired_Bps, profile_Bps;
      for (int round = 0; round < kInMemoryRounds; ++round) {
        const models::HostSpec host = models::host_from_profiles(profiles(false).host);
        const InMemoryRun run = time_adam_in_memory(pool, best_isa(), HalfFormat::fp16, p.params, steps);
        predicted.push_back(predict_in_memory_step_s(host, c.params));
        measured.push_back(run.seconds_per_step);
        profile_Bps.push_back(host.cpu.memory_Bps);
        // Paired step by step: the DRAM rate seconds apart can jump by half, so each step is set
        // against the passes on either side of it.
        for (std::size_t i = 0; i < run.step_s.size(); ++i) {
          models::HostSpec paired = host;
          paired.cpu.memory_Bps = run.state_read_modify_write_Bps[i];
          paired_ratio.push_back(predict_in_memory_step_s(paired, c.params) / run.step_s[i]);
          paired_Bps.push_back(run.state_read_modify_write_Bps[i]);
        }
      }
      c.predicted_s = median(predicted);
      c.measured_s = median(measured);
      c.paired_predicted_s = c.measured_s * median(paired_ratio);
      c.paired_device_Bps = median(paired_Bps);
      c.profile_device_Bps = median(profile_Bps);
    }
    c.error_pct = error_pct(c.predicted_s, c.measured_s);
    c.paired_error_pct = error_pct(c.paired_predicted_s, c.measured_s);
    c.passed = within_tolerance(c.error_pct, c.target_pct);
    c.paired_passed = within_tolerance(c.paired_error_pct, c.target_pct);
    cases.push_back(c);
  }
  return cases;
}

}  // namespace luwu::validation
