#include "workloads/memory_footprint.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>

#include "common/units.hpp"

namespace luwu::workloads {

namespace {

struct SystemName {
  SystemKind kind;
  const char* name;
};
constexpr SystemName kSystems[] = {{SystemKind::Ddp, "ddp"},          {SystemKind::Zero3, "zero3"},
                                   {SystemKind::ZeroOffload, "zero-offload"}, {SystemKind::ZeroInfinity, "zero-infinity"},
                                   {SystemKind::SwitchMl, "switchml"}, {SystemKind::Luwu, "luwu"}};

// Optimizer state per parameter: fp32 master + m + v for 16-bit training, m + v for fp32.
std::uint64_t optimizer_bytes_per_param(DType dtype) { return dtype == DType::Fp32 ? 8 : 12; }

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

SystemKind parse_system(const std::string& text) {
  for (const auto& s : kSystems)
    if (text == s.name) return s.kind;
  std::vector<std::string> names;
  for (const auto& s : kSystems) names.emplace_back(s.name);
  std::string hint = nearest_key(text, names);
  throw std::invalid_argument("unknown system \"" + text +
                              "\" (expected ddp, zero3, zero-offload, zero-infinity, switchml or luwu" +
                              (hint.empty() ? "" : "; did you mean \"" + hint + "\"?") + ")");
}

std::string to_string(SystemKind system) {
  for (const auto& s : kSystems)
    if (s.kind == system) return s.name;
  return "?";
}

std::vector<SystemKind> all_systems() {
  std::vector<SystemKind> out;
  for (const auto& s : kSystems) out.push_back(s.kind);
  return out;
}

std::uint64_t shard_params(std::uint64_t params, int workers) {
  const auto n = static_cast<std::uint64_t>(workers);
  return (params + n - 1) / n;
}

std::uint64_t layer_working_set_bytes(const Trace& trace, int prefetch_layers) {
  std::vector<std::uint64_t> sizes;
  for (const auto& l : trace.layers) sizes.push_back(l.params_used);
  std::sort(sizes.begin(), sizes.end(), std::greater<>());
  const std::size_t resident = std::min(sizes.size(), static_cast<std::size_t>(1 + prefetch_layers));
  std::uint64_t params = 0;
  for (std::size_t i = 0; i < resident; ++i) params += sizes[i];
  return 2 * params * bytes_per_element(trace.training.dtype);  // params + their gradients
}

ActivationPeaks activation_peaks(const Trace& trace, bool offload_checkpoints) {
  if (!offload_checkpoints || !trace.training.recompute) return {trace.peak_activation_bytes(), 0};
  // Walk the ops: a recomputed block's forward saves its checkpoint on the host; its recompute
  // brings it back to the GPU beside the rebuilt activations; its backward frees both.
  long double gpu = 0, host = 0, gpu_peak = 0, host_peak = 0;
  for (const auto& op : trace.ops) {
    const LayerInfo& layer = trace.layers.at(static_cast<std::size_t>(op.layer));
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

MemoryFootprint memory_footprint(const Trace& trace, SystemKind system, int workers, double gpu_memory_bytes,
                                 const MemoryOptions& options) {
  if (workers < 1) throw std::invalid_argument("workers must be at least 1, got " + std::to_string(workers));
  if (!(gpu_memory_bytes > 0)) throw std::invalid_argument("GPU memory must be positive");
  if (options.prefetch_layers < 0) throw std::invalid_argument("prefetch_layers must be non-negative");
  if (options.ddp_bucket_bytes < 0 || options.zero_reduce_bucket_bytes < 0 || options.runtime_reserved_bytes < 0)
    throw std::invalid_argument("memory option byte counts must be non-negative");

  const std::uint64_t P = trace.total_params();
  const std::uint64_t shard = shard_params(P, workers);
  const std::uint64_t pb = bytes_per_element(trace.training.dtype);
  const std::uint64_t ob = optimizer_bytes_per_param(trace.training.dtype);
  const std::uint64_t working_set = layer_working_set_bytes(trace, options.prefetch_layers);

  MemoryFootprint f;
  const ActivationPeaks activations = activation_peaks(trace, options.offload_activation_checkpoints);
  f.gpu_activation_bytes = activations.gpu_bytes;
  f.gpu_runtime_bytes = static_cast<std::uint64_t>(options.runtime_reserved_bytes);
  switch (system) {
    case SystemKind::Ddp:
    case SystemKind::SwitchMl:  // a full replica; the switch only changes where gradients are summed
      f.gpu_params_bytes = pb * P;
      f.gpu_grads_bytes = pb * P;
      f.gpu_optimizer_bytes = ob * P;
      f.gpu_buffer_bytes = static_cast<std::uint64_t>(options.ddp_bucket_bytes);
      break;
    case SystemKind::Zero3:
      f.gpu_params_bytes = pb * shard;
      f.gpu_grads_bytes = pb * shard;
      f.gpu_optimizer_bytes = ob * shard;
      f.gpu_buffer_bytes = working_set;
      break;
    case SystemKind::ZeroOffload:  // ZeRO-2 on the GPU: params replicated, grads partitioned
      f.gpu_params_bytes = pb * P;
      f.gpu_grads_bytes = pb * shard;
      f.gpu_buffer_bytes = static_cast<std::uint64_t>(options.zero_reduce_bucket_bytes);
      f.host_bytes_per_worker = (ob + pb) * shard;  // optimizer state + the gradient shard copied over PCIe
      break;
    case SystemKind::ZeroInfinity:  // only the gathered layers on the GPU; the shard of everything offloaded
      f.gpu_buffer_bytes = working_set;
      f.host_bytes_per_worker = (pb + pb + ob) * shard;
      break;
    case SystemKind::Luwu:  // workers keep the layers in flight; the optimizer node keeps the rest
      f.gpu_buffer_bytes = working_set;
      f.optimizer_node_bytes = (ob + pb) * P;
      break;
  }

  f.host_bytes_per_worker += activations.host_bytes;

  const double need = static_cast<double>(f.gpu_total_bytes());
  f.fits = need <= gpu_memory_bytes;
  f.reason = (f.fits ? "fits: " : "does not fit: ") + to_string(system) + " needs " + units::bytes(need) +
             " per GPU (largest part: " + largest_part(f) + ") of " + units::bytes(gpu_memory_bytes);
  if (system == SystemKind::SwitchMl || system == SystemKind::Ddp) f.reason += "; every GPU holds a full replica";
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
              {"optimizer_node_bytes", f.optimizer_node_bytes},
              {"fits", f.fits},
              {"reason", f.reason}};
}

}  // namespace luwu::workloads
