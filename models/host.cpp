#include "models/host.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace luwu::models {

HostSpec host_from_profiles(const Profile& host, const Profile* ssd, int ssd_count, const Profile* cxl,
                            const Profile* gpu, int gpu_count) {
  HostSpec h;
  h.name = host.name;
  h.cpu = cpu_from_profile(host);
  h.dram = memory_from_profile(host);
  if (has_node_thread_rates(host)) h.thread_rates = node_thread_rates_from_profile(host);
  h.nccl_host_staged_Bps = host.get_or("nccl_host_staged_bandwidth", 0);
  h.eager_kernel_launch_s = host.get_or("eager_kernel_launch_time", 0);
  if (ssd) {
    if (ssd_count < 1) throw std::invalid_argument("host \"" + host.name + "\": an SSD tier needs at least one device");
    h.ssds = SsdArray{ssd_from_profile(*ssd), ssd_count};
  }
  if (cxl) {
    require_kind(*cxl, {"memory"});
    h.cxl = memory_from_profile(*cxl);
    h.cxl_devices = 1;
  }
  if (gpu) {
    if (gpu_count < 1) throw std::invalid_argument("host \"" + host.name + "\": a GPU needs a count of at least one");
    h.gpu = gpu_from_profile(*gpu);
    h.gpu_count = gpu_count;
  }
  return h;
}

OptimizerStepTimes cpu_optimizer_step_times(const HostSpec& host, double params, const OptimizerCost& cost,
                                            const StatePlacement& placement) {
  const StatePlacement& p = placement;
  if (p.dram_share < 0 || p.cxl_share < 0 || p.ssd_share < 0 ||
      std::fabs(p.dram_share + p.cxl_share + p.ssd_share - 1) > 1e-9)
    throw std::invalid_argument("optimizer state placement shares must be non-negative and sum to 1");
  if (p.ssd_share > 0 && !host.ssds) throw std::invalid_argument("host \"" + host.name + "\" has no SSD tier");
  if (p.cxl_share > 0 && !host.cxl) throw std::invalid_argument("host \"" + host.name + "\" has no CXL memory tier");

  const double state = cost.state_bytes_per_param;
  OptimizerStepTimes t;
  if (p.ssd_share > 0)
    t.ssd_s = host.ssds->streaming_s(params * p.ssd_share * state, params * p.ssd_share * state);
  if (p.cxl_share > 0) t.cxl_s = params * p.cxl_share * state * 2 / host.cxl->achieved_Bps();
  const double dram_bytes = cost.bytes_read_per_param + cost.bytes_written_per_param +
                            host.cpu.optimizer_write_allocate * cost.bytes_written_unread_per_param -
                            2 * p.cxl_share * state + 2 * p.ssd_share * state;
  t.dram_s = params * dram_bytes / host.cpu.optimizer_memory_Bps();
  t.compute_s = params * cost.flops_per_param / host.cpu.flops;
  t.total_s = std::max({t.dram_s, t.cxl_s, t.ssd_s, t.compute_s});
  return t;
}

}  // namespace luwu::models
