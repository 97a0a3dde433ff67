// 1-bit Adam (arXiv 2102.02888), as DeepSpeed's OnebitAdam runs it with its NCCL backend.
//
// Every GPU holds the whole model, its optimizer state and two error-feedback buffers (the
// worker's, fp32 over P, and its server chunk's, fp32 over P/N).
//  - Warm-up (stage "warmup"): plain Adam; gradients all-reduced in fp16 buckets while backward
//    goes on: DDP's iteration.
//  - Compression (stage "compressed", the steady state): backward only accumulates gradients;
//    then the momentum is updated, compensated with the worker's error and packed to one bit per
//    element plus a scale (an elementwise kernel); the packed signs are exchanged as DeepSpeed's
//    compressed all-reduce does: each rank sends every other rank its chunk (here a reduce-scatter
//    of the P/8-byte buffer: (N-1)/N of it per rank), averages and re-compresses its chunk with the
//    server error, and all the chunks are all-gathered ((N-1)/N of P/8 again); the gathered signs
//    are unpacked, and Adam steps with the variance frozen.  2 (N-1)/N x P/8 bytes per rank instead
//    of the warm-up's 2 (N-1)/N x 2P: 16x less in fp16.
#include "sim/systems/onebit_adam/onebit_adam.hpp"

#include <string>

#include <simgrid/s4u/Actor.hpp>

#include "sim/engine/stream.hpp"
#include "sim/systems/gpu_collective.hpp"
#include "sim/systems/model_state.hpp"

namespace luwu::sim {
namespace {

class CompressedSchedule : public Schedule {
 public:
  explicit CompressedSchedule(const OnebitAdamSettings& settings) : settings_(settings) {}

  void run_rank(RankEnv& env) override {
    GpuDevice& gpu = env.gpu;
    const auto& trace = env.trace();
    for (const auto& op : trace.ops) env.compute(op);
    const double params = static_cast<double>(trace.total_params());
    Stream nccl(gpu.name(), "nccl", "communication", gpu.host(), &env.cluster.timeline);
    // The momentum update, error compensation and packing before the exchange, the unpacking
    // after it: elementwise, HBM-bound, on the compute stream.
    const double codec_s = params * settings_.codec_hbm_bytes_per_param / gpu.spec().achieved_hbm_Bps();
    gpu.optimizer_step("1-bit compress momentum", codec_s / 2);
    const double signs = params / 8;  // one bit per element (the per-chunk scales are negligible)
    enqueue_gpu_collective(nccl, env, CollectiveOp::ReduceScatter, "onebit-rs", signs, "1-bit signs to their servers");
    auto gathered = enqueue_gpu_collective(nccl, env, CollectiveOp::AllGather, "onebit-ag", signs, "1-bit signs gathered");
    gpu.wait(gathered, WaitCause::Communication, "compressed momentum all-reduce");
    gpu.optimizer_step("1-bit unpack momentum", codec_s / 2);
    gpu.optimizer_step("adam step (frozen variance)", env.gpu_optimizer_time_s(params));
  }

 private:
  OnebitAdamSettings settings_;
};

class OnebitAdam : public System {
 public:
  OnebitAdam(const SystemEntry& entry, OnebitAdamSettings settings) : System(entry), settings_(settings) {}

  // DDP's replica, plus the two fp32 error-feedback buffers (the worker's over P, its server
  // chunk's over P/N).
  MemoryFootprint memory_footprint(const workloads::Trace& trace, int workers, double gpu_memory) const override {
    MemoryFootprint f = replica_footprint(trace, workers, gpu_memory, settings_.warmup.bucket_bytes, name());
    const std::uint64_t p = trace.total_params();
    f.gpu_optimizer_bytes += 4 * p + 4 * shard_params(p, workers);
    judge_footprint(f, name(), gpu_memory, "every GPU holds a full replica and the error-feedback buffers");
    return f;
  }
  CollectiveSettings collectives() const override { return settings_.warmup.collectives; }
  // Both stages exchange only through ClusterEnv::collectives (their chunks sized there, by D).
  bool folds_data_parallel() const override { return true; }
  bool sends_only_collectives_across_servers() const override { return true; }
  std::unique_ptr<Schedule> make_schedule(ClusterEnv&) const override {
    if (settings_.stage == OnebitAdamSettings::Stage::Warmup) return make_ddp_schedule(settings_.warmup);
    return std::make_unique<CompressedSchedule>(settings_);
  }

 private:
  OnebitAdamSettings settings_;
};

}  // namespace

SystemPtr parse_onebit_adam(const SystemEntry& entry) {
  entry.only_settings(setting_keys({{"stage", "bucket_bytes", "codec_hbm_bytes_per_param"}, CollectiveSettings::keys()}));
  OnebitAdamSettings s;
  using Stage = OnebitAdamSettings::Stage;
  if (entry.has("stage"))
    s.stage = entry.at("stage").as_choice(Choices<Stage>{{"warmup", Stage::Warmup}, {"compressed", Stage::Compressed}}, "stage");
  if (entry.has("bucket_bytes")) s.warmup.bucket_bytes = entry.at("bucket_bytes").as_positive();
  if (entry.has("codec_hbm_bytes_per_param"))
    s.codec_hbm_bytes_per_param = entry.at("codec_hbm_bytes_per_param").as_non_negative();
  s.warmup.collectives = CollectiveSettings::parse(entry);
  return std::make_shared<OnebitAdam>(entry, s);
}

}  // namespace luwu::sim
