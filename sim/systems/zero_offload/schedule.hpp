#pragma once
// ZeRO-Offload's iteration (zero_offload.cpp says what it does), with its update phase as the one
// part a system built on it replaces: Deep Optimizer States keeps the forward, the bucketed
// backward and the gradient shards' trip to the host, and interleaves the update between the CPU
// and the GPU (sim/systems/deep_optimizer_states/).
#include "models/host.hpp"
#include "sim/engine/stream.hpp"
#include "sim/systems/schedule.hpp"
#include "sim/systems/zero_offload/zero_offload.hpp"

namespace luwu::sim {

class ZeroOffloadSchedule : public Schedule {
 public:
  // `placement`: the optimizer state's split between the server's DRAM and CXL memory.
  ZeroOffloadSchedule(const ZeroOffloadSettings& settings, const models::StatePlacement& placement)
      : settings_(settings), placement_(placement) {}

  void run_rank(RankEnv& env) override;

 protected:
  struct Update {
    CompletionPtr stepped;   // the optimizer is done with the rank's shard
    CompletionPtr uploaded;  // the updated 16-bit shard is in the GPU's replica
  };
  // The update of the rank's shard once its gradients are on the host: ZeRO-Offload's is one CPU
  // step over the shard on `cpu_stream`, then the 16-bit shard back over PCIe on `upload_stream`.
  // Called in the rank's actor (which may run GPU work itself) after backward, or at the start of
  // the iteration with the delayed parameter update.
  virtual Update update_shard(RankEnv& env, double shard_params, const CompletionPtr& gradients_on_host,
                              Stream& cpu_stream, Stream& upload_stream);

  // Adam over `params` parameters of the rank on the server's CPU, the state split as placed
  // (models::cpu_optimizer_step_times), run on the host's CPU (shared with the server's other ranks).
  void cpu_step(RankEnv& env, double params) const;

  const ZeroOffloadSettings& settings() const { return settings_; }
  const models::StatePlacement& placement() const { return placement_; }

 private:
  ZeroOffloadSettings settings_;
  models::StatePlacement placement_;
};

}  // namespace luwu::sim
