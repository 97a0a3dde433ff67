// Deep Optimizer States (arXiv 2410.21316): a CPU-offloaded optimizer whose update phase is split
// into subgroups, each updated either on the CPU (its state stays in host memory: the gradient
// came down in backward, the CPU steps it, the 16-bit parameters go back up) or on the GPU (its
// fp32 master, m, v and gradient go up into the GPU memory the activations left free after
// backward, the GPU steps it, the state goes back down), chosen per iteration by a performance
// model of the trade-off between moving the state, the GPU's speed-up over the CPU and the PCIe
// traffic both kinds of subgroups share (deep_optimizer_states.hpp: InterleavePlan).
//
// The forward and backward are ZeRO-Offload's (zero_offload/schedule.hpp: buckets reduce-scattered
// under backward, each rank's gradient shard copied to host memory), as the paper builds on
// DeepSpeed's CPU-offloaded optimizer; only the update differs.  The CPU subgroups run one after
// another on the server's CPU (shared with its other ranks) while the GPU subgroups stream through
// two GPU buffers (one updating while the next one's state comes up); both kinds' PCIe copies share
// the GPU's path to the host in the simulation.  Then the GPUs all-gather the updated parameters.
#include "sim/systems/deep_optimizer_states/deep_optimizer_states.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/host.hpp"
#include "sim/engine/stream.hpp"
#include "sim/engine/transfers.hpp"
#include "sim/systems/model_state.hpp"
#include "sim/systems/zero_offload/schedule.hpp"

namespace luwu::sim {

double interleave_time_s(const InterleavePlan& r, double f, double params) {
  const double B = r.pcie_Bps;
  return params * std::max({(1 - f) * r.cpu_s_per_param, f * r.gpu_s_per_param,
                            (r.a_bytes * (1 - f) + r.u_bytes * f) / B, r.d_bytes * f / B});
}

InterleavePlan plan_interleaving(const DeepOptimizerStatesSettings& s, InterleavePlan p, double shard_params,
                                 double gpu_free_bytes) {
  p.subgroups = std::max(1, static_cast<int>(std::ceil(shard_params / s.sub_group_size)));
  const double c = p.cpu_s_per_param, g = p.gpu_s_per_param, B = p.pcie_Bps;
  if (s.gpu_share) {
    p.share = *s.gpu_share;
  } else if (B > 0) {
    const double f = std::min({c / (c + g), (c - p.a_bytes / B) / (c + (p.u_bytes - p.a_bytes) / B),
                               c / (c + p.d_bytes / B)});
    p.share = std::clamp(f, 0.0, 1.0);
  } else {
    p.share = 0;
    p.note = "no PCIe path from the GPU to its host found: every subgroup on the CPU";
  }
  const double buffers_bytes = 2 * p.u_bytes * std::min(s.sub_group_size, shard_params);
  if (p.share > 0 && buffers_bytes > gpu_free_bytes) {
    p.note = "two subgroups' state (" + std::to_string(buffers_bytes / 1e9) + " GB) do not fit the " +
             std::to_string(gpu_free_bytes / 1e9) + " GB of GPU memory free for it: every subgroup on the CPU";
    p.share = 0;
  }
  p.on_gpu.assign(p.subgroups, false);
  p.gpu_subgroups = 0;
  for (int i = 0; i < p.subgroups; ++i) {
    p.on_gpu[i] = std::llround((i + 1) * p.share) > std::llround(i * p.share);
    p.gpu_subgroups += p.on_gpu[i] ? 1 : 0;
  }
  p.predicted_s = B > 0 ? interleave_time_s(p, p.share, shard_params) : shard_params * c;
  return p;
}

namespace {

class DeepOptimizerStatesSchedule : public ZeroOffloadSchedule {
 public:
  DeepOptimizerStatesSchedule(const DeepOptimizerStatesSettings& settings, const models::StatePlacement& placement,
                              InterleavePlan plan)
      : ZeroOffloadSchedule(settings.offload, placement), sub_group_size_(settings.sub_group_size), plan_(std::move(plan)) {}

 protected:
  Update update_shard(RankEnv& env, double shard_params, const CompletionPtr& gradients_on_host, Stream& cpu_stream,
                      Stream& upload_stream) override {
    GpuDevice& gpu = env.gpu;
    Timeline* tl = &env.cluster.timeline;
    Stream state_up(gpu.name(), "optimizer state to gpu (pcie)", "io", gpu.host(), tl);
    Stream state_down(gpu.name(), "optimizer state to host (pcie)", "io", gpu.host(), tl);
    const double a = plan_.a_bytes, u = plan_.u_bytes, d = plan_.d_bytes;
    auto size_of = [&](int i) { return std::min(sub_group_size_, shard_params - i * sub_group_size_); };

    // CPU subgroups, in order on the server's CPU, each one's 16-bit parameters up after its step.
    Update done{gradients_on_host, gradients_on_host};
    std::vector<int> on_gpu;
    for (int i = 0; i < plan_.subgroups; ++i) {
      if (plan_.on_gpu[i]) {
        on_gpu.push_back(i);
        continue;
      }
      const double params = size_of(i), up_bytes = a * params;
      const std::string name = "sub-group " + std::to_string(i);
      done.stepped = cpu_stream.enqueue(
          "adam step on cpu " + name, [this, &env, params] { cpu_step(env, params); }, {gradients_on_host});
      done.uploaded = upload_stream.enqueue(
          "parameters to gpu " + name,
          [&env, up_bytes] { transfer(env.hosts.cpu, env.gpu.host(), up_bytes, env.cluster.traffic); }, {done.stepped});
    }

    // GPU subgroups, in this actor: state up (into one of two buffers, free once the subgroup two
    // before has gone back down), Adam on the GPU, state down.
    std::vector<CompletionPtr> up(on_gpu.size()), down(on_gpu.size());
    auto send_up = [&](std::size_t k) {
      const double bytes = u * size_of(on_gpu[k]);
      std::vector<CompletionPtr> deps{gradients_on_host};
      if (k >= 2) deps.push_back(down[k - 2]);
      up[k] = state_up.enqueue(
          "optimizer state to gpu sub-group " + std::to_string(on_gpu[k]),
          [&env, bytes] { transfer(env.hosts.cpu, env.gpu.host(), bytes, env.cluster.traffic); }, deps);
    };
    if (!on_gpu.empty()) send_up(0);
    for (std::size_t k = 0; k < on_gpu.size(); ++k) {
      if (k + 1 < on_gpu.size()) send_up(k + 1);
      const double params = size_of(on_gpu[k]), down_bytes = d * params;
      const std::string name = "sub-group " + std::to_string(on_gpu[k]);
      gpu.wait(up[k], WaitCause::Io, "optimizer state to gpu");
      gpu.optimizer_step("adam step on gpu " + name, env.gpu_optimizer_time_s(params));
      down[k] = state_down.enqueue(
          "optimizer state to host " + name,
          [&env, down_bytes] { transfer(env.gpu.host(), env.hosts.cpu, down_bytes, env.cluster.traffic); });
    }
    if (!down.empty()) gpu.wait(down.back(), WaitCause::Io, "optimizer state to host");
    return done;
  }

 private:
  double sub_group_size_;
  InterleavePlan plan_;
};

class DeepOptimizerStates : public System {
 public:
  DeepOptimizerStates(const SystemEntry& entry, DeepOptimizerStatesSettings settings)
      : System(entry), settings_(std::move(settings)) {}

  // ZeRO-Offload's: the GPU subgroups' state borrows, in the update phase, memory that the
  // activations held in forward and backward (at most gpu_memory_fraction of what is free then),
  // so the peak is forward's and backward's.
  MemoryFootprint memory_footprint(const workloads::Trace& trace, int workers, double gpu_memory) const override {
    return zero_offload_footprint(settings_.offload, trace, workers, gpu_memory, name());
  }

  std::string capacity_problem(const workloads::Trace& trace, const Hardware& hw) const override {
    const auto host = zero_offload_host_bytes(settings_.offload, trace, hw);
    return place_host_state(settings_.offload.placement, hw.worker_host, host.state, host.other).problem;
  }

  CollectiveSettings collectives() const override { return settings_.offload.collectives; }
  // ZeRO-Offload's reasons (zero_offload.cpp), and its plan sizes the shard by the group's D.
  bool folds_data_parallel() const override { return true; }
  bool sends_only_collectives_across_servers() const override { return true; }

  std::unique_ptr<Schedule> make_schedule(ClusterEnv& env) const override {
    const auto& trace = env.trace;
    const auto& hw = env.hw;
    const auto host = zero_offload_host_bytes(settings_.offload, trace, hw);
    const auto placed = place_host_state(settings_.offload.placement, hw.worker_host, host.state, host.other);
    const auto bytes = model_state_bytes(trace.training.dtype);
    InterleavePlan rates;
    rates.a_bytes = static_cast<double>(bytes.param);
    rates.d_bytes = static_cast<double>(bytes.optimizer);
    rates.u_bytes = rates.d_bytes + (settings_.offload.fp32_gradient_copy ? 4.0 : static_cast<double>(bytes.grad));
    rates.cpu_s_per_param =
        hw.gpus_per_server *
        models::cpu_optimizer_step_times(hw.worker_host, 1,
                                         deepspeed_offloaded_step_dram_cost(trace.training.dtype, DeepSpeedStage::OneOrTwo),
                                         placed.shares)
            .total_s;
    rates.gpu_s_per_param = models::optimizer_update_time_s(1, adam_cost(trace.training.dtype), hw.gpu.achieved_hbm_Bps(),
                                                            hw.gpu.achieved_hbm_Bps(), hw.gpu.peak_fp32_flops);
    rates.pcie_Bps = hw.gpu_host_Bps;
    // A rank's shard is 1/D of the model over its data-parallel group (the group a fold stands for,
    // and, with model parallelism, not the cluster's GPUs: `trace` is then one stage's share).
    const int group = env.data_parallel_size();
    const auto f = memory_footprint(trace, group, hw.gpu.hbm_bytes);
    const double free_bytes =
        std::max(0.0, hw.gpu.hbm_bytes - static_cast<double>(f.gpu_total_bytes() - f.gpu_activation_bytes));
    const double shard = static_cast<double>(trace.total_params()) / group;
    return std::make_unique<DeepOptimizerStatesSchedule>(
        settings_, placed.shares,
        plan_interleaving(settings_, rates, shard, settings_.gpu_memory_fraction * free_bytes));
  }

 private:
  DeepOptimizerStatesSettings settings_;
};

}  // namespace

SystemPtr parse_deep_optimizer_states(const SystemEntry& entry) {
  entry.only_settings(setting_keys(
      {{"sub_group_size", "gpu_share", "gpu_memory_fraction"}, ZeroOffloadSettings::keys(/*with_delayed_update*/ false)}));
  DeepOptimizerStatesSettings s;
  s.offload = ZeroOffloadSettings::parse(entry, /*with_delayed_update*/ false);
  if (entry.has("sub_group_size")) {
    const JsonNode node = entry.at("sub_group_size");
    s.sub_group_size = node.as_positive();
    if (s.sub_group_size < 1e5) node.fail("expected at least 1e5 parameters per subgroup");
  }
  if (entry.has("gpu_share")) {
    const JsonNode node = entry.at("gpu_share");
    if (node.is_string()) {
      if (node.as_string() != "auto") node.fail("expected \"auto\" or a share of the subgroups in [0, 1]");
    } else {
      const double share = node.as_non_negative();
      if (share > 1) node.fail("expected \"auto\" or a share of the subgroups in [0, 1]");
      s.gpu_share = share;
    }
  }
  if (entry.has("gpu_memory_fraction")) {
    const JsonNode node = entry.at("gpu_memory_fraction");
    s.gpu_memory_fraction = node.as_non_negative();
    if (s.gpu_memory_fraction > 1) node.fail("expected a fraction in [0, 1]");
  }
  return std::make_shared<DeepOptimizerStates>(entry, s);
}

}  // namespace luwu::sim
