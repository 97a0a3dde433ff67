// `luwusim memory`: per-GPU, per-host and optimizer-node bytes of a model under each training
// system, and whether it fits the GPU.  "Does not fit" is a result (exit 0), not an error.
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/command_registry.hpp"
#include "common/units.hpp"
#include "workloads/memory_footprint.hpp"
#include "workloads/model_catalog.hpp"

namespace {

using namespace luwu::workloads;
namespace units = luwu::units;

struct MemoryArgs {
  std::string model;
  std::string system = "all";
  int workers = 0;
  std::string gpu_memory;
  int micro_batch = 1;
  int seq_len = 0;  // 0: the model's context, at most 2048
  int grad_accum = 1;
  bool recompute = false;
  bool memory_efficient_attention = false;
  bool offload_checkpoints = false;
  std::string dtype = "fp16";
  int prefetch_layers = MemoryOptions{}.prefetch_layers;
  bool json = false;
};

std::string b(std::uint64_t bytes) { return units::bytes(static_cast<double>(bytes)); }

int run_memory(const MemoryArgs& a) {
  ModelConfig model = resolve_model(a.model);
  if (a.seq_len < 0) throw std::invalid_argument("--seq must be positive, got " + std::to_string(a.seq_len));
  TrainingConfig training;
  training.micro_batch = a.micro_batch;
  training.seq_len = a.seq_len > 0 ? a.seq_len : std::min(2048, model.max_seq);
  training.grad_accum = a.grad_accum;
  training.recompute = a.recompute;
  training.memory_efficient_attention = a.memory_efficient_attention;
  training.dtype = parse_dtype(a.dtype);
  const double gpu_bytes = units::parse_quantity(a.gpu_memory, units::Dim::Bytes);
  MemoryOptions options;
  options.prefetch_layers = a.prefetch_layers;
  options.offload_activation_checkpoints = a.offload_checkpoints;
  std::vector<SystemKind> systems = a.system == "all" ? all_systems() : std::vector<SystemKind>{parse_system(a.system)};

  Trace trace = generate_trace(model, training);
  std::vector<std::pair<SystemKind, MemoryFootprint>> results;
  for (SystemKind s : systems) results.emplace_back(s, memory_footprint(trace, s, a.workers, gpu_bytes, options));

  if (a.json) {
    luwu::Json rows = luwu::Json::array();
    for (const auto& [s, f] : results) {
      luwu::Json row = footprint_to_json(f);
      row["system"] = to_string(s);
      row["model"] = model.name;
      row["params"] = trace.total_params();
      row["workers"] = a.workers;
      row["gpu_memory_bytes"] = gpu_bytes;
      row["micro_batch"] = training.micro_batch;
      row["seq_len"] = training.seq_len;
      row["grad_accum"] = training.grad_accum;
      row["recompute"] = training.recompute;
      row["dtype"] = to_string(training.dtype);
      row["memory_efficient_attention"] = training.memory_efficient_attention;
      row["offload_activation_checkpoints"] = options.offload_activation_checkpoints;
      rows.push_back(std::move(row));
    }
    std::cout << (a.system == "all" ? rows : rows[0]).dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("{} ({} params), {} workers, {} per GPU; micro-batch {} x seq {}, recompute {}{}, {}{}\n",
                           model.name, units::count(static_cast<double>(trace.total_params())), a.workers,
                           units::bytes(gpu_bytes), training.micro_batch, training.seq_len,
                           training.recompute ? "on" : "off",
                           options.offload_activation_checkpoints ? " (checkpoints on host)" : "",
                           to_string(training.dtype),
                           training.memory_efficient_attention ? ", memory-efficient attention" : "");
  std::cout << fmt::format("{:<14} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>12} {:>12}  {}\n", "system",
                           "params", "grads", "optimizer", "activations", "buffers", "runtime", "GPU total",
                           "host/worker", "opt. node", "fits");
  for (const auto& [s, f] : results)
    std::cout << fmt::format("{:<14} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>12} {:>12}  {}\n", to_string(s),
                             b(f.gpu_params_bytes), b(f.gpu_grads_bytes), b(f.gpu_optimizer_bytes),
                             b(f.gpu_activation_bytes), b(f.gpu_buffer_bytes), b(f.gpu_runtime_bytes),
                             b(f.gpu_total_bytes()), b(f.host_bytes_per_worker), b(f.optimizer_node_bytes),
                             f.fits ? "yes" : "no");
  for (const auto& [s, f] : results) std::cout << "  " << f.reason << "\n";
  return 0;
}

const bool registered = luwu::cli::register_command(
    "memory", "Memory footprint per GPU, host and optimizer node under each training system", [](CLI::App& app) {
      auto a = std::make_shared<MemoryArgs>();
      app.add_option("--model", a->model, "Catalog name or a model JSON file")->required();
      app.add_option("--system", a->system, "ddp, zero3, zero-offload, zero-infinity, switchml, luwu, or all")
          ->capture_default_str();
      app.add_option("--workers", a->workers, "Data-parallel workers (one GPU each)")->required();
      app.add_option("--gpu-mem", a->gpu_memory, "GPU memory, with a unit (40GB, 80GiB)")->required();
      app.add_option("--micro-batch", a->micro_batch, "Sequences per micro-batch")->capture_default_str();
      app.add_option("--seq", a->seq_len, "Tokens per sequence (default: the model's context, at most 2048)");
      app.add_option("--grad-accum", a->grad_accum, "Micro-batches per iteration")->capture_default_str();
      app.add_flag("--recompute", a->recompute, "Full activation checkpointing");
      app.add_flag("--memory-efficient-attention", a->memory_efficient_attention,
                   "Attention without materialized scores (FlashAttention): no 5as^2b activation bytes");
      app.add_flag("--offload-checkpoints", a->offload_checkpoints,
                   "With --recompute: keep block checkpoints in host memory (DeepSpeed cpu_checkpointing)");
      app.add_option("--dtype", a->dtype, "fp16, bf16 or fp32")->capture_default_str();
      app.add_option("--prefetch-layers", a->prefetch_layers,
                     "Layers gathered ahead of the computing one (ZeRO-3, ZeRO-Infinity, LuWu)")
          ->capture_default_str();
      app.add_flag("--json", a->json, "Print JSON (an object for one system, an array for all)");
      return [a]() -> int { return run_memory(*a); };
    });

}  // namespace
