#include "sim/systems/memory_footprint.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "common/units.hpp"
#include "sim/systems/model_state.hpp"

namespace luwu::sim {
namespace {

using workloads::LayerKind;
using workloads::OpKind;

// The largest part of the GPU footprint, for the reason text.
std::string largest_part(const MemoryFootprint& f) {
  const std::pair<const char*, std::uint64_t> parts[] = {
      {"params", f.gpu_params_bytes},         {"grads", f.gpu_grads_bytes},   {"optimizer state", f.gpu_optimizer_bytes},
      {"activations", f.gpu_activation_bytes}, {"buffers", f.gpu_buffer_bytes}, {"runtime", f.gpu_runtime_bytes}};
  auto it = std::max_element(std::begin(parts), std::end(parts),
                             [](const auto& a, const auto& b) { return a.second < b.second; });
  return std::string(it->first) + " " + units::bytes(static_cast<double>(it->second));
}

}  // namespace

std::uint64_t shard_params(std::uint64_t params, int workers) {
  const auto n = static_cast<std::uint64_t>(workers);
  return (params + n - 1) / n;
}

std::uint64_t layer_working_set_bytes(const workloads::Trace& trace, int prefetch_layers) {
  if (prefetch_layers < 0) throw std::invalid_argument("prefetch_layers must be non-negative");
  std::vector<std::uint64_t> sizes;
  for (const auto& l : trace.layers) sizes.push_back(l.params_used);
  std::sort(sizes.begin(), sizes.end(), std::greater<>());
  const std::size_t resident = std::min(sizes.size(), static_cast<std::size_t>(1 + prefetch_layers));
  std::uint64_t params = 0;
  for (std::size_t i = 0; i < resident; ++i) params += sizes[i];
  return 2 * params * workloads::bytes_per_element(trace.training.dtype);  // params + their gradients
}

ActivationPeaks activation_peaks(const workloads::Trace& trace, bool offload_checkpoints) {
  if (!offload_checkpoints || !trace.training.recompute) return {trace.peak_activation_bytes(), 0};
  // Walk the ops: a recomputed block's forward saves its checkpoint on the host; its recompute
  // brings it back to the GPU beside the rebuilt activations; its backward frees both.
  long double gpu = 0, host = 0, gpu_peak = 0, host_peak = 0;
  for (const auto& op : trace.ops) {
    const workloads::LayerInfo& layer = trace.layers.at(static_cast<std::size_t>(op.layer));
    const bool recomputed = layer.kind == LayerKind::Transformer;
    const auto checkpoint = static_cast<long double>(layer.checkpoint_bytes);
    if (recomputed && op.kind == OpKind::Forward) {
      host += static_cast<long double>(op.act_saved_bytes);
    } else if (recomputed && op.kind == OpKind::Recompute) {
      host -= checkpoint;
      gpu += checkpoint + static_cast<long double>(op.act_saved_bytes);
    } else {
      gpu += static_cast<long double>(op.act_saved_bytes);
    }
    gpu_peak = std::max(gpu_peak, gpu);
    host_peak = std::max(host_peak, host);
    gpu -= static_cast<long double>(op.act_freed_bytes);
  }
  return {static_cast<std::uint64_t>(gpu_peak), static_cast<std::uint64_t>(host_peak)};
}

MemoryFootprint base_footprint(const workloads::Trace& trace, int workers, double gpu_memory_bytes,
                               bool offload_checkpoints) {
  if (workers < 1) throw std::invalid_argument("workers must be at least 1, got " + std::to_string(workers));
  if (!(gpu_memory_bytes > 0)) throw std::invalid_argument("GPU memory must be positive");
  MemoryFootprint f;
  const ActivationPeaks activations = activation_peaks(trace, offload_checkpoints);
  f.gpu_activation_bytes = activations.gpu_bytes;
  f.host_bytes_per_worker = activations.host_bytes;
  f.gpu_runtime_bytes = static_cast<std::uint64_t>(kRuntimeReservedBytes);
  return f;
}

void judge_footprint(MemoryFootprint& f, const std::string& system, double gpu_memory_bytes, const std::string& note) {
  const double need = static_cast<double>(f.gpu_total_bytes());
  f.fits = need <= gpu_memory_bytes;
  f.reason = (f.fits ? "fits: " : "does not fit: ") + system + " needs " + units::bytes(need) +
             " per GPU (largest part: " + largest_part(f) + ") of " + units::bytes(gpu_memory_bytes);
  if (!note.empty()) f.reason += "; " + note;
}

MemoryFootprint replica_footprint(const workloads::Trace& trace, int workers, double gpu_memory_bytes,
                                  double bucket_bytes, const std::string& system) {
  MemoryFootprint f = base_footprint(trace, workers, gpu_memory_bytes, false);
  const auto bytes = model_state_bytes(trace.training.dtype);
  const std::uint64_t P = trace.total_params();
  f.gpu_params_bytes = bytes.param * P;
  f.gpu_grads_bytes = bytes.grad * P;
  f.gpu_optimizer_bytes = bytes.optimizer * P;
  f.gpu_buffer_bytes = static_cast<std::uint64_t>(bucket_bytes);
  judge_footprint(f, system, gpu_memory_bytes,
                  trace.layout.expert > 1 ? "every GPU holds a full replica but of the experts, " +
                                                std::to_string(trace.model.experts / trace.layout.expert) + " of " +
                                                std::to_string(trace.model.experts) + " per block (expert parallelism)"
                                          : "every GPU holds a full replica");
  return f;
}

Json footprint_to_json(const MemoryFootprint& f) {
  return Json{{"gpu_params_bytes", f.gpu_params_bytes},
              {"gpu_grads_bytes", f.gpu_grads_bytes},
              {"gpu_optimizer_bytes", f.gpu_optimizer_bytes},
              {"gpu_activation_bytes", f.gpu_activation_bytes},
              {"gpu_buffer_bytes", f.gpu_buffer_bytes},
              {"gpu_runtime_bytes", f.gpu_runtime_bytes},
              {"gpu_total_bytes", f.gpu_total_bytes()},
              {"host_bytes_per_worker", f.host_bytes_per_worker},
              {"worker_ssd_bytes", f.worker_ssd_bytes},
              {"optimizer_node_bytes", f.optimizer_node_bytes},
              {"fits", f.fits},
              {"reason", f.reason},
              {"fitted_by", f.fitted_by}};
}

}  // namespace luwu::sim
