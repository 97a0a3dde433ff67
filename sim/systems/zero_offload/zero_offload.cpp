// ZeRO-Offload (Ren et al., arXiv 2101.06840): ZeRO-2 on the GPUs, the optimizer on the CPU, as
// DeepSpeed's stage-2 optimizer runs it with offload_optimizer to the CPU (stage_1_and_2.py).
//
// Every GPU keeps the fp16 parameters (a replica); gradients and optimizer state are partitioned
// 1/N, and the fp32 master parameters, Adam state and fp32 gradient partition live in the host's
// DRAM: the GPU keeps no gradient partition, only the reduce bucket.  Backward hands each layer's
// gradient to a bucket of `reduce_bucket_bytes`; a full bucket is reduced over the network (GPU
// collectives: DeepSpeed's reduce of each partition's slice to its owner, gradient_reduction)
// while backward goes on, and each rank moves its shard of the bucket
// over its PCIe as soon as it is reduced.  With gradient accumulation DeepSpeed accumulates in host
// memory through the GPU (async_accumulate_grad_in_cpu_via_gpu): from the second micro-step on,
// the shard accumulated so far comes up to be added (e B/param), and every micro-step but the last
// sends its sum back down (e B/param); the last sends it, converted to fp32 on the GPU, into the
// optimizer's gradient partition (4 B/param; `fp32_gradient_copy` false: e B/param, the paper's),
// and the host, checking each gradient for overflow with a synchronous read of its sum, waits for
// the bucket's reduction (overflow_check).  After backward the CPU runs Adam on the rank's P/N parameters from DRAM,
// the fp16 shard goes back over PCIe (2P/N bytes) and the GPUs all-gather the updated parameters
// for the next forward.
//
// With the one-step delayed parameter update, the CPU step, the copy back and the all-gather work
// on the previous step's gradients, under this step's forward and backward (the steady state: the
// pipeline starts at t = 0 with the compute; the iteration ends when both are done).  The host
// then holds two gradient shards (the one being stepped and the one arriving), so this step's
// gradient copies do not wait for the CPU step; the paper does not say otherwise.
// Optionally (offload_activation_checkpoints), activation checkpoints live in host memory
// (DeepSpeed's cpu_checkpointing), as the paper does to train 13B on one V100.
// On servers with CXL memory, state_placement splits the optimizer state between DRAM and CXL
// (host_state_placement.hpp) and the CPU step streams each share at its tier's bandwidth.
#include "sim/systems/zero_offload/zero_offload.hpp"

#include <algorithm>
#include <string>

#include "models/host.hpp"
#include "sim/engine/stream.hpp"
#include "sim/systems/checkpoint_offload.hpp"
#include "sim/systems/gpu_collective.hpp"
#include "sim/systems/gradient_buckets.hpp"
#include "sim/systems/param_prefetch.hpp"
#include "sim/systems/model_state.hpp"
#include "sim/engine/transfers.hpp"
#include "sim/systems/zero_offload/schedule.hpp"

namespace luwu::sim {
namespace {

// The gradient_reduction setting's values, as a scenario names them (and the timeline its spans).
const Choices<CollectiveOp> kGradientReductions{
    {"reduce", CollectiveOp::ReduceToOwners}, {"reduce-scatter", CollectiveOp::ReduceScatter}, {"all-reduce", CollectiveOp::AllReduce}};

std::string gradient_reduction_name(CollectiveOp op) {
  for (const auto& [name, value] : kGradientReductions)
    if (value == op) return name;
  return "reduction";
}

// Bytes per parameter of the gradient partition the CPU optimizer reads.
std::uint64_t gradient_partition_bytes(const ZeroOffloadSettings& s, const workloads::Trace& trace) {
  return s.fp32_gradient_copy ? 4 : model_state_bytes(trace.training.dtype).grad;
}

// Host bytes per parameter of the rank's shard: the optimizer state, the gradient partition and,
// with accumulation, the partial sums in the training dtype (accumulated_grads_in_cpu).
std::uint64_t host_state_bytes(const ZeroOffloadSettings& s, const workloads::Trace& trace) {
  const auto bytes = model_state_bytes(trace.training.dtype);
  return bytes.optimizer + gradient_partition_bytes(s, trace) + (trace.training.grad_accum > 1 ? bytes.grad : 0);
}

}  // namespace

void ZeroOffloadSchedule::run_rank(RankEnv& env) {
    GpuDevice& gpu = env.gpu;
    const auto& trace = env.trace();
    // The whole data-parallel group's: folded (simulate.cpp), the simulated ranks stand for it.
    const int group = env.data_parallel_size();
    Timeline* tl = &env.cluster.timeline;
    Stream reduce_stream(gpu.name(), "gradient reduction", "communication", gpu.host(), tl);
    Stream offload_stream(gpu.name(), "gradient shard to host (pcie)", "io", gpu.host(), tl);
    Stream accumulate_stream(gpu.name(), "accumulated gradient to gpu (pcie)", "io", gpu.host(), tl);
    Stream cpu_stream(gpu.name(), "cpu optimizer", "optimizer", env.hosts.cpu, tl);
    Stream upload_stream(gpu.name(), "parameter shard to gpu (pcie)", "io", gpu.host(), tl);
    Stream gather_stream(gpu.name(), "all-gather", "communication", gpu.host(), tl);

    const double shard_params = static_cast<double>(trace.total_params()) / group;
    const double shard_param_bytes = shard_params * workloads::bytes_per_element(trace.training.dtype);

    // The update (update_shard: CPU step -> fp16 shard back to the GPU) -> all-gather of the whole
    // model, after the shard is back.
    struct Updated {
      CompletionPtr stepped, uploaded, gathered;
    };
    auto update_parameters = [&](const CompletionPtr& gradients_on_host) {
      const Update u = update_shard(env, shard_params, gradients_on_host, cpu_stream, upload_stream);
      Updated d{u.stepped, u.uploaded, nullptr};
      d.gathered = enqueue_gpu_collective(gather_stream, env, CollectiveOp::AllGather, "zoff-ag",
                                          shard_param_bytes * group, "all-gather parameters", {u.uploaded});
      return d;
    };

    const double element = workloads::bytes_per_element(trace.training.dtype);
    Stream checkpoint_stream(gpu.name(), "checkpoints to gpu (pcie)", "io", gpu.host(), tl);
    CheckpointOffload checkpoints(env, settings_.checkpoints, offload_stream, checkpoint_stream);
    ParamPrefetch checkpoints_ahead(trace, 1, [&](std::size_t i) { checkpoints.fetch_back(i); });

    const bool delayed = settings_.delayed_param_update;
    Updated previous_step;
    if (delayed) previous_step = update_parameters(completed());  // the previous step's gradients are on the host

    const int last_micro_step = trace.training.grad_accum - 1;
    const auto buckets = plan_gradient_buckets(trace, settings_.reduce_bucket_bytes, BucketedMicroSteps::Every);
    const std::string reduction = gradient_reduction_name(settings_.gradient_reduction);
    CompletionPtr reduced = completed(), offloaded = completed();
    auto bucket = buckets.begin();
    for (std::size_t i = 0; i < trace.ops.size(); ++i) {
      checkpoints_ahead.before(i);
      checkpoints.wait_before_compute(i);
      env.compute(trace.ops[i]);
      if (auto sent = checkpoints.after_compute(i)) offloaded = sent;
      for (; bucket != buckets.end() && bucket->after_op == i; ++bucket) {
        const std::string name = "bucket " + std::to_string(bucket->index);
        reduced = enqueue_gpu_collective(reduce_stream, env, settings_.gradient_reduction, "zoff-rs", bucket->bytes,
                                         reduction + " " + name);
        const double shard_bytes = bucket->bytes / group;
        CompletionPtr summed = reduced;
        if (bucket->micro_step > 0)  // the sum so far comes up and is added on the GPU
          summed = accumulate_stream.enqueue(
              "accumulated gradient to gpu " + name,
              [&env, shard_bytes] { transfer(env.hosts.cpu, env.gpu.host(), shard_bytes, env.cluster.traffic); },
              {reduced});
        const double down_bytes =
            bucket->micro_step == last_micro_step ? shard_bytes * static_cast<double>(gradient_partition_bytes(settings_, trace)) / element : shard_bytes;
        offloaded = offload_stream.enqueue(
            "gradient shard to host " + name,
            [&env, down_bytes] { transfer(env.gpu.host(), env.hosts.cpu, down_bytes, env.cluster.traffic); },
            {summed});
        if (settings_.blocking_overflow_check && bucket->micro_step == last_micro_step) {
          gpu.host_wait(reduced, WaitCause::Communication, reduction + " " + name + " (host blocked in the overflow check)");
          gpu.host_wait(summed, WaitCause::Io, "accumulated gradient " + name + " (host blocked in the overflow check)");
        }
      }
    }
    // The host runs the step (or, delayed, joins the thread that ran the last one).
    gpu.host_wait(reduced, WaitCause::Communication, "gradient " + reduction);
    gpu.host_wait(offloaded, WaitCause::Io, "gradient shards to host");

    const Updated update = delayed ? previous_step : update_parameters(offloaded);
    gpu.host_wait(update.stepped, WaitCause::Optimizer, "cpu optimizer");
    gpu.wait(update.uploaded, WaitCause::Io, "parameter shard to gpu");
    gpu.wait(update.gathered, WaitCause::Communication, "parameter all-gather");
}

ZeroOffloadSchedule::Update ZeroOffloadSchedule::update_shard(RankEnv& env, double shard_params,
                                                              const CompletionPtr& gradients_on_host,
                                                              Stream& cpu_stream, Stream& upload_stream) {
  const double shard_param_bytes = shard_params * workloads::bytes_per_element(env.trace().training.dtype);
  Update u;
  u.stepped = cpu_stream.enqueue(
      "adam step on cpu", [this, &env, shard_params] { cpu_step(env, shard_params); }, {gradients_on_host});
  u.uploaded = upload_stream.enqueue(
      "parameter shard to gpu",
      [&env, shard_param_bytes] { transfer(env.hosts.cpu, env.gpu.host(), shard_param_bytes, env.cluster.traffic); },
      {u.stepped});
  return u;
}

void ZeroOffloadSchedule::cpu_step(RankEnv& env, double params) const {
  const auto t = models::cpu_optimizer_step_times(
      env.cluster.hw.worker_host, params,
      deepspeed_offloaded_step_dram_cost(env.trace().training.dtype, DeepSpeedStage::OneOrTwo), placement_);
  execute_on(env.hosts.cpu, t.total_s);
}

namespace {


// The most parameters one sub-module holds (the layer's, in a trace that names none).
std::uint64_t largest_param(const workloads::Trace& trace) {
  std::uint64_t largest = 0;
  for (const auto& list : trace.kernel_lists)
    for (const auto& k : list) largest = std::max(largest, k.params);
  if (largest == 0)
    for (const auto& l : trace.layers) largest = std::max(largest, l.params);
  return largest;
}

class ZeroOffload : public System {
 public:
  ZeroOffload(const SystemEntry& entry, ZeroOffloadSettings settings) : System(entry), settings_(settings) {}

  MemoryFootprint memory_footprint(const workloads::Trace& trace, int workers, double gpu_memory) const override {
    return zero_offload_footprint(settings_, trace, workers, gpu_memory, name());
  }
  std::optional<DeepSpeedEstimate> deepspeed_estimate(const workloads::Trace& trace, const Hardware& hw) const override {
    return estimate_zero2_model_states(static_cast<double>(trace.total_params()), hw.gpus_per_server, hw.worker_servers(), true);
  }

  // Each GPU's optimizer state, gradient partition and the parameter shard it sends back, and
  // the activation checkpoints it offloads, in its server's DRAM, the state placed between DRAM
  // and CXL memory (host_state_placement.hpp).
  std::string capacity_problem(const workloads::Trace& trace, const Hardware& hw) const override {
    const auto host = zero_offload_host_bytes(settings_, trace, hw);
    return place_host_state(settings_.placement, hw.worker_host, host.state, host.other).problem;
  }

  CollectiveSettings collectives() const override { return settings_.collectives; }
  // Its shards are 1/D of the model (run_rank), its collectives go through ClusterEnv::collectives,
  // and what a rank shares (its server's CPU, DRAM, CXL and PCIe) only the server's own GPUs share:
  // a fold fills whole servers.
  bool folds_data_parallel() const override { return true; }
  bool sends_only_collectives_across_servers() const override { return true; }
  std::unique_ptr<Schedule> make_schedule(ClusterEnv& env) const override {
    const auto host = zero_offload_host_bytes(settings_, env.trace, env.hw);
    return std::make_unique<ZeroOffloadSchedule>(
        settings_, place_host_state(settings_.placement, env.hw.worker_host, host.state, host.other).shares);
  }

 private:
  ZeroOffloadSettings settings_;
};

}  // namespace

// Parameters replicated on the GPU with the reduce bucket and DeepSpeed's accumulation buffer of
// the largest parameter (temp_grad_buffer_for_gpu_offload); the optimizer state, the fp32
// gradient partition and, with accumulation, the 16-bit partial sums in host memory.
MemoryFootprint zero_offload_footprint(const ZeroOffloadSettings& s, const workloads::Trace& trace, int workers,
                                       double gpu_memory, const std::string& system_name) {
  MemoryFootprint f = base_footprint(trace, workers, gpu_memory, s.checkpoints.enabled);
  const auto bytes = model_state_bytes(trace.training.dtype);
  const std::uint64_t shard = shard_params(trace.total_params(), workers);
  f.gpu_params_bytes = bytes.param * trace.total_params();
  f.gpu_grads_bytes = 0;
  f.gpu_buffer_bytes = static_cast<std::uint64_t>(s.reduce_bucket_bytes) + largest_param(trace) * bytes.param;
  f.host_bytes_per_worker += host_state_bytes(s, trace) * shard;
  judge_footprint(f, system_name, gpu_memory);
  return f;
}

OffloadHostBytes zero_offload_host_bytes(const ZeroOffloadSettings& s, const workloads::Trace& trace,
                                         const Hardware& hw) {
  const auto bytes = model_state_bytes(trace.training.dtype);
  const double checkpoints =
      hw.gpus_per_server * static_cast<double>(activation_peaks(trace, s.checkpoints.enabled).host_bytes);
  const double per_server = params_per_server(trace, hw);
  OffloadHostBytes b;
  b.state = per_server * static_cast<double>(bytes.optimizer);
  b.other = per_server * static_cast<double>(host_state_bytes(s, trace) - bytes.optimizer + bytes.param) + checkpoints;
  return b;
}

std::vector<std::string> ZeroOffloadSettings::keys(bool with_delayed_update) {
  std::vector<std::string> own = {"reduce_bucket_bytes"};
  if (with_delayed_update) own.push_back("delayed_param_update");
  own.push_back("fp32_gradient_copy");
  own.push_back("overflow_check");
  own.push_back("gradient_reduction");
  return setting_keys({own, CheckpointOffloadSettings::keys(), CollectiveSettings::keys(), StatePlacementSettings::keys()});
}

ZeroOffloadSettings ZeroOffloadSettings::parse(const SystemEntry& entry, bool with_delayed_update) {
  ZeroOffloadSettings s;
  if (entry.has("reduce_bucket_bytes")) s.reduce_bucket_bytes = entry.at("reduce_bucket_bytes").as_positive();
  if (with_delayed_update)
    s.delayed_param_update = entry.settings().get_bool("delayed_param_update", s.delayed_param_update);
  s.fp32_gradient_copy = entry.settings().get_bool("fp32_gradient_copy", s.fp32_gradient_copy);
  if (entry.has("overflow_check"))
    s.blocking_overflow_check =
        entry.at("overflow_check").as_choice(Choices<bool>{{"blocking", true}, {"async", false}}, "overflow check");
  if (entry.has("gradient_reduction"))
    s.gradient_reduction = entry.at("gradient_reduction").as_choice(kGradientReductions, "gradient reduction");
  s.checkpoints = CheckpointOffloadSettings::parse(entry, /*blocking_by_default=*/true);
  s.collectives = CollectiveSettings::parse(entry);
  s.placement = StatePlacementSettings::parse(entry);
  return s;
}

SystemPtr parse_zero_offload(const SystemEntry& entry) {
  entry.only_settings(ZeroOffloadSettings::keys());
  return std::make_shared<ZeroOffload>(entry, ZeroOffloadSettings::parse(entry));
}

}  // namespace luwu::sim
