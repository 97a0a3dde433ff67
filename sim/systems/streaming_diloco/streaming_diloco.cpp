// Streaming DiLoCo (arXiv 2501.18512); see streaming_diloco.hpp.
//
// One simulated iteration is one inner step during which a fragment's synchronization is in
// flight (the steps that need the WAN; docs/baselines.md):
// - inner: DDP inside each group (25 MB buckets all-reduced under backward over the group's own
//   ranks only, Adam on the GPU);
// - outer: at the step's start, on a stream of its own, the share of the current fragment's
//   outer all-reduce that this step must carry: 1/tau of the fragment's quantized outer gradient,
//   as R rings across the M groups (rank i of every group all-reduces 1/R of the share, R = ranks
//   per group), so every group's WAN link carries the whole share once each way; the step ends
//   when both are done.
// Of the H inner steps of a round, P tau carry a fragment and H - P tau none (when P tau <= H);
// the details give the amortized time per inner step from this step and the inner-only time
// bound, and the peak and average WAN bandwidth the schedule needs.
#include "sim/systems/streaming_diloco/streaming_diloco.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "sim/engine/stream.hpp"
#include "sim/systems/data_mover.hpp"
#include "sim/systems/gradient_buckets.hpp"
#include "sim/systems/memory_footprint.hpp"
#include "sim/systems/model_state.hpp"

namespace luwu::sim {
namespace {

class StreamingDilocoSchedule : public Schedule {
 public:
  StreamingDilocoSchedule(const StreamingDilocoSettings& settings, ClusterEnv& env) : s_(settings) {
    const int world = env.world();
    per_group_ = world / s_.groups;
    const CollectiveContext context = env.collectives.context();
    for (int g = 0; g < s_.groups; ++g) {
      std::vector<simgrid::s4u::Host*> hosts, engines;
      std::vector<int> servers;
      for (int i = 0; i < per_group_; ++i) {
        const int r = g * per_group_ + i;
        hosts.push_back(env.roles.ranks[r].gpu);
        servers.push_back(env.roles.ranks[r].server);
        engines.push_back(env.gpus[r]->collective_engine());
      }
      inner_.push_back(std::make_unique<DataParallelCollectives>(hosts, servers, s_.collectives.algorithm, context, engines));
    }
    for (int i = 0; i < per_group_; ++i) {
      std::vector<simgrid::s4u::Host*> hosts, engines;
      std::vector<int> servers;
      for (int g = 0; g < s_.groups; ++g) {
        const int r = g * per_group_ + i;
        hosts.push_back(env.roles.ranks[r].gpu);
        servers.push_back(g);  // one member per group: a flat ring across the groups
        engines.push_back(env.gpus[r]->collective_engine());
      }
      outer_.push_back(std::make_unique<DataParallelCollectives>(hosts, servers, CollectiveAlgorithm::Ring, context, engines));
    }
    params_ = static_cast<double>(env.trace.total_params());
  }

  void run_rank(RankEnv& env) override {
    GpuDevice& gpu = env.gpu;
    const auto& trace = env.trace();
    const int rank = env.rank();
    const int group = rank / per_group_, local = rank % per_group_;
    Stream nccl(gpu.name(), "nccl", "communication", gpu.host(), &env.cluster.timeline);
    Stream wan(gpu.name(), "wan", "communication", gpu.host(), &env.cluster.timeline);

    // The outer synchronization's share for this step (quantized), this rank's 1/R of it.
    const double share = fragment_share_bytes() / per_group_;
    CompletionPtr outer = completed();
    if (s_.groups > 1)
      outer = wan.enqueue("outer all-reduce (fragment share)", [this, &env, local, group, share,
                                                                 issued = gpu.kernels_launched()] {
        DataMoverScope kernel(env.gpu, DataMover::GpuKernel, issued);
        // Communicator names are mailbox names: each ring, and each group's inner communicator, its own.
        outer_[static_cast<std::size_t>(local)]->all_reduce("diloco-outer" + std::to_string(local), group, share);
      });

    const auto buckets = plan_gradient_buckets(trace, s_.bucket_bytes, BucketedMicroSteps::Last);
    CompletionPtr reduced = completed();
    auto bucket = buckets.begin();
    auto& inner = *inner_[static_cast<std::size_t>(group)];
    for (std::size_t i = 0; i < trace.ops.size(); ++i) {
      env.compute(trace.ops[i]);
      for (; bucket != buckets.end() && bucket->after_op == i; ++bucket) {
        const double bytes = bucket->bytes;
        reduced = nccl.enqueue("inner all-reduce bucket " + std::to_string(bucket->index),
                               [&env, &inner, group, local, bytes, issued = gpu.kernels_launched()] {
                                 DataMoverScope kernel(env.gpu, DataMover::GpuKernel, issued);
                                 inner.all_reduce("diloco-inner" + std::to_string(group), local, bytes);
                               });
      }
    }
    gpu.wait(reduced, WaitCause::Communication, "inner gradient all-reduce");
    gpu.optimizer_step("inner adam step", env.gpu_optimizer_time_s(params_));
    gpu.wait(outer, WaitCause::Communication, "outer fragment all-reduce");
  }

  // The quantized outer gradient this step carries: 1/tau of a fragment.
  double fragment_share_bytes() const {
    return params_ / s_.fragments * s_.outer_gradient_bits / 8.0 / s_.overlap_steps;
  }

  luwu::Json details(double step_s) const override {
    const double fragment_wan = streaming_diloco_fragment_wan_bytes(params_, s_);
    const int M = s_.groups;
    // Data parallelism across all groups: a bf16/fp16 gradient all-reduce every step, 2 (M-1)/M
    // x 2 B x params over each group's WAN link; DiLoCo: the whole outer gradient (fp32, the
    // original DiLoCo) in one step every H.
    const double ring = M > 1 ? 2.0 * (M - 1) / M : 0.0;
    const double dp_bytes_per_step = ring * 2.0 * params_;
    const double diloco_bytes_per_round = ring * 4.0 * params_;
    const int carrying = std::min(s_.inner_steps, s_.fragments * s_.overlap_steps);
    return Json{{"system", "streaming-diloco"},
                {"groups", M},
                {"ranks_per_group", per_group_},
                {"inner_steps", s_.inner_steps},
                {"fragments", s_.fragments},
                {"overlap_steps", s_.overlap_steps},
                {"outer_gradient_bits", s_.outer_gradient_bits},
                {"fragment_wan_bytes", fragment_wan},
                {"wan_bytes_per_round", fragment_wan * s_.fragments},
                {"simulated_step", "an inner step carrying 1/overlap_steps of a fragment's synchronization"},
                {"steps_carrying_a_fragment_per_round", carrying},
                {"peak_wan_Bps", fragment_wan / s_.overlap_steps / step_s},
                {"average_wan_Bps", fragment_wan * s_.fragments / (s_.inner_steps * step_s)},
                {"data_parallel_peak_wan_Bps", dp_bytes_per_step / step_s},
                {"diloco_peak_wan_Bps", diloco_bytes_per_round / step_s},
                {"diloco_average_wan_Bps", diloco_bytes_per_round / (s_.inner_steps * step_s)}};
  }

 private:
  StreamingDilocoSettings s_;
  int per_group_ = 1;
  double params_ = 0;
  std::vector<std::unique_ptr<DataParallelCollectives>> inner_, outer_;
};

class StreamingDiloco : public System {
 public:
  StreamingDiloco(const SystemEntry& entry, StreamingDilocoSettings settings) : System(entry), s_(settings) {}

  // DDP's replica, plus the outer state: the last synchronized (global) parameters and the outer
  // Nesterov momentum, fp32 each (8 B per parameter), and one fragment's quantized outer gradient
  // in flight (bits / 8 B per parameter of a fragment).
  MemoryFootprint memory_footprint(const workloads::Trace& trace, int workers, double gpu_memory) const override {
    MemoryFootprint f = replica_footprint(trace, workers, gpu_memory, s_.bucket_bytes, name());
    const double P = static_cast<double>(trace.total_params());
    f.gpu_optimizer_bytes += static_cast<std::uint64_t>(8.0 * P);
    f.gpu_buffer_bytes += static_cast<std::uint64_t>(P / s_.fragments * s_.outer_gradient_bits / 8.0);
    judge_footprint(f, name(), gpu_memory, "every GPU holds a full replica and the outer state");
    return f;
  }
  std::string capacity_problem(const workloads::Trace&, const Hardware&) const override { return ""; }
  CollectiveSettings collectives() const override { return s_.collectives; }
  std::unique_ptr<Schedule> make_schedule(ClusterEnv& env) const override {
    // Fewer GPUs than groups (a one-GPU check of every system): one group, nothing crosses a WAN.
    StreamingDilocoSettings s = s_;
    if (env.world() < s.groups) s.groups = 1;
    if (env.world() % s.groups != 0)
      throw std::invalid_argument("streaming-diloco: " + std::to_string(env.world()) + " GPUs do not split into " +
                                  std::to_string(s.groups) + " equal groups");
    return std::make_unique<StreamingDilocoSchedule>(s, env);
  }

 private:
  StreamingDilocoSettings s_;
};

}  // namespace

double streaming_diloco_fragment_wan_bytes(double params, const StreamingDilocoSettings& s) {
  const int M = s.groups;
  return M > 1 ? 2.0 * (M - 1) / M * (params / s.fragments) * s.outer_gradient_bits / 8.0 : 0.0;
}

SystemPtr parse_streaming_diloco(const SystemEntry& entry) {
  entry.only_settings(setting_keys({{"groups", "inner_steps", "fragments", "overlap_steps", "outer_gradient_bits",
                                     "bucket_bytes"},
                                    CollectiveSettings::keys()}));
  StreamingDilocoSettings s;
  if (entry.has("groups")) s.groups = static_cast<int>(entry.at("groups").as_int(1, 4096));
  if (entry.has("inner_steps")) s.inner_steps = static_cast<int>(entry.at("inner_steps").as_int(1, 1000000));
  if (entry.has("fragments")) s.fragments = static_cast<int>(entry.at("fragments").as_int(1, 100000));
  if (entry.has("overlap_steps")) s.overlap_steps = static_cast<int>(entry.at("overlap_steps").as_int(1, 1000000));
  if (entry.has("outer_gradient_bits")) s.outer_gradient_bits = static_cast<int>(entry.at("outer_gradient_bits").as_int(1, 32));
  if (entry.has("bucket_bytes")) s.bucket_bytes = entry.at("bucket_bytes").as_positive();
  if (s.fragments > s.inner_steps)
    entry.at(entry.has("fragments") ? "fragments" : "inner_steps")
        .fail("Streaming DiLoCo synchronizes one fragment every inner_steps / fragments steps: fragments must not exceed inner_steps");
  if (s.overlap_steps * s.fragments > s.inner_steps)
    entry.at("overlap_steps").fail("the fragments' overlaps (fragments x overlap_steps) must fit in inner_steps");
  s.collectives = CollectiveSettings::parse(entry);
  return std::make_shared<StreamingDiloco>(entry, s);
}

}  // namespace luwu::sim
