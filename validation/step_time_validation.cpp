#include "validation/step_time_validation.hpp"

#include <thread>

#include <fmt/format.h>

#include "models/cpu.hpp"
#include "models/optimizer_cost.hpp"
#include "models/storage.hpp"
#include "validation/adam_timing.hpp"

namespace luwu::validation {

namespace {
// The kernels run AdamW (decoupled decay) on fp16 gradients and parameters.
models::OptimizerCost kernel_cost() { return models::adam_mixed_precision_cost({}, /*decoupled_weight_decay=*/true); }
}  // namespace

double predict_in_memory_step_s(const models::Profile& host, double params) {
  const models::CpuSpec cpu = models::cpu_from_profile(host);
  return models::optimizer_update_time_s(params, kernel_cost(), cpu.memory_Bps, cpu.memory_Bps, cpu.flops);
}

double predict_out_of_core_step_s(const models::Profile& host, const models::Profile& ssd, double params) {
  const models::CpuSpec cpu = models::cpu_from_profile(host);
  const models::SsdSpec disk = models::ssd_from_profile(ssd);
  // Only the fp32 state crosses the SSD tier; gradients arrive and parameters leave through DRAM.
  models::OptimizerPrecision state_only;
  state_only.grad_bytes = 0;
  state_only.low_precision_param_bytes = 0;
  const models::OptimizerCost ssd_cost =
      models::adam_mixed_precision_cost(state_only, /*decoupled_weight_decay=*/true);
  const double ssd_s = models::optimizer_update_time_s(params, ssd_cost, disk.read_Bps, disk.write_Bps, cpu.flops);
  return std::max(ssd_s, predict_in_memory_step_s(host, params));
}

std::vector<ValidationCase> run_validation(const models::Profile& host, const models::Profile& ssd,
                                           const ValidationOptions& o,
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
    progress("validate: " + c.name);
    if (p.out_of_core) {
      c.predicted_s = predict_out_of_core_step_s(host, ssd, c.params);
      const OutOfCoreRun run =
          time_adam_out_of_core(pool, best_isa(), HalfFormat::fp16, o.scratch_dir, p.params, p.dram_buffer_bytes, steps);
      c.measured_s = run.seconds_per_step;
      c.name += fmt::format(" (file {:.0f} MB, buffer {:.0f} MB)", run.file_bytes / 1e6, run.staging_bytes / 1e6);
    } else {
      c.predicted_s = predict_in_memory_step_s(host, c.params);
      c.measured_s = time_adam_in_memory_s(pool, best_isa(), HalfFormat::fp16, p.params, steps);
    }
    c.error_pct = 100.0 * (c.predicted_s - c.measured_s) / c.measured_s;
    cases.push_back(c);
  }
  return cases;
}

}  // namespace luwu::validation
