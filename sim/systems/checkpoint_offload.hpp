#pragma once
// Activation checkpoints kept in host memory (DeepSpeed's activation_checkpointing.cpu_checkpointing,
// which ZeRO-Infinity uses): with recompute, each transformer block's checkpoint goes to the host
// over the GPU's PCIe after the block's forward, and comes back before its recompute.  The memory
// side is activation_peaks(trace, true) (memory_footprint.hpp); a system that lowers GPU memory
// this way also pays these transfers.
//
// How the copies run ("checkpoint_copies"): "async", on their own streams, the checkpoint fetched
// back ahead of its recompute; or "blocking", as DeepSpeed 0.9.3's checkpointing.py makes them
// (copy_to_device: `item.to(torch.device('cpu'))` after each block's forward; move_to_device:
// `.to(cuda_device)` when backward reaches the block): the compute stream waits for each copy,
// and the copy back starts only when the recompute is due.
#include <cstddef>
#include <string>
#include <vector>

#include "sim/systems/schedule.hpp"
#include "sim/engine/stream.hpp"
#include "sim/systems/system_entry.hpp"
#include "sim/engine/transfers.hpp"

namespace luwu::sim {

struct CheckpointOffloadSettings {
  bool enabled = false;   // off by default, as in DeepSpeed
  bool blocking = false;  // the copies stop the compute stream (see above)

  static std::vector<std::string> keys() { return {"offload_activation_checkpoints", "checkpoint_copies"}; }
  // `blocking_by_default`: the system's own runtime copies checkpoints on its compute stream
  // (DeepSpeed's systems do).
  static CheckpointOffloadSettings parse(const SystemEntry& entry, bool blocking_by_default) {
    CheckpointOffloadSettings s{entry.settings().get_bool("offload_activation_checkpoints", false), blocking_by_default};
    if (entry.has("checkpoint_copies"))
      s.blocking = entry.at("checkpoint_copies").as_choice(Choices<bool>{{"async", false}, {"blocking", true}},
                                                           "checkpoint copies");
    return s;
  }
};

class CheckpointOffload {
 public:
  // Checkpoints go out on `to_host` and come back on `to_gpu` (streams the schedule may share with
  // other PCIe copies, which then queue behind them).
  CheckpointOffload(RankEnv& env, const CheckpointOffloadSettings& settings, Stream& to_host, Stream& to_gpu)
      : env_(env),
        enabled_(settings.enabled && env.trace().training.recompute),
        blocking_(settings.blocking),
        to_host_(to_host),
        to_gpu_(to_gpu),
        offloaded_(env.trace().layers.size()),
        back_(env.trace().ops.size()) {}

  // After op `i` computed: a block's forward sends its checkpoint to the host.  Returns the
  // transfer's completion, or nullptr when op `i` keeps its checkpoint on the GPU.
  CompletionPtr after_compute(std::size_t i) {
    const auto& op = env_.trace().ops[i];
    const auto& layer = env_.trace().layers[static_cast<std::size_t>(op.layer)];
    if (!enabled_ || op.kind != workloads::OpKind::Forward || layer.kind != workloads::LayerKind::Transformer)
      return nullptr;
    const double bytes = static_cast<double>(layer.checkpoint_bytes);
    auto& env = env_;
    CompletionPtr sent = to_host_.enqueue("checkpoint to host " + op_label(env.trace(), op), [&env, bytes] {
      transfer(env.gpu.host(), env.hosts.cpu, bytes, env.cluster.traffic);
    });
    offloaded_[static_cast<std::size_t>(op.layer)] = sent;
    if (blocking_) env_.gpu.host_wait(sent, WaitCause::Io, "checkpoint to host (blocking copy) " + op_label(env.trace(), op));
    return sent;
  }

  // Brings op `i`'s checkpoint back when op `i` is a block's recompute (issue it ahead of time;
  // once: later calls do nothing).  Blocking copies start only when the recompute is due.
  void fetch_back(std::size_t i) {
    if (!blocking_) issue_back(i);
  }

  // Before op `i` computes: waits for its checkpoint, if it came from the host.
  void wait_before_compute(std::size_t i) {
    if (blocking_) issue_back(i);
    if (!back_[i]) return;
    const std::string label = "checkpoint from host " + op_label(env_.trace(), env_.trace().ops[i]);
    if (blocking_) env_.gpu.host_wait(back_[i], WaitCause::Io, label);  // the synchronous .to() holds the host
    else env_.gpu.wait(back_[i], WaitCause::Io, label);
  }

 private:
  void issue_back(std::size_t i) {
    const auto& op = env_.trace().ops[i];
    if (!enabled_ || op.kind != workloads::OpKind::Recompute || back_[i]) return;
    const auto& layer = env_.trace().layers[static_cast<std::size_t>(op.layer)];
    const double bytes = static_cast<double>(layer.checkpoint_bytes);
    std::vector<CompletionPtr> deps;
    if (auto sent = offloaded_[static_cast<std::size_t>(op.layer)]) deps.push_back(sent);
    auto& env = env_;
    back_[i] = to_gpu_.enqueue(
        "checkpoint to gpu " + op_label(env.trace(), op),
        [&env, bytes] { transfer(env.hosts.cpu, env.gpu.host(), bytes, env.cluster.traffic); }, deps);
  }

  RankEnv& env_;
  bool enabled_;
  bool blocking_;
  Stream& to_host_;
  Stream& to_gpu_;
  std::vector<CompletionPtr> offloaded_;  // [layer]: its checkpoint's trip to the host
  std::vector<CompletionPtr> back_;       // [op]: its checkpoint's trip back
};

}  // namespace luwu::sim
