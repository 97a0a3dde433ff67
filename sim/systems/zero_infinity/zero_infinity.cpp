// ZeRO-Infinity (DeepSpeed stage 3 with parameters and optimizer state offloaded to NVMe or DRAM).
//
// Forward and backward, per gather of the stage-3 coordinator (param_fetch_plan.hpp: sub-modules,
// prefetched as DeepSpeed does, or layers): each GPU reads its 1/N shard of the parameters from
// NVMe into host memory (a few gathers ahead, as DeepSpeed's swapper does) and copies it over its
// own PCIe when the gather is issued (bandwidth-centric partitioning: all PCIe links work in
// parallel), then the shards are all-gathered over the network (a shard's copy waits for the
// gathers before it: shard_copies).  Backward reduce-scatters each layer's gradient, copies the
// shard to host memory and back (DeepSpeed's 16-bit gradient partitions live on the host) and
// then, as fp32, to host memory again, the GPU idle meanwhile (gradient_copies); with the optimizer on
// NVMe the shard then goes to NVMe.  All-gathers and reduce-scatters share one
// collective stream in issue order unless "collective_streams" is "separate" (gpu_collective.hpp).
// After backward the CPU optimizer updates the P/N parameters of the rank: on NVMe it streams
// fp32 master, m, v and gradient through DRAM in sub-groups (read -> update -> write back, in
// DeepSpeed's order: swapper_policy) and writes the fp16 parameters back for the next iteration.
// Optionally, activation checkpoints go to host memory after forward and come back before
// recompute.
#include "sim/systems/zero_infinity/zero_infinity.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "models/host.hpp"
#include "sim/engine/stream.hpp"
#include "sim/systems/gpu_collective.hpp"
#include "sim/systems/model_state.hpp"
#include "sim/systems/out_of_core_pipeline.hpp"
#include "sim/systems/param_fetch_replay.hpp"
#include "sim/systems/stage3_gradient_passes.hpp"
#include "sim/systems/zero3/schedule.hpp"
#include "sim/engine/transfers.hpp"

namespace luwu::sim {
namespace {

using Tier = ZeroInfinitySettings::Tier;
constexpr double kFp32GradientBytes = 4;  // DeepSpeed swaps gradients as fp32 (fp32_partitioned_groups_flat's .grad)

// The largest sub-group of a rank's shard: the swapper's buffers and the shared fp32 gradient are
// sized by it.
std::uint64_t largest_sub_group(const SwapperSettings& s, std::uint64_t shard) {
  return std::min(shard, static_cast<std::uint64_t>(s.sub_group_size));
}

// What DeepSpeed keeps on NVMe per parameter of a shard: the 16-bit parameter (the parameter
// swapper's files), the fp32 master, m and v (the optimizer swapper's), and the fp32 gradient that
// backward swaps out for the step (stage3.py partition_grads -> swap_out_gradients).
std::uint64_t nvme_state_bytes_per_param(workloads::DType dtype) {
  const auto bytes = model_state_bytes(dtype);
  return bytes.param + bytes.optimizer + static_cast<std::uint64_t>(kFp32GradientBytes);
}

// A rank's server's drives as the two swappers use them (swap_drive_counts; the schedule refuses a
// split of fewer than 2 drives before it gets here).
struct SwapDrives {
  std::vector<simgrid::s4u::Disk*> params, optimizer;
};
SwapDrives swap_drives(SwapperSettings::NvmeLayout layout, const std::vector<simgrid::s4u::Disk*>& nvme) {
  if (layout == SwapperSettings::NvmeLayout::Striped) return {nvme, nvme};
  const auto cut = nvme.begin() + swap_drive_counts(layout, static_cast<int>(nvme.size())).params;
  return {{nvme.begin(), cut}, {cut, nvme.end()}};
}

class ZeroInfinitySchedule : public Schedule {
 public:
  ZeroInfinitySchedule(const ZeroInfinitySettings& settings, ClusterEnv& env, const models::StatePlacement& placement)
      : settings_(settings),
        plan_(plan_param_fetches(env.trace, swapper_fetch_settings(settings, env.trace, env.data_parallel_size()))),
        placement_(placement) {
    if (settings.offload != Tier::Nvme) return;
    for (const auto& r : env.roles.ranks)
      if (r.nvme.empty())
        throw std::invalid_argument("zero-infinity with offload \"nvme\" needs NVMe SSDs on every worker server");
    if (!env.hw.worker_host.ssds) throw std::invalid_argument("zero-infinity with offload \"nvme\": the worker host has no SSD spec");
    const models::SsdArray& ssds = *env.hw.worker_host.ssds;
    const SwapDriveCounts drives = swap_drive_counts(settings.swapper.nvme_layout, ssds.count);
    if (drives.params == 0)
      throw std::invalid_argument(fmt::format(
          "zero-infinity with nvme_layout \"split\" needs at least 2 SSDs per worker server, has {}", ssds.count));
    // Each swapper has its own aio queue (aio_handle), spread over the drives its files are on.
    param_policy_ = swapper_policy(settings.swapper, models::SsdArray{ssds.device, drives.params});
    policy_ = swapper_policy(settings.swapper, models::SsdArray{ssds.device, drives.optimizer});
  }

  void run_rank(RankEnv& env) override {
    GpuDevice& gpu = env.gpu;
    const auto& trace = env.trace();
    const auto& ops = trace.ops;
    const int world = env.data_parallel_size();  // the shards are the whole group's
    const bool on_nvme = settings_.offload == Tier::Nvme;
    const SwapDrives drives = swap_drives(settings_.swapper.nvme_layout, env.hosts.nvme);
    Timeline* tl = &env.cluster.timeline;
    Stream fetch_stream(gpu.name(), "param fetch (pcie)", "io", gpu.host(), tl);
    const bool one = settings_.stage3.streams.one_stream;
    Stream gather_stream(gpu.name(), one ? "collectives" : "all-gather", "communication", gpu.host(), tl);
    std::optional<Stream> reduce_own;  // its own stream only when asked for
    if (!one) reduce_own.emplace(gpu.name(), "reduce-scatter", "communication", gpu.host(), tl);
    Stream& reduce_stream = one ? gather_stream : *reduce_own;
    Stream offload_stream(gpu.name(), "offload to host (pcie)", "io", gpu.host(), tl);
    CheckpointOffload checkpoints(env, settings_.checkpoints, offload_stream, fetch_stream);

    // A gather's shard comes from NVMe (or DRAM) over this GPU's PCIe, then every shard is gathered.
    // A recompute's checkpoint is brought back when its op's first gather is issued.
    const double element = workloads::bytes_per_element(trace.training.dtype);
    auto shard_bytes = [&](std::size_t g) { return static_cast<double>(plan_.gathers[g].params) * element / world; };
    auto gather_label = [&](std::size_t g) { return param_use_label(trace, plan_, plan_.gathers[g].first_use); };
    // On NVMe, DeepSpeed's swapper reads shards ahead of the all-gathers where the plan says
    // (ParamFetchSettings::nvme_param_buffers: __prefetch_nvme_param_partitions after each use's
    // prefetches), or when the gather is issued if its shard was not read ahead.
    Stream swap_in_stream(gpu.name(), "param swap-in (nvme)", "io", gpu.host(), tl);
    std::vector<CompletionPtr> swapped_in(plan_.gathers.size());
    std::vector<std::size_t> read_order(plan_.gathers.size(), 0);
    std::size_t reads_issued = 0, reads_synchronized = 0;  // reads before the latter are available
    CompletionPtr last_read = completed();
    auto swap_in = [&](std::size_t g) {
      if (!on_nvme || swapped_in[g] || plan_.gathers[g].nvme_params == 0) return;
      const double shard = static_cast<double>(plan_.gathers[g].nvme_params) * element / world;
      swapped_in[g] = swap_in_stream.enqueue("param swap-in " + gather_label(g), [&env, &drives, shard, this] {
        read_striped(drives.params, shard, env.cluster.traffic, param_policy_.read_rate_cap_Bps);
      });
      read_order[g] = reads_issued++;
      last_read = swapped_in[g];
    };
    // A gather whose shard is not yet available waits for every read pending, not only its own
    // (partition_parameters.py _ensure_availability_of_partitioned_params -> swapper
    // synchronize_reads: aio_read_handle.wait()), which makes them all available.
    auto read_done = [&](std::size_t g) -> CompletionPtr {
      if (!swapped_in[g] || read_order[g] < reads_synchronized) return nullptr;
      reads_synchronized = reads_issued;
      return last_read;
    };
    CompletionPtr last_gathered = completed();
    ParamFetchReplay replay(env, plan_, [&](std::size_t g) {
      swap_in(g);  // read on demand, unless read ahead
      const double shard = shard_bytes(g);
      const double bytes = shard * world;
      const std::string label = gather_label(g);
      const CompletionPtr read = read_done(g);
      std::vector<CompletionPtr> before_copy;
      if (read) before_copy.push_back(read);
      if (settings_.blocking_shard_copies) before_copy.push_back(last_gathered);
      ParamFetchReplay::Issued issued;
      issued.fetched = fetch_stream.enqueue(
          "shard to gpu " + label, [&env, shard] { transfer(env.hosts.cpu, env.gpu.host(), shard, env.cluster.traffic); },
          before_copy);
      issued.gathered = enqueue_gpu_collective(gather_stream, env, CollectiveOp::AllGather, "zinf-ag", bytes,
                                               "all-gather " + label, {issued.fetched});
      // The synchronous .to() holds the host thread until the shard is on the GPU, so the kernels
      // of the sub-module whose hook issued this gather launch after its all-gather was queued
      // (which then takes its SMs beside them).  The copy waits for the gather before it first.
      if (settings_.blocking_shard_copies) {
        env.gpu.host_wait(last_gathered, WaitCause::Communication, "previous all-gather (host blocked in the copy of " + label + ")");
        if (read) env.gpu.host_wait(read, WaitCause::Io, "param swap-ins pending (host blocked) " + label);
        env.gpu.host_wait(issued.fetched, WaitCause::Io, "shard to gpu (host blocked in the synchronous copy) " + label);
      }
      last_gathered = issued.gathered;
      checkpoints.fetch_back(plan_.uses[plan_.gathers[g].first_use].op);
      return issued;
    }, "all-gather", ParamFetchReplay::GatherWait::AllIssued);
    replay.hook_host_times(settings_.stage3.fetch);
    // The reads ahead, at the uses the plan issues them.
    std::vector<std::vector<std::size_t>> read_ahead(plan_.uses.size());
    if (on_nvme)
      for (std::size_t g = 0; g < plan_.gathers.size(); ++g)
        if (plan_.gathers[g].nvme_params > 0 && !plan_.gathers[g].read_on_demand)
          read_ahead[plan_.gathers[g].read_at].push_back(g);
    replay.after_prefetches([&](std::size_t use) {
      for (std::size_t g : read_ahead[use]) swap_in(g);
    });

    // With the optimizer on NVMe, DeepSpeed swaps each fp32 gradient partition out to NVMe in
    // backward (stage3.py partition_grads -> optimizer_swapper.swap_out_gradients) and the step
    // reads it back with its sub-group's state.
    Stream swap_out_stream(gpu.name(), "gradient swap-out (nvme)", "io", gpu.host(), tl);
    CompletionPtr offloaded = completed(), swapped_out = completed();
    // DeepSpeed's own passes over each gradient before and after its reduce-scatter
    // (stage3_gradient_passes.hpp); the copies below follow them.
    Stage3GradientPasses passes(env, settings_.stage3.gradients, world, /*offloaded=*/true);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const auto& op = ops[i];
      const std::string label = op_label(trace, op);
      checkpoints.fetch_back(i);  // when no gather brought it back earlier
      checkpoints.wait_before_compute(i);
      replay.compute(i);

      if (auto sent = checkpoints.after_compute(i)) offloaded = sent;
      if (op.kind == workloads::OpKind::Backward && op.grad_bytes > 0) {
        const double bytes = static_cast<double>(op.grad_bytes);
        const bool boundary = op.micro_step == trace.training.grad_accum - 1;
        const CompletionPtr scattered = enqueue_gpu_collective(reduce_stream, env, CollectiveOp::ReduceScatter, "zinf-rs",
                                                               bytes, "reduce-scatter " + label, passes.before_reduce(i, label));
        const CompletionPtr reduced = passes.after_reduce(i, scattered, label);
        const double partition_bytes = bytes / world;
        // stage3.py partition_grads, in order on the reduce stream: the shard goes into the
        // host's grad_partitions_flat_buffer and back to the GPU (non_blocking copies, "to speed up
        // the next few operations"; later micro-steps accumulate into it the same way), and at the
        // accumulation boundary only, as fp32 (.float()), to pinned host memory with a synchronous
        // copy: the gradient swapper's buffer with "nvme", the fp32 gradient with "dram".
        const double fp32_bytes = boundary ? partition_bytes * kFp32GradientBytes / element : 0;
        offloaded = offload_stream.enqueue(
            "gradient shard to host " + label,
            [&env, partition_bytes, fp32_bytes] {
              transfer(env.gpu.host(), env.hosts.cpu, partition_bytes, env.cluster.traffic);
              transfer(env.hosts.cpu, env.gpu.host(), partition_bytes, env.cluster.traffic);
              if (fp32_bytes > 0) transfer(env.gpu.host(), env.hosts.cpu, fp32_bytes, env.cluster.traffic);
            },
            {reduced});
        if (settings_.blocking_gradient_copies && boundary) {
          gpu.host_wait(scattered, WaitCause::Communication, "reduce-scatter " + label + " (host blocked in the gradient copy)");
          gpu.host_wait(reduced, WaitCause::Io, "gradient partition checks " + label + " (host blocked in the gradient copy)");
          gpu.host_wait(offloaded, WaitCause::Io, "gradient shard to host (blocking copy) " + label);
        }
        if (on_nvme && boundary) {
          // The last micro-step's shard, as fp32, to the optimizer's swap files.
          swapped_out = swap_out_stream.enqueue(
              "gradient swap-out " + label,
              [&env, &drives, fp32_bytes, this] {
                write_striped(drives.optimizer, fp32_bytes, env.cluster.traffic, policy_.write_rate_cap_Bps);
              },
              {offloaded});
        }
      }
    }
    // The host runs the step: it waits for every gradient first.
    gpu.host_wait(offloaded, WaitCause::Io, "gradient shards to host");
    gpu.host_wait(swapped_out, WaitCause::Io, "gradient swap-out to nvme");
    cpu_step(env, drives, static_cast<double>(trace.total_params()) / world);
  }

 private:
  // The CPU optimizer over the rank's shard.  In DRAM, one pass.  On NVMe, sub-groups read ->
  // update -> write back, overlapped as pipeline_read / pipeline_write allow (swapper_policy).
  void cpu_step(RankEnv& env, const SwapDrives& drives, double params) const {
    const auto& host = env.cluster.hw.worker_host;
    const auto cost = deepspeed_cpu_adam_cost(env.trace().training.dtype);
    const bool on_nvme = settings_.offload == Tier::Nvme;
    const auto dram_cost = deepspeed_offloaded_step_dram_cost(env.trace().training.dtype, DeepSpeedStage::Three);
    auto update_s = [&](double p) {
      const auto t = models::cpu_optimizer_step_times(host, p, dram_cost, on_nvme ? models::StatePlacement{0, 0, 1}
                                                                                    : placement_);
      return std::max({t.dram_s, t.cxl_s, t.compute_s});  // the SSD part is simulated as disk I/O
    };
    if (!on_nvme) {
      Stream cpu(env.gpu.name(), "cpu optimizer", "optimizer", env.hosts.cpu, &env.cluster.timeline);
      const double seconds = update_s(params);
      env.gpu.host_wait(cpu.enqueue("adam step on cpu", [&env, seconds] { execute_on(env.hosts.cpu, seconds); }),
                   WaitCause::Optimizer, "cpu optimizer");
      return;
    }
    OutOfCorePipeline swapper(env.gpu.name(), env.hosts.cpu, drives.optimizer, policy_, env.cluster.traffic,
                              &env.cluster.timeline);
    // With the drives split, the 16-bit parameters go to the parameter swapper's drives beside the
    // state's write-back (their swap-out is asynchronous, waited for at the next sub-group's).
    const bool split = settings_.swapper.nvme_layout == SwapperSettings::NvmeLayout::Split;
    const double param_bytes = cost.bytes_written_per_param - cost.state_bytes_per_param;
    std::optional<Stream> param_out;  // its own stream only when split
    if (split) param_out.emplace(env.gpu.name(), "param swap-out (nvme)", "io", env.hosts.cpu, &env.cluster.timeline);
    std::vector<CompletionPtr> params_written;
    const double chunk = std::min(settings_.swapper.sub_group_size, params);
    const int chunks = static_cast<int>(std::ceil(params / chunk));
    for (int c = 0; c < chunks; ++c) {
      const double size = std::min(chunk, params - c * chunk);
      const std::string label = "sub-group " + std::to_string(c);
      // Read: the state and the fp32 gradient swapped out in backward; written: the state and the
      // 16-bit parameters.
      swapper.add_unit(label, size * (cost.state_bytes_per_param + kFp32GradientBytes), update_s(size),
                       size * (split ? cost.state_bytes_per_param : cost.bytes_written_per_param));
      if (split && param_bytes > 0) {
        const double bytes = size * param_bytes;
        params_written.push_back(param_out->enqueue(
            "16-bit params to nvme " + label,
            [&env, &drives, bytes, this] {
              write_striped(drives.params, bytes, env.cluster.traffic, param_policy_.write_rate_cap_Bps);
            },
            {swapper.last_update()}));
      }
    }
    for (const auto& done : swapper.write_backs()) env.gpu.host_wait(done, WaitCause::Optimizer, "cpu optimizer");
    for (const auto& done : params_written) env.gpu.host_wait(done, WaitCause::Optimizer, "16-bit params to nvme");
  }

  ZeroInfinitySettings settings_;
  ParamFetchPlan plan_;
  OutOfCorePolicy policy_;        // the optimizer swapper's
  OutOfCorePolicy param_policy_;  // the parameter swapper's
  models::StatePlacement placement_;  // with offload "dram": the state's DRAM/CXL split
};

class ZeroInfinity : public System {
 public:
  ZeroInfinity(const SystemEntry& entry, ZeroInfinitySettings settings) : System(entry), settings_(settings) {}

  // Only the gathered layers on the GPU; each worker's shard of everything on its server's NVMe
  // (beside the swappers' pinned buffers in DRAM) or in its DRAM, with the activation checkpoints
  // it offloads.
  MemoryFootprint memory_footprint(const workloads::Trace& trace, int workers, double gpu_memory) const override {
    MemoryFootprint f = base_footprint(trace, workers, gpu_memory, settings_.checkpoints.enabled);
    const auto bytes = model_state_bytes(trace.training.dtype);
    const std::uint64_t shard = shard_params(trace.total_params(), workers);
    f.gpu_buffer_bytes = gathered_working_set_bytes(trace, settings_.stage3.fetch);
    f.host_bytes_per_worker += host_gradient_bytes(settings_, trace, workers);
    if (settings_.offload == Tier::Nvme) {
      f.host_bytes_per_worker += pinned_buffer_bytes(settings_, trace, workers);
      f.worker_ssd_bytes = nvme_state_bytes_per_param(trace.training.dtype) * shard;
    } else {
      f.host_bytes_per_worker += (bytes.param + bytes.optimizer) * shard;
    }
    judge_footprint(f, name(), gpu_memory);
    return f;
  }

  // The server's DRAM holds its GPUs' offloaded activation checkpoints and gradient buffers and,
  // on NVMe, their swappers' pinned buffers, or, in DRAM, their model state; the NVMe holds
  // parameters, optimizer state and fp32 gradients.
  std::string capacity_problem(const workloads::Trace& trace, const Hardware& hw) const override {
    const double per_server = params_per_server(trace, hw);
    const double checkpoints =
        hw.gpus_per_server * static_cast<double>(activation_peaks(trace, settings_.checkpoints.enabled).host_bytes);
    const double state = per_server * static_cast<double>(nvme_state_bytes_per_param(trace.training.dtype));
    const double dram = hw.worker_host.dram.capacity_bytes;
    if (settings_.offload == Tier::Dram) {
      const auto placed = place_dram_state(trace, hw);
      if (!placed.problem.empty()) return placed.problem;
      return "";
    }
    const double buffers =
        hw.gpus_per_server * static_cast<double>(pinned_buffer_bytes(settings_, trace, hw.workers) +
                                                 host_gradient_bytes(settings_, trace, hw.workers));
    if (buffers + checkpoints > dram)
      return does_not_fit("a worker server's DRAM (the swappers' pinned buffers, gradient buffers and activation checkpoints)",
                          buffers + checkpoints, dram);
    const double have = hw.worker_host.ssds ? hw.worker_host.ssds->capacity_bytes() : 0;
    if (state > have) return does_not_fit("a worker server's NVMe", state, have);
    if (const std::string p = swap_buffer_problem(trace, hw.workers); !p.empty()) return p;
    if (settings_.swapper.nvme_layout == SwapperSettings::NvmeLayout::Split && hw.worker_host.ssds) {
      const models::SsdArray& ssds = *hw.worker_host.ssds;
      const auto drives = swap_drive_counts(settings_.swapper.nvme_layout, ssds.count);
      if (drives.params == 0)
        return fmt::format("nvme_layout \"split\" needs at least 2 SSDs per worker server, it has {}", ssds.count);
      const double params = per_server * static_cast<double>(model_state_bytes(trace.training.dtype).param);
      const double param_drives = drives.params * ssds.device.capacity_bytes;
      if (params > param_drives) return does_not_fit("the parameter swapper's SSDs (nvme_layout \"split\")", params, param_drives);
      const double optimizer_drives = drives.optimizer * ssds.device.capacity_bytes;
      if (state - params > optimizer_drives)
        return does_not_fit("the optimizer swapper's SSDs (nvme_layout \"split\")", state - params, optimizer_drives);
    }
    return "";
  }

  // DeepSpeed's parameter swapper (partitioned_param_swapper.py) has param_buffer_count pinned
  // buffers of param_buffer_size elements: a shard must fit one (get_buffer asserts "More elements
  // than buffer size" when the model is partitioned), and the shards read at once must not need
  // more buffers than there are (swap_in asserts "Not enough buffers").  One buffer per sub-module:
  // its biases and norms, under param_persistence_threshold, stay whole on the GPU.
  std::string swap_buffer_problem(const workloads::Trace& trace, int workers) const {
    const ParamFetchSettings fetch = swapper_fetch_settings(settings_, trace, workers);
    const ParamFetchPlan plan = plan_param_fetches(trace, fetch);
    const std::uint64_t shard = largest_param_shard(settings_, trace, workers);
    const std::uint64_t buffer = param_buffer_elements(settings_, trace, workers);
    if (shard >= buffer)
      return fmt::format("does not run: the largest parameter shard ({} elements, 1/{} of a sub-module's {}) does not fit "
                         "one of the parameter swapper's buffers (param_buffer_size {}); DeepSpeed asserts when it "
                         "partitions the model: raise param_buffer_size (or give \"fit\")",
                         shard, workers, plan.largest_partitioned_params, buffer);
    const int buffers = fetch.nvme_param_buffers;
    if (plan.peak_nvme_buffers > buffers)
      return fmt::format("does not run: the parameter swapper needs {} pinned buffers at once (a shard holds one from "
                         "its read until its sub-module is released) but param_buffer_count is {}; DeepSpeed's "
                         "swap_in asserts \"Not enough buffers\": raise param_buffer_count (or give \"fit\")",
                         plan.peak_nvme_buffers, buffers);
    return "";
  }

  bool uses_worker_ssds() const override { return settings_.offload == Tier::Nvme; }
  // DeepSpeed's estimator knows CPU offload only: with NVMe its GPU part holds, its host part does not.
  std::optional<DeepSpeedEstimate> deepspeed_estimate(const workloads::Trace& trace, const Hardware& hw) const override {
    auto e = estimate_zero3_model_states(static_cast<double>(trace.total_params()), largest_submodule_params(trace),
                                         hw.gpus_per_server, hw.worker_servers(), true, true);
    if (settings_.offload == Tier::Nvme) {
      e.cpu_bytes_per_node = 0;
      e.estimator += ", GPU part only (the estimator has no NVMe offload)";
    }
    return e;
  }
  CollectiveSettings collectives() const override { return settings_.stage3.collectives; }
  // ZeRO-3's: an all-gather per gather of the parameter plan, a reduce-scatter per backward op
  // with gradients.
  std::vector<CollectiveCall> collective_calls(const workloads::Trace& trace) const override {
    return zero3_collective_calls(settings_.stage3, Zero3Wire{}, trace);
  }
  bool folds_data_parallel() const override { return true; }
  bool sends_only_collectives_across_servers() const override { return true; }
  std::unique_ptr<Schedule> make_schedule(ClusterEnv& env) const override {
    return std::make_unique<ZeroInfinitySchedule>(
        settings_, env, settings_.offload == Tier::Dram ? place_dram_state(env.trace, env.hw).shares : models::StatePlacement{});
  }

 private:
  // With offload "dram": the optimizer state (master, m, v) placed between DRAM and CXL; the
  // 16-bit parameters, the gradient buffers and the checkpoints in DRAM.
  PlacedState place_dram_state(const workloads::Trace& trace, const Hardware& hw) const {
    const auto bytes = model_state_bytes(trace.training.dtype);
    const double per_server = params_per_server(trace, hw);
    const double checkpoints =
        hw.gpus_per_server * static_cast<double>(activation_peaks(trace, settings_.checkpoints.enabled).host_bytes);
    const double other = per_server * static_cast<double>(bytes.param) +
                         hw.gpus_per_server * static_cast<double>(host_gradient_bytes(settings_, trace, hw.workers)) +
                         checkpoints;
    PlacedState p = place_host_state(settings_.placement, hw.worker_host, per_server * static_cast<double>(bytes.optimizer), other);
    // The verdict ZeRO-Infinity gave before placements: all in DRAM, too much.
    if (!hw.worker_host.cxl && settings_.placement.policy == StatePlacementPolicy::DramFirst && !p.problem.empty())
      p.problem = does_not_fit("a worker server's DRAM (model state and activation checkpoints)",
                               per_server * static_cast<double>(bytes.optimizer) + other, hw.worker_host.dram.capacity_bytes);
    return p;
  }

  ZeroInfinitySettings settings_;
};

}  // namespace

SwapDriveCounts swap_drive_counts(SwapperSettings::NvmeLayout layout, int drives) {
  if (layout == SwapperSettings::NvmeLayout::Striped) return {drives, drives};
  if (drives < 2) return {};
  return {drives / 2, drives - drives / 2};
}

OutOfCorePolicy swapper_policy(const SwapperSettings& s, const models::SsdArray& ssds) {
  const models::SsdArray queued = ssds.at_requests(s.aio_block_size_bytes, s.aio_queue_depth);
  OutOfCorePolicy p;
  p.read_ahead = s.pipeline_read ? 1 : 0;
  p.write_buffers = s.pipeline_write ? 2 : 1;
  p.serial_writes = true;
  p.read_rate_cap_Bps = queued.read_Bps();
  p.write_rate_cap_Bps = queued.write_Bps();
  return p;
}

ParamFetchSettings swapper_fetch_settings(const ZeroInfinitySettings& s, const workloads::Trace& trace, int workers) {
  ParamFetchSettings f = s.stage3.fetch;
  if (s.offload != ZeroInfinitySettings::Tier::Nvme) return f;
  f.nvme_param_buffers = s.swapper.param_buffer_count;
  // DeepSpeed swaps a shard of at least min_aio_bytes = max(1 MiB, aio.block_size)
  // (partitioned_param_swapper.py, MIN_AIO_BYTES): a sub-module swaps when ceil(P / workers)
  // elements reach that, i.e. P > (that - 1) x workers.
  const double element = workloads::bytes_per_element(trace.training.dtype);
  const auto min_shard = static_cast<std::uint64_t>(std::ceil(std::max(1048576.0, s.swapper.aio_block_size_bytes) / element));
  f.nvme_min_swapped_params = (min_shard - 1) * static_cast<std::uint64_t>(workers) + 1;
  if (s.swapper.param_buffer_count_fits) {
    // More buffers read further ahead and may be held longer: raise the count to the peak it gives
    // until it holds (the peak is at most the sub-modules' count, so this ends).
    f.nvme_param_buffers = SwapperSettings{}.param_buffer_count;
    for (int peak; (peak = plan_param_fetches(trace, f).peak_nvme_buffers) > f.nvme_param_buffers;)
      f.nvme_param_buffers = peak;
  }
  return f;
}

std::uint64_t largest_param_shard(const ZeroInfinitySettings& s, const workloads::Trace& trace, int workers) {
  // The largest sub-module does not depend on the swapper's buffers.
  return shard_params(plan_param_fetches(trace, s.stage3.fetch).largest_partitioned_params, workers);
}

std::uint64_t param_buffer_elements(const ZeroInfinitySettings& s, const workloads::Trace& trace, int workers) {
  if (s.swapper.param_buffer_fits_shard) return largest_param_shard(s, trace, workers) + 1;
  return static_cast<std::uint64_t>(s.swapper.param_buffer_size);
}

std::uint64_t pinned_buffer_bytes(const ZeroInfinitySettings& s, const workloads::Trace& trace, int workers) {
  if (s.offload != ZeroInfinitySettings::Tier::Nvme) return 0;
  const std::uint64_t shard = shard_params(trace.total_params(), workers);
  const auto fp32 = static_cast<std::uint64_t>(4);
  const auto param_element = static_cast<std::uint64_t>(workloads::bytes_per_element(trace.training.dtype));
  return static_cast<std::uint64_t>(s.swapper.optimizer_buffer_count) * largest_sub_group(s.swapper, shard) * fp32 +
         static_cast<std::uint64_t>(swapper_fetch_settings(s, trace, workers).nvme_param_buffers) *
             param_buffer_elements(s, trace, workers) *
             param_element;
}

std::uint64_t host_gradient_bytes(const ZeroInfinitySettings& s, const workloads::Trace& trace, int workers) {
  const std::uint64_t shard = shard_params(trace.total_params(), workers);
  const auto fp32 = static_cast<std::uint64_t>(kFp32GradientBytes);
  const std::uint64_t partitions = model_state_bytes(trace.training.dtype).grad * shard;
  return partitions + fp32 * (s.offload == ZeroInfinitySettings::Tier::Dram ? shard : largest_sub_group(s.swapper, shard));
}

namespace {

// sub_group_size, or its old name optimizer_chunk_params (not both).
double parse_sub_group_size(const SystemEntry& entry) {
  if (entry.has("sub_group_size") && entry.has("optimizer_chunk_params"))
    entry.at("optimizer_chunk_params")
        .fail("\"optimizer_chunk_params\" is the old name of \"sub_group_size\": give one of them");
  const char* key = entry.has("optimizer_chunk_params") ? "optimizer_chunk_params" : "sub_group_size";
  if (!entry.has(key)) return SwapperSettings{}.sub_group_size;
  // Each sub-group is a read, an update and a write-back to simulate: below 1e5 parameters a
  // 175B shard would be millions of them (DeepSpeed's default is 1e9).
  const double size = entry.at(key).as_positive();
  if (size < 1e5) entry.at(key).fail("expected at least 1e5 parameters per sub-group");
  if (size > 1e15) entry.at(key).fail("expected at most 1e15 parameters per sub-group");
  return size;
}

// A positive integer setting that may also be "fit" (nullopt: sized to the model by the system).
std::optional<long long> count_or_fit(const JsonNode& settings, const char* key, const char* what, long long dflt,
                                      long long most) {
  if (!settings.has(key) || !settings.at(key).is_string()) return settings.get_int(key, dflt, 1, most);
  if (settings.at(key).as_string() != "fit") settings.at(key).fail(std::string("expected a number of ") + what + " or \"fit\"");
  return std::nullopt;
}

}  // namespace

SystemPtr parse_zero_infinity(const SystemEntry& entry) {
  entry.only_settings(setting_keys({{"offload", "sub_group_size", "optimizer_chunk_params", "aio_block_size",
                                     "aio_queue_depth", "pipeline_read", "pipeline_write", "optimizer_buffer_count",
                                     "param_buffer_count", "param_buffer_size", "nvme_layout", "gradient_copies",
                                     "shard_copies"},
                                    Zero3Settings::keys(), CheckpointOffloadSettings::keys(),
                                    StatePlacementSettings::keys()}));
  ZeroInfinitySettings s;
  if (entry.has("offload")) s.offload = entry.at("offload").as_choice(Choices<Tier>{{"nvme", Tier::Nvme}, {"dram", Tier::Dram}}, "offload tier");
  const JsonNode& settings = entry.settings();
  SwapperSettings& w = s.swapper;
  w.sub_group_size = parse_sub_group_size(entry);
  // Bounds: a request from 512 B (a sector) to 1 GiB; queues and buffer pools that a host can hold.
  w.aio_block_size_bytes = static_cast<double>(settings.get_int("aio_block_size", 1048576, 512, 1ll << 30));
  w.aio_queue_depth = static_cast<int>(settings.get_int("aio_queue_depth", 8, 1, 65536));
  w.pipeline_read = settings.get_bool("pipeline_read", false);
  w.pipeline_write = settings.get_bool("pipeline_write", false);
  w.optimizer_buffer_count = static_cast<int>(settings.get_int("optimizer_buffer_count", 4, 1, 1024));
  const auto buffer_count = count_or_fit(settings, "param_buffer_count", "buffers", 5, 1024);
  w.param_buffer_count_fits = !buffer_count;
  if (buffer_count) w.param_buffer_count = static_cast<int>(*buffer_count);
  const auto buffer_size = count_or_fit(settings, "param_buffer_size", "elements", 100000000, 1000000000000ll);
  w.param_buffer_fits_shard = !buffer_size;
  if (buffer_size) w.param_buffer_size = static_cast<double>(*buffer_size);
  if (entry.has("nvme_layout"))
    w.nvme_layout = entry.at("nvme_layout").as_choice(
        Choices<SwapperSettings::NvmeLayout>{{"striped", SwapperSettings::NvmeLayout::Striped},
                                             {"split", SwapperSettings::NvmeLayout::Split}},
        "NVMe layout");
  if (entry.has("gradient_copies"))
    s.blocking_gradient_copies =
        entry.at("gradient_copies").as_choice(Choices<bool>{{"async", false}, {"blocking", true}}, "gradient copy mode");
  if (entry.has("shard_copies"))
    s.blocking_shard_copies =
        entry.at("shard_copies").as_choice(Choices<bool>{{"async", false}, {"blocking", true}}, "shard copy mode");
  s.stage3 = Zero3Settings::parse(entry);
  s.checkpoints = CheckpointOffloadSettings::parse(entry, /*blocking_by_default=*/true);
  s.placement = StatePlacementSettings::parse(entry);
  if (s.offload == Tier::Nvme && s.placement.policy != StatePlacementPolicy::DramFirst)
    entry.at("state_placement").fail("state_placement applies to offload \"dram\"; with \"nvme\" the optimizer state is on the SSDs");
  if (s.offload == Tier::Dram && entry.has("nvme_layout"))
    entry.at("nvme_layout").fail("nvme_layout applies to offload \"nvme\"; with \"dram\" nothing is on the SSDs");
  return std::make_shared<ZeroInfinity>(entry, s);
}

}  // namespace luwu::sim
